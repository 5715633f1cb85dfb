"""Garbage-collector tuning has one home (``gputui/gctuning.py``), outside the domain."""

from __future__ import annotations

import ast
import gc
from pathlib import Path

import gputui
from gputui import gctuning

PACKAGE_ROOT = Path(gputui.__file__).parent


def _imports_gc(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "gc" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "gc":
            return True
    return False


def test_only_gctuning_imports_gc() -> None:
    users = sorted(str(p.relative_to(PACKAGE_ROOT)) for p in PACKAGE_ROOT.rglob("*.py")
                   if _imports_gc(p))
    assert users == ["gctuning.py"]


def test_paused_restores_the_previous_state() -> None:
    assert gc.isenabled()
    with gctuning.paused():
        assert not gc.isenabled()
        with gctuning.paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "an inner pause must not resume an outer one"
    assert gc.isenabled()


def test_bounded_pause_does_not_resume_what_it_did_not_pause() -> None:
    pause = gctuning.BoundedPause()
    gc.disable()
    try:
        pause.begin()
        pause.end(freeze_first=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
    pause.begin()
    assert not gc.isenabled()
    pause.end_if_longer_than(3600.0)
    assert not gc.isenabled()
    pause.end_if_longer_than(-1.0)
    assert gc.isenabled()


def test_big_heap_spaces_full_collections_and_puts_them_back() -> None:
    before = gc.get_threshold()
    heap = gctuning.BigHeap(at_nodes=10)
    try:
        assert not heap.loaded(9)
        assert gc.get_threshold() == before
        assert heap.loaded(10)
        assert gc.get_threshold()[2] == max(before[2], gctuning.FULL_COLLECTION_THRESHOLD)
        assert not heap.loaded(15), "frozen again only once the cluster has doubled"
        assert heap.loaded(20)
    finally:
        heap.release()
    assert gc.get_threshold() == before
