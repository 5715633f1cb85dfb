"""Actions through the app (Pilot): the confirmation dialog, read-only, denied permissions and
journey 4, against the emulated cluster over HTTP with the real source and writer."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.widgets import Button, Input

from gputui.actions.base import Change, Plan, Risk, Scope
from gputui.actions.patches import apply_patches
from gputui.actions.runner import NOTHING, DryRun
from gputui.demo import open_demo_source
from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.confirm import (
    ApplyRequested,
    ConfirmScreen,
    DryRunFinished,
    ParamPrompt,
    plan_text,
)
from gputui.ui.screens.nodes import NodesScreen
from tests.actions.conftest import gpu_pod
from tests.apiserver.conftest import seed_cluster_policy
from tests.ui.helpers import (  # noqa: F401
    LiveApp,
    cluster,
    live_app,
    quiet_for,
    ready,
    until,
)


async def test_cordon_confirmed_with_y_reaches_the_cluster_table_and_audit(
        live_app: LiveApp, cluster: EmulatedCluster, tmp_path: Path) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        node = screen.table.selected_node
        assert node == "gpu-1"
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.kubectl == ("kubectl cordon gpu-1",)
        await until(pilot, lambda: dialog.dry_run is not None)
        assert dialog.dry_run is not None and dialog.dry_run.ok
        await pilot.pause()
        assert dialog.focused is dialog.query_one("#confirm-yes", Button)  # safe action
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        assert cluster.store.get("nodes", "gpu-1", None)["spec"]["unschedulable"] is True
        await until(pilot, lambda: app.snapshot.nodes["gpu-1"].cordoned)  # via the watch
        intent, outcome = (json.loads(line) for line in
                           (tmp_path / "audit.jsonl").read_text().splitlines())
        assert intent["action"] == "cordon" and intent["targets"] == ["gpu-1"]
        assert outcome["id"] == intent["id"]
        assert outcome["result"].startswith("ok: cordoned gpu-1")


@pytest.mark.parametrize("key", ["n", "escape"])
async def test_cancel_changes_nothing(live_app: LiveApp, cluster: EmulatedCluster,
                                      request_log: list[tuple[str, str]],
                                      tmp_path: Path, key: str) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        await until(pilot, lambda: getattr(dialog, "dry_run", None) is not None)
        await pilot.press(key)
        await until(pilot, lambda: isinstance(app.screen, NodesScreen))
        await quiet_for(pilot, 0.2)  # a write the cancel let through would be sent now
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-1", None)["spec"]
    assert (tmp_path / "audit.jsonl").read_text() == ""  # checked at start, nothing applied
    patches = [path for method, path in request_log if method == "PATCH"]
    assert patches == ["/api/v1/nodes/gpu-1"]  # the dry run only (dryRun=All)


async def test_marked_nodes_are_the_targets(live_app: LiveApp, cluster: EmulatedCluster) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        await pilot.press("space", "down", "down", "space")
        assert screen.table.marks == {"gpu-1", "gpu-3"}
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.targets == ("gpu-1", "gpu-3")
        await until(pilot, lambda: dialog.dry_run is not None)
        await pilot.press("y")
        await until(pilot, lambda: app.snapshot.nodes["gpu-3"].cordoned)
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-2", None)["spec"]


async def test_drain_prompts_then_opens_on_cancel_and_reports_the_budget(
        live_app: LiveApp, cluster: EmulatedCluster) -> None:
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        await pilot.press("enter")  # skip DaemonSet pods only
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                    and app.screen.spec.name == "timeout")
        prompt = app.screen
        prompt.query_one(Input).value = "soon"
        await pilot.press("enter")
        assert isinstance(app.screen, ParamPrompt)  # refused: not a number
        prompt.query_one(Input).value = "1"
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.risk is Risk.DESTRUCTIVE
        assert dialog.focused is dialog.query_one("#confirm-no", Button)
        await until(pilot, lambda: dialog.dry_run is not None)
        assert dialog.dry_run is not None and any(
            "trainer-pdb" in line for line in dialog.dry_run.lines)
        # "passed" must not read as "the pods will go": the budget's refusal is on the line
        assert len(dialog.dry_run.held) == 1 and "refused now" in dialog.dry_run.summary()
        assert "refused now by a budget" in str(dialog._status_text())
        await pilot.press("y")
        await until(pilot, lambda: dialog.result is not None, timeout=20)
        assert dialog.result is not None and not dialog.result.ok
        assert any("not drained" in n and "refused by PodDisruptionBudget trainer-pdb" in n
                   and "gpu-1 stays cordoned" in n for n in notes)
        await pilot.press("escape")  # the dialog stayed to offer u: esc closes it
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    assert cluster.store.get("pods", "train-0", "ml") is not None


async def test_typed_confirmation_for_cluster_wide_plans(frozen_app: Any) -> None:
    app = frozen_app("upgrade-rolling")
    plan = Plan("driver_version", "Set the driver version to 570.86.15", (),
                (Change("patch", "ClusterPolicy", "cluster-policy",
                        {"spec": {"driver": {"version": "570.86.15"}}}, "kubectl patch ...",
                        "driver.version: 550.54.15 -> 570.86.15"),),
                risk=Risk.CLUSTER_WIDE, confirm_text="570.86.15")
    seen: list[Message] = []
    async with app.run_test(size=(120, 40), message_hook=seen.append) as pilot:
        dialog = ConfirmScreen(plan)
        await app.push_screen(dialog)
        await pilot.pause()
        typed = dialog.query_one("#confirm-typed", Input)
        assert dialog.focused is typed
        dialog.post_message(DryRunFinished(DryRun(("accepted",), checked=1, total=1)))
        await pilot.pause()
        await pilot.press("enter")
        assert not any(isinstance(m, ApplyRequested) for m in seen)
        await pilot.press(*"570.86.1")
        await pilot.press("enter")
        assert not any(isinstance(m, ApplyRequested) for m in seen)
        await pilot.press("5", "enter")
        await pilot.pause()
        assert any(isinstance(m, ApplyRequested) for m in seen)
        app.workers.cancel_all()


async def test_refused_dry_run_cannot_be_confirmed(live_app: LiveApp,
                                                   cluster: EmulatedCluster,
                                                   tmp_path: Path) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        cluster.set_deny("patch:nodes")  # after the up-front check: the dry run meets it
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await until(pilot, lambda: dialog.dry_run is not None)
        assert dialog.dry_run is not None and not dialog.dry_run.ok
        assert dialog.query_one("#confirm-yes", Button).disabled
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("y")  # answered with why not, and nothing else
        await until(pilot, lambda: "the server refused the dry run: nothing can be applied"
                    in notes, why=lambda: notes)
        assert app.screen is dialog and not dialog.applying
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-1", None)["spec"]


async def test_denied_action_is_greyed_with_the_reason(live_app: LiveApp,
                                                       cluster: EmulatedCluster) -> None:
    cluster.set_deny("create:pods/eviction")
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await until(pilot, lambda: "drain" in screen.blocked_actions)
        # action keys are bound on the app (each acts on the view's selection): it greys them
        assert app.check_action("act", ("drain",)) is None
        assert app.check_action("act", ("cordon",)) is True
        await pilot.press("r")  # a greyed key answers with the reason, opens nothing
        await until(pilot, lambda: len(notes) == 1)
        assert isinstance(app.screen, NodesScreen)
        assert notes[0].startswith("Drain is not available: denied: create pods/eviction")
        app.actions.start("drain", ["gpu-1"])  # what the palette and ":drain" call
        await until(pilot, lambda: len(notes) == 2)
        assert isinstance(app.screen, NodesScreen)
        assert notes[-1] == notes[0]


async def test_denied_cordon_key_says_why_and_sends_nothing(
        live_app: LiveApp, cluster: EmulatedCluster,
        request_log: list[tuple[str, str]]) -> None:
    """``c`` under ``--deny patch:nodes`` (issue 18, 10c): the notification names the
    denial at once; no write (not even a dry run) reaches the server."""
    cluster.set_deny("patch:nodes")
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        await until(pilot, lambda: "cordon" in screen.blocked_actions)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        sent = len(request_log)
        await pilot.press("c")
        await until(pilot, lambda: len(notes) == 1)
        assert notes[0].startswith("Cordon is not available: denied: patch nodes")
        assert isinstance(app.screen, NodesScreen)
        await quiet_for(pilot, 0.3)  # a write (or dry run) the refusal let through: sent now
        later = request_log[sent:]
        assert not [(m, p) for m, p in later if m != "GET"], later
        assert not [p for _, p in later if "/nodes/gpu-1" in p], later
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-1", None)["spec"]


async def test_read_only_greys_actions_and_sends_only_gets(
        live_app: LiveApp, cluster: EmulatedCluster,
        request_log: list[tuple[str, str]]) -> None:
    app = live_app(read_only=True)
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        for key, title in (("c", "Cordon"), ("u", "Uncordon"), ("r", "Drain")):
            before = len(notes)
            await pilot.press(key)  # answered at once with the reason, never silence
            await until(pilot, lambda want=before + 1: len(notes) == want)
            assert notes[-1] == (f"{title} is not available: read-only mode (--read-only): "
                                 "gputui sends no writes")
            assert isinstance(app.screen, NodesScreen)
        assert app.check_action("act", ("cordon",)) is None  # the footer still greys it
        for action_id in ("cordon", "drain", "operands_off"):
            before = len(notes)
            app.actions.start(action_id, ["gpu-1"])
            await until(pilot, lambda want=before + 1: len(notes) == want)
            assert isinstance(app.screen, NodesScreen)
        assert len(notes) == 6 and all("read-only mode" in n for n in notes)
        await quiet_for(pilot, 0.3)  # a write the refusals let through would be sent now
    assert request_log and {method for method, _ in request_log} == {"GET"}
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-1", None)["spec"]


async def test_journey_4_xid_node_cordoned_and_drained_budget_refusal_reported(
        tmp_path: Path) -> None:
    """JOURNEYS.md 4: the XID node is cordoned (c, y) then drained (r): DaemonSet pods
    stay, the budget-protected trainer is reported refused, never forced."""
    settings = Settings(demo=True, scenario="xid-storm", speed=30.0,
                        audit_log=str(tmp_path / "audit.jsonl"))
    source = open_demo_source(settings)
    writer = writer_for_source(source, read_only=False)
    assert writer is not None
    app = make_app(settings, session_of(settings, source, clock=source.clock, writer=writer))
    app.min_snapshot_interval = 0.0
    notes: list[str] = []

    def xid_node() -> str | None:
        """The node whose GPU threw XID 79 (the scenario puts it under a running trainer)."""
        return next((f.node for f in app.snapshot.findings
                     if f.code == "xid-error" and "XID 79" in f.message), None)

    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await until(pilot, lambda: xid_node() is not None
                        and app.runner is not None and not app.runner.permissions.pending,
                        timeout=60)
            node = xid_node()
            assert node is not None
            screen = app.screen
            assert isinstance(screen, NodesScreen)
            screen.show_node(node)
            await until(pilot, lambda: screen.table.selected_node == node)
            app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
            trainers = [p for p in app.snapshot.nodes[node].gpu_pods]
            assert trainers, "the XID node runs a trainer"
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                        and app.screen.dry_run is not None)
            await pilot.press("y")
            await until(pilot, lambda: app.snapshot.nodes[node].cordoned, timeout=30)
            await pilot.press("r")
            await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                        and app.screen.spec.name == "timeout")
            # the budget refuses for ever, so the drain lasts its whole timeout: short, but
            # long enough for a first eviction to be sent and refused on a loaded machine
            app.screen.query_one(Input).value = "8"
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                        and app.screen.dry_run is not None)
            dialog = app.screen
            assert isinstance(dialog, ConfirmScreen)
            assert any(trainers[0].name in line and "PodDisruptionBudget" in line
                       for line in dialog.dry_run.lines)  # type: ignore[union-attr]
            await pilot.press("y")
            await until(pilot, lambda: dialog.result is not None, timeout=30)
            result = dialog.result
            assert result is not None and not result.ok and not result.cancelled
            assert result.error is not None and "refused by PodDisruptionBudget" in result.error
            assert "DaemonSet or mirror pods skipped" in result.summary
            assert any("not drained" in n for n in notes)
            left = {p["metadata"]["name"] for p in writer.list_pods_on_node(node)}
            assert trainers[0].name in left  # refused, never deleted
            assert any(name.startswith("nvidia-") for name in left)  # DaemonSet pods stay
        audit = [json.loads(line) for line in
                 (tmp_path / "audit.jsonl").read_text().splitlines()]
        assert [entry["action"] for entry in audit if entry["phase"] == "intent"] == [
            "cordon", "drain"]
    finally:
        writer.close()


class _AnnotatePolicy:
    """A test action with a resourceVersion precondition (part 2's ClusterPolicy writes
    carry one): its first plan uses a stale one and meets the server's 409, later plans
    read the current one (as a re-plan from a newer snapshot would)."""

    id = "test_annotate_policy"
    title = "Annotate the ClusterPolicy"
    tooltip = "test only"
    keys = ""
    aliases: tuple[str, ...] = ()
    scope = Scope.CLUSTER
    risk = Risk.SAFE
    permissions: tuple[Any, ...] = ()
    params: tuple[Any, ...] = ()

    def __init__(self, current: Callable[[], str]) -> None:
        self.current = current
        self.plans = 0

    def plan(self, snapshot: Any, targets: Any, params: Any) -> Plan:
        self.plans += 1
        rv = "1" if self.plans == 1 else self.current()
        return Plan(self.id, self.title, (), (Change(
            "patch", "ClusterPolicy", "cluster-policy",
            {"metadata": {"annotations": {"example.com/touched": "yes"}}},
            "kubectl annotate clusterpolicy cluster-policy example.com/touched=yes",
            "annotation example.com/touched: (unset) -> yes", resource_version=rv),))

    def apply(self, plan: Plan, writer: Any, progress: Any, cancel: Any) -> Any:
        return apply_patches(plan, writer, progress, cancel, "annotated")


async def test_a_409_re_plans_and_asks_again(live_app: LiveApp, cluster: EmulatedCluster) -> None:
    seed_cluster_policy(cluster.store)
    act = _AnnotatePolicy(lambda: cluster.store.get(
        "clusterpolicies.nvidia.com", "cluster-policy", None)["metadata"]["resourceVersion"])
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        app.actions.plan_in_worker(act, ())  # type: ignore[arg-type]
        await until(pilot, lambda: act.plans == 2 and isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.warnings[0].startswith("re-planned: the cluster changed")
        assert dialog.dry_run is not None and dialog.dry_run.ok
        assert any("changed since the plan (409)" in n for n in notes)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    stored = cluster.store.get("clusterpolicies.nvidia.com", "cluster-policy", None)
    assert stored["metadata"]["annotations"]["example.com/touched"] == "yes"


async def test_label_action_from_the_command_line_with_pick_lists(
        live_app: LiveApp, cluster: EmulatedCluster) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        await pilot.press("colon", *"deploy", "enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        assert app.screen.choices[5] == "dcgm-exporter"
        await pilot.press(*["down"] * 5, "enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                    and app.screen.spec.name == "value")
        await pilot.press("enter")  # false
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        assert dialog.plan.kubectl == (
            "kubectl label node gpu-1 nvidia.com/gpu.deploy.dcgm-exporter=false --overwrite",)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        labels = cluster.store.get("nodes", "gpu-1", None)["metadata"]["labels"]
        assert labels["nvidia.com/gpu.deploy.dcgm-exporter"] == "false"
        await pilot.press("colon", *"deploy", "enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        await pilot.press(*["down"] * 5, "enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                    and app.screen.spec.name == "value")
        await pilot.press("down", "down", "enter")  # (unset): remove the label
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    labels = cluster.store.get("nodes", "gpu-1", None)["metadata"]["labels"]
    assert "nvidia.com/gpu.deploy.dcgm-exporter" not in labels


async def test_escape_stops_a_running_drain_and_says_what_was_evicted(
        live_app: LiveApp, cluster: EmulatedCluster) -> None:
    cluster.store.create("pods", gpu_pod("infer-0", "gpu-1", owner=("ReplicaSet", "infer"),
                                         labels={"app": "infer"}, gpus=1))
    app = live_app()
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot, app)
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                    and app.screen.spec.name == "timeout")
        await pilot.press("enter")  # the default, 300 s
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen.dry_run is not None)
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await pilot.press("y")
        progress = dialog.query_one("#confirm-progress")
        await until(pilot, lambda: "blocked: ml/train-0: refused by PodDisruptionBudget "
                    "trainer-pdb" in str(progress.render()))
        assert "1 pod left" in str(progress.render())
        await pilot.press("escape")
        await until(pilot, lambda: dialog.result is not None)
        assert dialog.result is not None and dialog.result.cancelled
        assert any(n.startswith("drain of gpu-1 stopped: evicted ml/infer-0; 1 pod left")
                   for n in notes)
    assert cluster.store.get("pods", "train-0", "ml") is not None
    assert cluster.store.get("pods", "infer-0", "ml") is None


async def test_an_action_while_the_lists_are_still_read_is_refused_and_says_why(
        live_app: LiveApp, cluster: EmulatedCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The node rows show before the pods are read; a plan made then would state guesses
    ("nothing to evict") as facts. The key says so and does nothing; once the lists are in,
    the same key plans."""
    from tests.sources.helpers import hold_operand_pods

    release = hold_operand_pods(monkeypatch)
    app = live_app()
    notes: list[str] = []
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: len(app.snapshot.nodes) == 3 and app.runner is not None
                        and not app.runner.permissions.pending)
            assert "pods" in app.snapshot.loading
            app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
            screen = app.screen
            assert isinstance(screen, NodesScreen)
            await until(pilot, lambda: screen.table.row_count == 3)
            screen.table.focus()
            await pilot.press("c")
            await until(pilot, lambda: any("not available yet: still reading" in n
                                           and "pods" in n for n in notes), why=lambda: notes)
            assert not isinstance(app.screen, ConfirmScreen)
            release.set()
            await until(pilot, lambda: not app.snapshot.loading)
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    finally:
        release.set()


