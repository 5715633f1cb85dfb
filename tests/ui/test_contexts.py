"""``:ctx`` over two emulated clusters on loopback: list, switch and back without a restart,
``read_only_contexts`` sending no write, and the audit log naming the context acted in.

The kubeconfig has three contexts: ``lab-a`` (cluster A), ``prod-b`` and ``lab-b`` (both
cluster B); ``read_only_contexts: ["prod-*"]`` makes ``prod-b`` read-only.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.contexts import is_read_only
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.confirm import ConfirmScreen
from gputui.ui.screens.contexts import ContextsScreen
from gputui.ui.screens.nodes import NodesScreen
from tests.actions.conftest import gpu_node
from tests.conftest import hook_server_requests
from tests.ui.helpers import header_text, quiet_for, until

#: (host:port, method, path) of every request either emulated server receives
Sent = list[tuple[str, str, str]]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    """Every request, with the server it went to (request before the clusters)."""
    seen: Sent = []

    def hook(request: web.Request) -> None:
        seen.append((request.host, request.method, request.path))

    hook_server_requests(monkeypatch, hook)
    return seen


@pytest.fixture
def clusters(sent: Sent) -> Iterator[tuple[EmulatedCluster, EmulatedCluster]]:
    """Cluster A with nodes a-1, a-2; cluster B with b-1, b-2, b-3."""
    made = []
    try:
        for prefix, count in (("a", 2), ("b", 3)):
            cluster = EmulatedCluster(run_controllers=False).start()
            made.append(cluster)
            for index in range(1, count + 1):
                cluster.store.create("nodes", gpu_node(f"{prefix}-{index}"))
        yield made[0], made[1]
    finally:
        for cluster in made:
            cluster.stop()


def two_cluster_kubeconfig(path: Path, a: EmulatedCluster, b: EmulatedCluster) -> Path:
    """lab-a -> A; prod-b and lab-b -> B (the emulator's demo token for both)."""
    document: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config", "current-context": "lab-a",
        "clusters": [{"name": "a", "cluster": {"server": a.url}},
                     {"name": "b", "cluster": {"server": b.url}}],
        "users": [{"name": "operator", "user": {"token": "emulated-placeholder-token"}}],
        "contexts": [{"name": name, "context": {"cluster": cluster, "user": "operator"}}
                     for name, cluster in (("lab-a", "a"), ("prod-b", "b"), ("lab-b", "b"))],
    }
    path.write_text(yaml.safe_dump(document))
    return path


@pytest.fixture
def ctx_app(clusters: tuple[EmulatedCluster, EmulatedCluster],
            tmp_path: Path) -> Iterator[Any]:
    """``ctx_app(context)``: the app as ``gputui --context`` builds it (run.py's writer)."""
    writers: list[Any] = []

    def build(context: str = "lab-a") -> GpuTuiApp:
        config = two_cluster_kubeconfig(tmp_path / "kubeconfig", *clusters)
        settings = Settings(kubeconfig=str(config), context=context, namespace="gpu-operator",
                            read_only_contexts=("prod-*",),
                            audit_log=str(tmp_path / "audit.jsonl"))
        source = open_source(settings, watch_timeout=5)
        writer = writer_for_source(source, read_only=is_read_only(settings, context))
        writers.append(writer)
        app = make_app(settings, session_of(settings, source, writer=writer))
        app.min_snapshot_interval = 0.0
        return app

    yield build
    for writer in writers:
        if writer is not None:
            writer.close()


async def shows(pilot: Any, app: GpuTuiApp, nodes: set[str]) -> NodesScreen:
    """The node list on ``nodes``, every list read, permissions known."""
    await until(pilot, lambda: set(app.snapshot.nodes) == nodes and not app.snapshot.loading)
    await until(pilot, lambda: app.runner is not None and not app.runner.permissions.pending)
    await until(pilot, lambda: isinstance(app.screen, NodesScreen)
                and app.screen.table.row_count == len(nodes))
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    return screen


async def command(pilot: Any, text: str) -> None:
    await pilot.press("colon")
    await pilot.pause()
    for char in text:
        await pilot.press("space" if char == " " else char)
    await pilot.press("enter")


