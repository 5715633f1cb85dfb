"""kubectl drain's rules, pure: which rule decides a pod, in kubectl's filter order."""

from __future__ import annotations

from typing import Any

import pytest

from gputui.actions.drain_rules import DrainOptions, Sorting, sort_pods
from tests.apiserver.conftest import pod


def _where(sorting: Sorting, name: str) -> str:
    for bucket in ("daemonset", "mirror", "emptydir", "unmanaged", "orphans"):
        if name in getattr(sorting, bucket):
            return bucket
    return "evict" if any(str(ref) == name for ref in sorting.evict) else "nowhere"


def _pod(phase: str = "Running", owner: tuple[str, str] | None = None,
         empty_dir: bool = False, mirror: bool = False) -> dict[str, Any]:
    made = pod("p", "gpu-1", namespace="ml", owner=owner, empty_dir=empty_dir)
    made["status"]["phase"] = phase
    if mirror:
        made["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    return made


@pytest.mark.parametrize(("made", "options", "exists", "expected"), [
    (_pod(owner=("DaemonSet", "ds")), DrainOptions(), True, "daemonset"),
    (_pod(owner=("DaemonSet", "ds")), DrainOptions(), False, "orphans"),
    (_pod(owner=("DaemonSet", "ds")), DrainOptions(force=True), False, "evict"),
    (_pod("Failed", owner=("DaemonSet", "ds")), DrainOptions(), True, "evict"),
    (_pod(mirror=True), DrainOptions(force=True, delete_emptydir=True), True, "mirror"),
    (_pod(empty_dir=True), DrainOptions(), True, "emptydir"),  # kubectl: local storage first
    (_pod(empty_dir=True), DrainOptions(delete_emptydir=True), True, "unmanaged"),
    (_pod(empty_dir=True), DrainOptions(force=True), True, "emptydir"),
    (_pod("Succeeded", empty_dir=True), DrainOptions(), True, "evict"),
    (_pod(owner=("ReplicaSet", "r"), empty_dir=True), DrainOptions(delete_emptydir=True), True,
     "evict"),
])
def test_the_first_rule_that_holds_decides(made: dict[str, Any], options: DrainOptions,
                                           exists: bool, expected: str) -> None:
    sorting = sort_pods([made], options, lambda ns, name: exists)
    assert _where(sorting, "ml/p") == expected
    assert sorting.refused is (expected in ("emptydir", "unmanaged", "orphans"))
    assert (sorting.finished == ["ml/p"]) is (made["status"]["phase"] != "Running")