async def _drain_prompts(pilot: Any, app: GpuTuiApp, option: int) -> None:
    """Answer the drain's two prompts: the ``option``-th option set, then 5 seconds."""
    await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                and app.screen.spec.name == "options")
    for _ in range(option):
        await pilot.press("down")
    await pilot.press("enter")
    await until(pilot, lambda: isinstance(app.screen, ParamPrompt)
                and app.screen.spec.name == "timeout")
    app.screen.query_one(Input).value = "5"
    await pilot.press("enter")


async def test_a_refused_emptydir_pod_is_shown_before_y_and_o_offers_the_option(
        live_app: LiveApp, cluster: EmulatedCluster) -> None:
    """The dialog names the pod the default options refuse and the option that allows it,
    says the drain would cordon and stop; ``o`` asks the options again and the new plan
    evicts the pod (and the trainer), all before anything is sent."""
    cluster.store.create("pods", gpu_pod("scratch-0", "gpu-1", owner=("StatefulSet", "s"),
                                         empty_dir=True, labels={"app": "scratch"}))
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot, app)
        await pilot.press("r")
        await _drain_prompts(pilot, app, 0)
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await until(pilot, lambda: dialog.dry_run is not None)
        shown = str(plan_text(dialog.plan))
        assert "refused ml/scratch-0: emptyDir; allowed by --delete-emptydir-data" in shown
        assert "the drain will cordon gpu-1 and then stop" in shown
        status = str(dialog._status_text())
        assert "the drain will cordon and then stop (1 pod refused)" in status
        assert "o: other options" in status
        assert not [c for c in dialog.plan.changes if c.verb == "create"]
        await pilot.press("o")
        await _drain_prompts(pilot, app, 1)  # also delete emptyDir data
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                    and app.screen is not dialog)
        again = app.screen
        assert isinstance(again, ConfirmScreen)
        assert again.plan.params["options"] == "also delete emptyDir data"
        assert {c.name for c in again.plan.changes if c.verb == "create"} == {
            "scratch-0", "train-0"}
        await until(pilot, lambda: again.dry_run is not None)
        assert "will cordon and then stop" not in str(again._status_text())
        await pilot.press("n")
    assert "unschedulable" not in cluster.store.get("nodes", "gpu-1", None)["spec"]
    assert cluster.store.get("pods", "scratch-0", "ml") is not None