async def test_ctx_lists_both_switches_with_enter_and_back_by_name(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster]) -> None:
    app = ctx_app("lab-a")
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        assert "lab-a" in header_text(app)
        await command(pilot, "ctx")
        await until(pilot, lambda: isinstance(app.screen, ContextsScreen))
        view = app.screen
        assert isinstance(view, ContextsScreen)
        assert [(e.key, e.current, e.server) for e in view.entries] == [
            ("lab-a", True, clusters[0].url), ("prod-b", False, clusters[1].url),
            ("lab-b", False, clusters[1].url)]
        assert view.selected is not None and view.selected.key == "lab-a"
        await pilot.press("down", "down")  # lab-b (writable)
        await pilot.press("enter")
        screen = await shows(pilot, app, {"b-1", "b-2", "b-3"})
        assert app.contexts.current == "lab-b"
        assert "lab-b" in header_text(app) and "lab-a" not in header_text(app)
        assert "read-only" not in header_text(app)
        assert screen.table.row_count == 3
        await command(pilot, "ctx lab-a")  # back, by name, no restart
        await shows(pilot, app, {"a-1", "a-2"})
        assert app.contexts.current == "lab-a" and "lab-a" in header_text(app)


async def test_switch_shows_loading_until_every_list_is_read(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster]) -> None:
    app = ctx_app("lab-a")
    headers: list[tuple[str, bool]] = []  # (line 1, every list of lab-b read) per redraw
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        refresh = app.refresh_header

        def recorded() -> None:
            refresh()
            read = bool(app.snapshot.nodes) and not app.snapshot.loading
            headers.append((header_text(app).splitlines()[0], read))

        app.refresh_header = recorded  # type: ignore[method-assign]
        app.contexts.switch("lab-b")
        await shows(pilot, app, {"b-1", "b-2", "b-3"})
        await until(pilot, lambda: any("live" in h and "lab-b" in h for h, _ in headers))
    before = [h for h, read in headers if "lab-b" in h and not read]
    assert before and all("live" not in h for h in before)  # never "live" before every list
    assert any("loading" in h or "connecting" in h for h in before), before
    assert all("lab-a" not in h for h, _ in headers[headers.index(next(
        x for x in headers if "lab-b" in x[0])):])  # the old name never comes back


async def test_unknown_context_says_so_in_one_line_and_stays(ctx_app: Any) -> None:
    app = ctx_app("lab-a")
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await command(pilot, "ctx nowhere")
        await until(pilot, lambda: any(n.startswith("Cannot switch to nowhere") for n in notes))
        line = next(n for n in notes if n.startswith("Cannot switch"))
        assert "\n" not in line and "not found in kubeconfig" in line
        assert app.contexts.current == "lab-a" and not app.contexts.switching
        await quiet_for(pilot, 0.2)  # a stop of the old cluster would empty the list now
        assert set(app.snapshot.nodes) == {"a-1", "a-2"}  # the old cluster was never stopped


async def test_read_only_context_sends_no_write_and_greys_with_the_reason(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster], sent: Sent) -> None:
    app = ctx_app("lab-a")
    b_host = clusters[1].url.split("://", 1)[1]
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        await command(pilot, "ctx prod-b")
        screen = await shows(pilot, app, {"b-1", "b-2", "b-3"})
        assert "read-only" in header_text(app).splitlines()[0]
        screen.table.focus()
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("c")
        await until(pilot, lambda: bool(notes))
        assert notes[-1] == ("Cordon is not available: read-only context (read_only_contexts: "
                             "prod-*): gputui sends no writes")
        assert isinstance(app.screen, NodesScreen)
        assert app.check_action("act", ("cordon",)) is None  # greyed in footer and help (app key)
        app.actions.start("drain", ["b-1"])
        await until(pilot, lambda: notes[-1].startswith("Drain is not available: read-only "
                                                         "context"), why=lambda: notes)
    to_b = [(method, path) for host, method, path in sent if host == b_host]
    assert to_b and {method for method, _ in to_b} == {"GET"}, to_b
    assert "unschedulable" not in clusters[1].store.get("nodes", "b-1", None)["spec"]


async def test_read_only_context_chosen_at_start_sends_only_gets(
        ctx_app: Any, sent: Sent) -> None:
    app = ctx_app("prod-b")
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"b-1", "b-2", "b-3"})
        assert "read-only" in header_text(app).splitlines()[0]
        notes: list[str] = []
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        await pilot.press("c")
        await until(pilot, lambda: any(n.startswith("Cordon is not available: read-only "
                                                    "context") for n in notes), why=lambda: notes)
    assert sent and {method for _, method, _ in sent} == {"GET"}, sent


