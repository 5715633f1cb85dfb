"""Pod names the emulated controllers give: real-looking, unique by construction, repeatable.

``scale-5000`` names ~40,000 pods; hashed 5-character suffixes met birthday collisions
there ("already exists" at start). The cluster is built by the operator's ``bootstrap``
straight into a store: no API server, no controller loop.
"""

from __future__ import annotations

import gc
import re
from collections import Counter

from gputui.sim.clock import SimClock
from gputui.sim.nodeside import NodeSide
from gputui.sim.operator.core import Operator
from gputui.sim.operator.hardware import numbered_suffix
from gputui.sim.scenario import load_scenario
from gputui.sim.store import Store

SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def _pod_names(scenario: str) -> list[tuple[str, str]]:
    clock = SimClock(speed=1.0)
    store = Store(clock)
    operator = Operator(store, clock, NodeSide(), load_scenario(scenario))
    # as Operator.start does: tens of thousands of fresh dicts. Kept off while the names are
    # read too: with millions of objects alive, the collector's full passes took half the time
    gc.disable()
    try:
        operator.bootstrap()
        pods, _ = store.list("pods")
        return [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
    finally:
        gc.enable()


def test_numbered_suffixes_are_distinct_and_look_random() -> None:
    suffixes = [numbered_suffix("gpu-operator/nvidia-driver-daemonset-", n)
                for n in range(60_000)]
    assert len(set(suffixes)) == len(suffixes)
    assert all(re.fullmatch(SUFFIX, s) for s in suffixes[:1000])
    assert suffixes[0] != numbered_suffix("gpu-operator/nvidia-dcgm-exporter-", 0)
    assert Counter(s[0] for s in suffixes).most_common(1)[0][1] < 60_000 / 27 * 1.2


def test_scale_5000_pod_names_are_unique_and_real_looking() -> None:
    names = _pod_names("scale-5000")
    assert len(names) > 40_000 and len(set(names)) == len(names)
    drivers = [name for _, name in names if name.startswith("nvidia-driver-daemonset-")]
    assert len(drivers) == 5000
    assert all(re.fullmatch(f"nvidia-driver-daemonset-{SUFFIX}", name) for name in drivers)


def test_names_repeat_from_run_to_run() -> None:
    assert _pod_names("healthy") == _pod_names("healthy")
