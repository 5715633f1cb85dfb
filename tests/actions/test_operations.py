"""The operations registry, headless: ids are the audit log's, nodes are held while an
operation runs (a second plan is refused naming the holder, and a race at ``begin`` fails
closed), the end state follows who stopped it, and the header's glance of a real drain
refused by a budget moves as the eviction is retried."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from gputui.actions.base import Cancel, Plan, Progress, Result
from gputui.actions.operations import (
    NodesHeld,
    Operations,
    OpState,
    final_state,
    short_node,
    short_targets,
)
from gputui.actions.registry import action
from gputui.actions.runner import DryRun
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import budget, driver_daemonset, gpu_node, gpu_pod, snapshot_of
from tests.actions.helpers import runner_for


def _plan(*targets: str, title: str = "Drain") -> Plan:
    return Plan("drain", f"{title} {' '.join(targets)}", targets)


def test_a_running_operation_holds_its_nodes_until_it_ends() -> None:
    ops = Operations(clock=lambda: 1_700_000_000.0)
    first = ops.begin(_plan("gpu-1", "gpu-2"), DryRun(), Cancel())
    assert ops.busy_nodes() == {"gpu-1", "gpu-2"}
    refused = ops.refuse_held(Plan("cordon", "Cordon gpu-2", ("gpu-2", "gpu-3")))
    assert refused.blocked == (f"gpu-2 is held by the running operation 'Drain gpu-1 gpu-2' "
                               f"({first.id[:8]}); wait for it or stop it in :ops")
    assert ops.refuse_held(Plan("cordon", "Cordon gpu-3", ("gpu-3",))).blocked is None
    # two plans made before either started: the second begin fails closed
    with pytest.raises(NodesHeld, match="gpu-1 is held by the running operation"):
        ops.begin(_plan("gpu-1"), DryRun(), Cancel())
    assert len(ops.all()) == 1
    ops.finished(first.id, Result(True, "drained"))
    assert ops.busy_nodes() == frozenset() and ops.holder(["gpu-1"]) is None
    second = ops.begin(_plan("gpu-1"), DryRun(), Cancel())
    assert [op.id for op in ops.all()] == [second.id, first.id]  # newest first
    assert ops.get(first.id).state is OpState.DONE  # type: ignore[union-attr]


def test_ids_are_uuidv7_and_observers_see_every_change() -> None:
    seen: list[tuple[str, OpState, str | None]] = []
    ops = Operations(clock=lambda: 1_000.0, id_clock=lambda: 1_700_000_000.5)
    ops.subscribe(lambda op: seen.append((op.id, op.state, op.stopping)))
    op = ops.begin(_plan("gpu-1"), DryRun(), Cancel())
    # version 7 with the wall clock's milliseconds, as the audit log's ids; started: the app's
    assert op.id[14] == "7" and op.id.startswith("018bcfe5-69f4-") and op.started == 1_000.0
    ops.progressed(op.id, Progress("draining gpu-1: 1 pod left", 0, 1))
    assert ops.stop(op.id, "x") and op.cancel.reason == "x"
    ops.finished(op.id, Result(False, "stopped", cancelled=True, interrupted="x"))
    assert not ops.stop(op.id, "x")  # ended: nothing to stop
    assert [(state, stopping) for _, state, stopping in seen] == [
        (OpState.RUNNING, None), (OpState.RUNNING, None), (OpState.RUNNING, "x"),
        (OpState.STOPPED, "x")]


@pytest.mark.parametrize(("result", "state"), [
    (Result(True, "drained"), OpState.DONE),
    (Result(False, "not drained", error="timeout"), OpState.FAILED),
    (Result(False, "stopped", cancelled=True, interrupted="esc"), OpState.STOPPED),
    (Result(False, "stopped", cancelled=True, interrupted="x"), OpState.STOPPED),
    (Result(False, "stopped", cancelled=True, interrupted="quit"), OpState.INTERRUPTED),
    (Result(False, "stopped", cancelled=True, interrupted="SIGTERM"), OpState.INTERRUPTED),
    (Result(False, "ended", interrupted="KeyboardInterrupt"), OpState.INTERRUPTED),
])
def test_the_end_state_says_who_stopped_it(result: Result, state: OpState) -> None:
    assert final_state(result) is state


def test_short_names_keep_what_tells_nodes_of_a_pool_apart() -> None:
    assert short_node("gke-prod-h100-pool-7f3a-svxj") == "svxj"
    assert short_node("gpu-1") == "gpu-1"
    assert short_targets(("gke-prod-h100-pool-7f3a-svxj",)) == "svxj"
    assert short_targets(("a", "b", "c")) == "3 nodes" and short_targets(()) == "cluster"


def test_a_drain_refused_by_a_budget_is_glanced_with_its_tries_and_audited_by_its_id(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    """Through the real runner, writer and emulated server: the operation's id is the one
    on both audit lines, and the glance names the budget and a try count that moves."""
    driver_daemonset(server.store)
    server.store.create("nodes", gpu_node("gke-prod-h100-pool-7f3a-svxj"))
    server.store.create("pods", gpu_pod("train-0", "gke-prod-h100-pool-7f3a-svxj"))
    server.store.create("poddisruptionbudgets.policy", budget("trainer-pdb"))
    runner = runner_for(writer, tmp_path)
    drain = action("drain")
    plan = runner.plan(drain, snapshot_of(server, tmp_path), ["gke-prod-h100-pool-7f3a-svxj"],
                       {"timeout": 300})
    dry = runner.dry_run(plan)
    assert dry.ok and dry.held
    ops = Operations()
    op = ops.begin(plan, dry, Cancel(), drain)
    glances: list[str] = []
    ops.subscribe(lambda changed: glances.append(changed.glance()))
    thread = threading.Thread(target=lambda: ops.finished(op.id, runner.apply(
        drain, plan, dry, lambda p: ops.progressed(op.id, p), op.cancel, audit_id=op.id)))
    thread.start()
    deadline = time.monotonic() + 30
    while not any("try 3" in g for g in glances) and time.monotonic() < deadline:
        time.sleep(0.05)
    ops.stop(op.id, "x")
    thread.join(10)
    assert "drain svxj 0/1 evicted, 1 refused by budget trainer-pdb, try 2" in glances
    assert "drain svxj 0/1 evicted, 1 refused by budget trainer-pdb, try 3" in glances
    assert ops.get(op.id).state is OpState.STOPPED  # type: ignore[union-attr]
    lines: list[dict[str, Any]] = [json.loads(line) for line in
                                   (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [(line["id"], line["phase"]) for line in lines] == [(op.id, "intent"),
                                                                (op.id, "outcome")]
    assert lines[1]["interrupted"] == "x"