async def test_audit_names_the_context_acted_in_after_a_switch(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster],
        tmp_path: Path) -> None:
    app = ctx_app("lab-a")
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        app.contexts.switch("lab-b")
        screen = await shows(pilot, app, {"b-1", "b-2", "b-3"})
        screen.table.focus()
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        dialog = app.screen
        assert isinstance(dialog, ConfirmScreen)
        await until(pilot, lambda: dialog.dry_run is not None)
        await pilot.press("y")
        await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
    assert clusters[1].store.get("nodes", "b-1", None)["spec"]["unschedulable"] is True
    intent, outcome = (json.loads(line) for line in
                       (tmp_path / "audit.jsonl").read_text().splitlines())
    assert intent["context"] == "lab-b" and intent["targets"] == ["b-1"]
    assert outcome["id"] == intent["id"]


async def test_a_switch_waits_while_an_action_dialog_is_open(ctx_app: Any) -> None:
    app = ctx_app("lab-a")
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shows(pilot, app, {"a-1", "a-2"})
        screen.table.focus()
        await pilot.press("c")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
        app.contexts.switch("lab-b")
        assert notes and "finish or close the open action first" in notes[-1]
        assert app.contexts.current == "lab-a" and not app.contexts.switching


async def test_an_action_running_in_the_old_context_keeps_its_writer_and_context(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster],
        tmp_path: Path) -> None:
    """An apply that outlives its dialog (background operations) holds the runner of the
    context it was planned in: after a switch its write still reaches that cluster, its
    audit line names that context, and the old writer is closed only once it ended."""
    from gputui.actions.base import Cancel
    from gputui.actions.registry import action

    app = ctx_app("lab-a")
    async with app.run_test(size=(120, 40)) as pilot:
        await shows(pilot, app, {"a-1", "a-2"})
        old = app.runner
        assert old is not None
        cordon = action("cordon")
        plan = await asyncio.to_thread(old.plan, cordon, app.snapshot, ["a-1"], {})
        dry_run = await asyncio.to_thread(old.dry_run, plan)
        running = Cancel()
        op = app.operations.begin(plan, dry_run, running, cordon)  # as `y` does
        closed: list[str] = []
        old.writer.close = lambda: closed.append("closed")  # type: ignore[method-assign]
        app.contexts.switch("lab-b")
        await shows(pilot, app, {"b-1", "b-2", "b-3"})
        assert app.runner is not old
        app.contexts.tidy()
        assert closed == []  # still applying: the old connection stays
        result = await asyncio.to_thread(old.apply, cordon, plan, dry_run, lambda _: None,
                                         running)
        app.operations.finished(op.id, result)
        assert result.ok, result
        app.contexts.tidy()
        assert closed == ["closed"]
    assert clusters[0].store.get("nodes", "a-1", None)["spec"]["unschedulable"] is True
    assert "unschedulable" not in clusters[1].store.get("nodes", "b-1", None)["spec"]
    intent = json.loads((tmp_path / "audit.jsonl").read_text().splitlines()[0])
    assert intent["context"] == "lab-a" and intent["targets"] == ["a-1"]


async def test_an_action_opened_while_the_switch_loads_is_closed_unsent(
        ctx_app: Any, clusters: tuple[EmulatedCluster, EmulatedCluster]) -> None:
    import threading

    app = ctx_app("lab-a")
    release = threading.Event()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await shows(pilot, app, {"a-1", "a-2"})
        real = app.contexts.opener
        assert real is not None

        def slow(name: str) -> Any:
            release.wait(20)
            return real(name)

        app.session.opener = slow
        app.contexts.switch("lab-b")
        screen.table.focus()
        await pilot.press("c")  # the old cluster is still shown: its dialog opens
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        release.set()
        await shows(pilot, app, {"b-1", "b-2", "b-3"})
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await quiet_for(pilot, 0.3)  # a cordon the closed dialog let through: sent now
    for cluster, node in ((clusters[0], "a-1"), (clusters[1], "b-1")):
        assert "unschedulable" not in cluster.store.get("nodes", node, None)["spec"]
