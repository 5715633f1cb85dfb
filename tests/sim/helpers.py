"""What the emulator tests share, one copy each (test modules import from here, never from
one another: ``tests/meta/test_test_imports.py``).
"""

from __future__ import annotations

from typing import Any

from gputui.sim.store import WatchEvent
from tests.sim.conftest import Sim

STATE = "nvidia.com/gpu-driver-upgrade-state"
#: upgrade states in which a node is not being upgraded
IDLE = {"", "upgrade-done", "upgrade-required"}


class UpgradeWatch:
    """Node upgrade states, cordons and trainer phases, checked at every change."""

    def __init__(self, sim: Sim):
        self.states: dict[str, str] = {}
        self.cordoned: dict[str, bool] = {}
        self.history: dict[str, list[str]] = {}
        self.log: list[tuple[str, str, str]] = []
        self.max_in_progress = 0
        self.max_unavailable = 0
        for node in sim.cluster.store.list("nodes", label_selector="nvidia.com/gpu.present=true")[0]:
            self._node(node)
        sim.cluster.store.watch("nodes", lambda e: self._node(e.obj))
        sim.cluster.store.watch("pods", self._pod)

    def _node(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if (obj["metadata"].get("labels") or {}).get("nvidia.com/gpu.present") != "true":
            return
        state = obj["metadata"]["labels"].get(STATE, "")
        if self.states.get(name) != state:
            self.history.setdefault(name, []).append(state)
            self.log.append(("node", name, state))
        self.states[name] = state
        self.cordoned[name] = bool(obj["spec"].get("unschedulable"))
        in_progress = sum(1 for s in self.states.values() if s not in IDLE)
        self.max_in_progress = max(self.max_in_progress, in_progress)
        self.max_unavailable = max(self.max_unavailable, sum(self.cordoned.values()))

    def _pod(self, event: WatchEvent) -> None:
        labels = event.obj["metadata"].get("labels") or {}
        if labels.get("app") == "trainer":
            self.log.append(("trainer", event.obj["spec"].get("nodeName") or "",
                             "Deleted" if event.type == "DELETED" else event.obj["status"].get("phase", "")))
