"""Journeys 3 and 5 through ``make_app`` (Pilot): the operator's keys and the one dialog,
against the emulated cluster (demo source, real HTTP, the real writer), to the end.

3: "Roll out a new driver, canary first": ``upgrade: set driver version`` shows the roll-out
and offers the canary; ``upgrade: canary`` on the cursor's node holds the others, sets the
version (typed confirmation), watches the canary, releases the pools; every node ends
``upgrade-done`` on the new version.
5: "Repartition the A100 pool": ``mig: safe change`` on a node with a running job: pick the
config, the plan names the job, ``y``; cordon, wait for the job, apply, ``success``,
uncordon; capacity turns into MIG slices.
And a ClusterPolicy edited by someone else after the dry run: the 409 brings the dialog back
with a plan re-made from the re-read policy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gputui.actions.base import Change, Risk
from gputui.ui.screens.confirm import ConfirmScreen, ParamPrompt
from gputui.ui.screens.nodes import NodesScreen
from tests.ui.helpers import (  # noqa: F401
    CANARY,
    answer_prompt,
    demo,
    fast_polls,
    nodes_screen,
    until,
)

MIG = """summary: the A100 pool, all-disabled, one inference job that ends soon
namespace: gpu-operator
clusterPolicy:
  spec:
    mig: {strategy: mixed}
nodePools:
  - {name: a100, prefix: gke-prod-a100-pool-2b9c, count: 2, gpu: A100-80GB, gpusPerNode: 8,
     migConfig: all-disabled}
workloads:
  - {name: inference-bert, namespace: ml-serving, pool: a100, count: 1, gpus: 1,
     labels: {app: inference}, runSeconds: 30m}
"""


async def test_journey_3_canary_first_then_pool_by_pool(demo: Any, fast_polls: None,
                                                        tmp_path: Path) -> None:
    app = demo(CANARY, speed=300)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await nodes_screen(pilot, app, 4)
        await until(pilot, lambda: app.snapshot.upgrade.done == 4, timeout=60)
        # 1. the palette's "upgrade: set driver version" shows the roll-out and the canary
        app.actions.start("upgrade-driver-version", ())
        await answer_prompt(pilot, app, "580.82.07")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.risk is Risk.CLUSTER_WIDE
        assert any("every one of the 4 nodes will roll, up to 1 at a time" in line
                   for line in dialog.plan.impact)
        assert any("upgrade: canary" in line for line in dialog.plan.impact)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, NodesScreen))
        # 2. the canary on the cursor's node
        canary = min(app.snapshot.nodes)
        screen.show_node(canary)
        await until(pilot, lambda: screen.table.selected_node == canary)
        app.actions.start("upgrade-canary", (canary,))
        await answer_prompt(pilot, app, "580.82.07")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.dry_run is not None
        assert dialog.dry_run.ok, dialog.dry_run.lines
        assert dialog.plan.confirm_text == "580.82.07" and len(dialog.plan.changes) == 4
        await pilot.press(*"580.82.07", "enter")
        await until(pilot, lambda: dialog.result is not None, timeout=90)
        assert dialog.result is not None and dialog.result.ok, dialog.result
        await until(pilot, lambda: all(
            n.upgrade_state == "upgrade-done" and not n.upgrade_skip
            for n in app.snapshot.nodes.values()), timeout=30)
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    intent, outcome = audit
    assert intent["action"] == "upgrade-canary" and outcome["id"] == intent["id"]
    assert outcome["result"].startswith("ok: driver 580.82.07 rolled out")


async def test_journey_5_repartition_an_a100_node_by_the_safe_path(
        demo: Any, fast_polls: None, tmp_path: Path) -> None:
    app = demo(MIG, speed=120)
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await nodes_screen(pilot, app, 2)
        await until(pilot, lambda: any(p.phase == "Running" for n in app.snapshot.nodes.values()
                                       for p in n.gpu_pods), timeout=60)
        node = next(n.name for n in app.snapshot.nodes.values()
                    if any(p.phase == "Running" for p in n.gpu_pods))
        job = app.snapshot.nodes[node].gpu_pods[0].name
        screen.show_node(node)
        await until(pilot, lambda: screen.table.selected_node == node)
        app.actions.start("mig-config-safe", (node,))
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        prompt = app.screen
        assert isinstance(prompt, ParamPrompt) and "all-1g.10gb" in prompt.choices
        await answer_prompt(pilot, app, "all-1g.10gb")
        await answer_prompt(pilot, app, "wait")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen) and dialog.dry_run is not None
        assert dialog.plan.risk is Risk.DESTRUCTIVE
        assert any(job in step for step in dialog.plan.steps), (job, dialog.plan.steps)
        assert dialog.dry_run.ok, dialog.dry_run.lines
        await pilot.press("y")
        await until(pilot, lambda: app.snapshot.nodes[node].cordoned, timeout=30)
        await until(pilot, lambda: dialog.result is not None, timeout=60)
        assert dialog.result is not None and dialog.result.ok, dialog.result
        await until(pilot, lambda: app.snapshot.nodes[node].mig_state == "success"
                    and app.snapshot.nodes[node].mig_config == "all-1g.10gb"
                    and not app.snapshot.nodes[node].cordoned
                    and app.snapshot.nodes[node].resources.get("nvidia.com/mig-1g.10gb")
                    is not None, timeout=30)
    audit = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [entry["action"] for entry in audit if entry["phase"] == "intent"] == [
        "mig-config-safe"]


async def test_a_policy_changed_after_the_dry_run_comes_back_as_a_fresh_plan(
        demo: Any, tmp_path: Path) -> None:
    app = demo(CANARY, speed=30)
    async with app.run_test(size=(160, 48)) as pilot:
        await nodes_screen(pilot, app, 4)
        app.actions.start("upgrade-max-parallel", ())
        await answer_prompt(pilot, app, "2")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        first = app.screen
        assert isinstance(first, ConfirmScreen) and first.dry_run is not None
        assert first.dry_run.ok
        # someone else edits the ClusterPolicy between the dry run and the operator's "y"
        writer = app.runner.writer if app.runner is not None else None
        assert writer is not None
        policy = writer.get("ClusterPolicy", "cluster-policy")
        writer.patch(Change("patch", "ClusterPolicy", "cluster-policy", {"spec": {"driver": {
            "upgradePolicy": {"maxUnavailable": "75%"}}}}, "kubectl patch ...", "someone else"))
        await pilot.press("2", "enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen is not first and app.screen.dry_run is not None)
        again = app.screen
        assert isinstance(again, ConfirmScreen)
        assert first.result is not None and "409" in (first.result.error or "")
        old_rv = policy["metadata"]["resourceVersion"]
        assert again.plan.changes[0].resource_version not in (None, old_rv)
        assert any("75% of 4 nodes" in line for line in again.plan.impact)
        await pilot.press("2", "enter")
        await until(pilot, lambda: again.result is not None, timeout=30)
        assert again.result is not None and again.result.ok
        stored = writer.get("ClusterPolicy", "cluster-policy")["spec"]["driver"]["upgradePolicy"]
        assert stored["maxParallelUpgrades"] == 2 and stored["maxUnavailable"] == "75%"