async def test_a_plan_with_nothing_to_change_offers_no_confirm(frozen_app: Any) -> None:
    app = frozen_app("upgrade-rolling")
    seen: list[Message] = []
    async with app.run_test(size=(80, 24), message_hook=seen.append) as pilot:
        dialog = ConfirmScreen(Plan("cordon", "Cordon nothing", ("gpu-1",)))
        await app.push_screen(dialog)
        await pilot.pause()
        dialog.post_message(DryRunFinished(NOTHING))
        await pilot.pause()
        assert str(dialog._status_text()).startswith("Nothing to change: ")
        assert "passed" not in str(dialog._status_text())
        assert dialog.query_one("#confirm-yes", Button).disabled
        await pilot.press("y")
        await pilot.pause()
        assert not any(isinstance(m, ApplyRequested) for m in seen)
        app.workers.cancel_all()


async def test_a_drain_of_many_pods_stays_readable_at_80x24(frozen_app: Any) -> None:
    """60 pods: one compact line each in a body that scrolls to the last one, while the
    status line and the buttons stay on screen."""
    app = frozen_app("upgrade-rolling")
    pods = [f"  evict ml/worker-{i:02d}" for i in range(60)]
    plan = Plan("drain", "Drain gpu-1", ("gpu-1",), impact=(
        "gpu-1: 60 pods (listed from the server): 60 evicted, 0 skipped, 0 refused", *pods))
    async with app.run_test(size=(80, 24)) as pilot:
        dialog = ConfirmScreen(plan)
        await app.push_screen(dialog)
        await pilot.pause()
        dialog.post_message(DryRunFinished(DryRun(("accepted",), checked=1, total=1)))
        await pilot.pause()
        shown = str(plan_text(dialog.plan))
        assert all(line.strip() in shown for line in pods) and "more" not in shown
        body = dialog.query_one("#confirm-body")
        assert body.max_scroll_y > 0
        body.scroll_end(animate=False)
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y
        for part in ("#confirm-status", "#confirm-yes", "#confirm-no"):
            region = dialog.query_one(part).region
            assert region.height and region.bottom <= 24 and region.right <= 80, part
        app.workers.cancel_all()
