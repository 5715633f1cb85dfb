"""Benchmark: what cleaning cluster text (:mod:`gputui.domain.sanitize`) costs where it runs.

Times, each over ``--rounds`` runs (min / median / max, the machine may be shared):

* ``clean_line`` and ``clean_text`` per string: clean label values, a clean 200-character
  message, and dirty strings (an OSC 2 title attack, a bidi override, a C1 CSI);
* ``clean_tree`` per object: a recorded H100 node and a crash-looping driver pod as the
  node and pod decoders shape them (clean: nothing to change), and the same node with one
  hostile annotation;
* one list page of 500 nodes (and one of 500 operand pods) decoded by the feed's decoder:
  with cleaning, with one hostile object among the 500, and with ``clean_objects`` swapped
  for the identity: the cost on the 5,000-node load path; and the two checks that spare
  the walk: ``json_is_clean`` on the page's bytes (first), ``clean_objects`` on its
  decoded objects (for a page that check does not pass).

Asserts nothing (tests never time anything).

    python benchmarks/bench_sanitize.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import msgspec

from gputui.domain.sanitize import clean_line, clean_text, clean_tree
from gputui.domain.sanitize_json import json_is_clean
from gputui.sources import decode

FIXTURES = REPO / "tests" / "domain" / "fixtures"


def _per_call(function: Callable[[], Any], calls: int, rounds: int) -> list[float]:
    """Nanoseconds per call, one figure per round."""
    figures = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        for _ in range(calls):
            function()
        figures.append((time.perf_counter_ns() - started) / calls)
    return figures


def _row(name: str, figures: list[float], unit: str = "ns") -> None:
    print(f"{name:<52} {min(figures):>10.0f} {statistics.median(figures):>10.0f} "
          f"{max(figures):>10.0f} {unit}")


def strings(rounds: int) -> None:
    cases = {
        "clean_line  label value (clean)": (clean_line, "NVIDIA-H100-80GB-HBM3"),
        "clean_line  200-char message (clean)": (clean_line, "container driver " * 12),
        "clean_text  message with newlines (clean)": (clean_text, "line one\nline two\n" * 5),
        "clean_line  OSC 2 title attack (dirty)": (clean_line, "log \x1b]2;PWNED\x1b\\ end"),
        "clean_line  bidi override (dirty)": (clean_line, "user\u202eexe.txt"),
        "clean_line  C1 CSI 200 chars (dirty)": (clean_line, "x" * 196 + "\x9b2J"),
    }
    for name, (function, text) in cases.items():
        _row(name, _per_call(lambda f=function, t=text: f(t), 20000, rounds))


def _shaped(feed: decode.FeedDecoder[Any], fixture: str) -> dict[str, Any]:
    return feed.shaped(json.loads((FIXTURES / fixture).read_text()))


def trees(rounds: int) -> None:
    node = _shaped(decode.NODES, "node-h100.json")
    pod = _shaped(decode.OPERATOR_PODS, "pod-driver-init-crashloop.json")
    hostile = copy.deepcopy(node)
    hostile["metadata"].setdefault("annotations", {})["note"] = "\x1b]2;PWNED\x07"
    print(f"(node: {len(node['metadata'].get('labels', {}))} labels, "
          f"{len(node['metadata'].get('annotations', {}))} annotations)")
    for name, obj in (("clean_tree  node (clean)", node), ("clean_tree  driver pod (clean)", pod),
                      ("clean_tree  node, one hostile annotation", hostile)):
        _row(name, _per_call(lambda o=obj: clean_tree(o), 5000, rounds))


def _page(fixture: str, count: int, hostile: bool = False) -> bytes:
    """A list page of ``count`` copies of a recorded object, one made hostile if asked."""
    obj = json.loads((FIXTURES / fixture).read_text())
    items = []
    for index in range(count):
        item = copy.deepcopy(obj)
        item["metadata"]["name"] = f"{obj['metadata']['name']}-{index:05d}"
        items.append(item)
    if hostile:
        items[count // 2]["metadata"].setdefault("labels", {})["note"] = "\x1b]2;PWNED\x07"
    return json.dumps({"kind": "List", "apiVersion": "v1",
                       "metadata": {"resourceVersion": "1"}, "items": items}).encode()


def page(rounds: int, feed: decode.FeedDecoder[Any], fixture: str) -> None:
    """A feed's page decode with and without cleaning, interleaved round by round so a
    busy machine weighs on both alike."""
    data, dirty = _page(fixture, 500), _page(fixture, 500, hostile=True)
    kind = fixture.split("-")[0]
    print(f"({kind} page: 500 x {fixture}, {len(data) / 1e6:.1f} MB)")
    original = decode.clean_objects
    figures: dict[str, list[float]] = {"cleaning": [], "one hostile": [], "no cleaning": []}
    for _ in range(rounds):
        figures["cleaning"] += _per_call(lambda: feed.page(data), 5, 1)
        figures["one hostile"] += _per_call(lambda: feed.page(dirty), 5, 1)
        decode.clean_objects = lambda objects: objects
        try:
            figures["no cleaning"] += _per_call(lambda: feed.page(data), 5, 1)
        finally:
            decode.clean_objects = original
    for name, values in figures.items():
        _row(f"decode 500-{kind} page, {name}", [f / 1e6 for f in values], "ms")
    _row(f"json_is_clean alone, 500-{kind} page bytes",
         [f / 1e3 for f in _per_call(lambda: json_is_clean(data), 20, rounds)], "us")
    items = msgspec.json.decode(data, type=decode.ListPage[feed.shape])["items"]
    _row(f"clean_objects alone, 500-{kind} page (clean)",
         [f / 1e6 for f in _per_call(lambda: decode.clean_objects(items), 20, rounds)], "ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    rounds = parser.parse_args().rounds
    print(f"{'':<52} {'min':>10} {'median':>10} {'max':>10}")
    strings(rounds)
    trees(rounds)
    page(rounds, decode.NODES, "node-h100.json")
    page(rounds, decode.OPERATOR_PODS, "pod-driver-init-crashloop.json")


if __name__ == "__main__":
    main()
