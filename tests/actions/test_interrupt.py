"""A stopped action sends nothing more, and a hung API server cannot hold a drain or escape.

Through the real client against the emulated server: ``latency:30000~eviction`` makes every
eviction wait 30 s (the writer's own read timeout), as a hung API server does. Escape must act
within 2 s, nothing may be sent after it, and a drain with timeout T ends within T + 10 s.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Cancel, Progress, Result, WriteError
from gputui.actions.drain_rules import PodRef
from gputui.actions.drain_run import EvictionLoop
from gputui.actions.guard import GuardedWriter, TimeUp, WriteInterrupted
from gputui.actions.registry import action
from gputui.actions.runner import DryRun, Runner
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import driver_daemonset, gpu_node, gpu_pod, snapshot_of
from tests.actions.helpers import runner_for
from tests.helpers import poll

HUNG = "latency:30000~/eviction"


def _seed(cluster: EmulatedCluster, pods: int = 3) -> None:
    driver_daemonset(cluster.store)
    cluster.store.create("nodes", gpu_node("gpu-1"))
    for index in range(pods):
        cluster.store.create("pods", gpu_pod(f"train-{index}", "gpu-1"))


def _evictions(log: list[tuple[str, str]]) -> int:
    """Evictions the server received (dry runs included: each is a request that landed)."""
    return sum(1 for method, path in log if method == "POST" and path.endswith("/eviction"))


class _Apply:
    """``runner.apply`` of a drain in its own thread, as the app runs it."""

    def __init__(self, server: EmulatedCluster, writer: KubeWriter, tmp_path: Path,
                 timeout: float, fault: str, log: list[tuple[str, str]] | None = None) -> None:
        self.runner: Runner = runner_for(writer, tmp_path)
        self.plan = self.runner.plan(action("drain"), snapshot_of(server, tmp_path),
                                     ["gpu-1"], {"timeout": timeout})
        self.dry: DryRun = self.runner.dry_run(self.plan)
        assert self.dry.ok
        server.inject(fault)
        self.cancel = Cancel()
        self.result: Result | None = None
        #: evictions the server had before the apply (the dry run's)
        self.before = _evictions(log or [])
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        seen: list[Progress] = []
        self.result = self.runner.apply(action("drain"), self.plan, self.dry, seen.append,
                                        self.cancel)

    def ended_within(self, seconds: float) -> bool:
        self.thread.join(seconds)
        return not self.thread.is_alive()


def _audit(tmp_path: Path) -> dict[str, Any]:
    lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    return dict(json.loads(lines[-1]))


def audit_says_interrupted(entry: dict[str, Any], by: str) -> bool:
    """The audit outcome line says the action was interrupted, and by what."""
    return entry["phase"] == "outcome" and entry["interrupted"] == by \
        and str(entry["result"]).startswith("cancelled: ")


@pytest.mark.parametrize("reason", ["esc", "SIGTERM", "SIGHUP", "quit"])
def test_a_stop_while_an_eviction_hangs_acts_within_2_s_and_sends_nothing_more(
        server: EmulatedCluster, writer: KubeWriter, request_log: list[tuple[str, str]],
        tmp_path: Path, reason: str) -> None:
    _seed(server)
    run = _Apply(server, writer, tmp_path, timeout=300, fault=HUNG, log=request_log)
    assert poll(lambda: _evictions(request_log) > run.before), request_log
    run.cancel.stop(reason)
    sent_at_stop = _evictions(request_log)
    assert run.ended_within(2.0), "the stop was not acted on within 2 s"
    result = run.result
    assert result is not None and result.cancelled and not result.ok, result
    assert result.interrupted == reason
    time.sleep(0.5)  # what a leftover thread would send comes now or never
    assert _evictions(request_log) == sent_at_stop, request_log
    outcome = _audit(tmp_path)
    assert audit_says_interrupted(outcome, reason)
    # the eviction left hanging may still land: the outcome keeps it, marked as such
    hanging = [d for d in outcome["done"] if d.get("subresource") == "eviction"]
    assert hanging and all("unconfirmed" in d for d in hanging), outcome["done"]
    assert server.store.get("pods", "train-1", "ml") is not None


def test_a_drain_against_a_hung_server_ends_within_its_timeout_plus_10_s(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    started = time.monotonic()
    run = _Apply(server, writer, tmp_path, timeout=3, fault=HUNG)
    assert run.ended_within(3 + 10 - (time.monotonic() - started) + 2.0)
    result = run.result
    assert result is not None and not result.ok and not result.cancelled, result
    assert result.interrupted is None
    assert "not drained" in result.summary


def test_a_drain_whose_cordon_hangs_ends_within_its_timeout_plus_10_s(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    _seed(server)
    run = _Apply(server, writer, tmp_path, timeout=2, fault="latency:30000~/nodes/gpu-1")
    assert run.ended_within(2 + 10)
    assert run.result is not None and not run.result.ok, run.result


def test_nothing_is_sent_once_the_cancel_is_set(
        server: EmulatedCluster, writer: KubeWriter, request_log: list[tuple[str, str]],
        tmp_path: Path) -> None:
    _seed(server)
    cancel = Cancel()
    cancel.stop("SIGHUP")
    guarded = GuardedWriter(writer, cancel)
    seen = len(request_log)
    with pytest.raises(WriteInterrupted) as raised:
        guarded.evict("ml", "train-0")
    assert raised.value.interrupted == "SIGHUP"
    assert len(request_log) == seen  # not even a connection
    runner = runner_for(writer, tmp_path)
    plan = runner.plan(action("drain"), snapshot_of(server, tmp_path), ["gpu-1"], {})
    dry = runner.dry_run(plan)
    seen = len(request_log)
    result = runner.apply(action("drain"), plan, dry, lambda _: None, cancel)
    assert result.cancelled and result.interrupted == "SIGHUP", result
    assert len(request_log) == seen  # the cordon was not sent either
    assert not server.store.get("nodes", "gpu-1", None)["spec"].get("unschedulable")


def test_a_send_after_the_time_allowed_says_so_and_blames_no_server(
        server: EmulatedCluster, writer: KubeWriter, request_log: list[tuple[str, str]]) -> None:
    """A drain's timeout spent before a request (a loaded machine) is gputui's own limit:
    the request is not sent, and the reason does not say the server could not be reached."""
    _seed(server)
    guarded = GuardedWriter(writer, Cancel())
    guarded.deadline = time.monotonic() - 0.1
    seen = len(request_log)
    with pytest.raises(WriteError) as raised:
        guarded.evict("ml", "train-0")
    assert raised.value.reason == "the time allowed is up: eviction of ml/train-0 not sent"
    assert len(request_log) == seen


class _BudgetThenTimeUp:
    """A writer whose first eviction of each pod a budget refuses (429), and whose every
    later request finds the time allowed already up (what a loaded machine does to a
    drain's last round)."""

    def __init__(self, refuse: set[str]) -> None:
        self.refuse = refuse
        self.sent: list[str] = []

    def evict(self, namespace: str, pod: str, *, dry_run: bool = False) -> None:
        if pod not in self.refuse:
            raise TimeUp(f"eviction of {namespace}/{pod}")
        self.refuse.discard(pod)
        self.sent.append(pod)
        raise WriteError(429, "Cannot evict pod as it would violate the pod's disruption "
                              "budget.", budget="trainer-pdb")

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        raise TimeUp(f"read of {kind} {name}")


def test_a_drain_out_of_time_mid_round_keeps_each_pods_last_answer() -> None:
    """The time ran out before the second round's evictions were sent: the trainer is
    reported refused by its budget (what the server last said), not "failed" because the
    clock ran out, and a pod whose eviction was never sent is not reported evicted."""
    writer = _BudgetThenTimeUp({"train-0"})
    loop = EvictionLoop(writer, [PodRef("ml", "train-0"), PodRef("ml", "train-1")],  # type: ignore[arg-type]
                        lambda _: None, threading.Event(), timeout=30.0, label="gpu-1")
    loop._round()
    loop._round()
    result = loop._result()
    assert writer.sent == ["train-0"]
    assert not result.ok
    assert result.error == "ml/train-0: refused by PodDisruptionBudget trainer-pdb (1 try)"
    assert result.details == (
        "ml/train-0: refused by PodDisruptionBudget trainer-pdb (1 try)",
        "ml/train-1: not evicted: its eviction was never sent")
