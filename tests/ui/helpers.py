"""What the UI tests share, one copy each: waiting on the app under Pilot, the live app on
an emulated cluster, the journeys' scenario and answers, the header's and the panes' text,
the snapshots' plan, and the tmux session of the real-terminal tests.

Test modules import these from here, never from one another
(``tests/meta/test_test_imports.py``); frozen recorded scenarios are ``tests/ui/conftest.py``'s
``frozen_app`` and ``tests/fixtures/``.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console, RenderableType
from textual.command import CommandPalette
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static

from gputui.actions.drain import drain_kubectl
from gputui.actions.drain_plan import describe, evictions
from gputui.actions.drain_rules import DrainOptions, sort_pods
from gputui.actions.registry import action
from gputui.demo import open_demo_source
from gputui.domain.metrics import MetricsWant
from gputui.session import session_of
from gputui.settings import Settings
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.connect import open_source
from gputui.sources.tape.format import TapeError
from gputui.sources.tape.reader import TapeReader
from gputui.sources.writer import writer_for_source
from gputui.ui.app import GpuTuiApp, make_app
from gputui.ui.screens.confirm import ParamPrompt
from gputui.ui.screens.nodes import NodesScreen
from gputui.ui.widgets.status_header import StatusHeader
from tests.actions.conftest import budget, gpu_node, gpu_pod
from tests.apiserver.conftest import pod
from tests.helpers import poll


# ------------------------------------------------------------ waiting on the app
async def until(pilot: Any, check: Callable[[], object], timeout: float = 60.0,
                why: Callable[[], object] | None = None) -> None:
    """Pause the pilot until ``check()`` holds (real HTTP and threads take real time). The
    bound only stops a hang, so it is generous; ``why()``, if given, is added to the failure
    (what the test would have printed in its own assertion)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            detail = f": {why()}" if why is not None else ""
            raise AssertionError(f"condition not reached in {timeout:g} s{detail}")
        await pilot.pause(0.05)  # the step between looks, not a wait for anything


async def quiet_for(pilot: Any, seconds: float) -> None:
    """Let ``seconds`` pass with the app running, then let its queue drain.

    The one fixed wait a UI test may need, and only for a window: a check that something
    does *not* happen within it (no request is sent, the cursor does not move), or one that
    needs several periods of a timer to pass. Whatever the test expects to happen is waited
    for with :func:`until` instead: a guessed pause passes on a quiet machine and fails
    under load."""
    await pilot.pause(seconds)
    await pilot.pause()


async def palette_searched(pilot: Any, palette: CommandPalette, text: str = "") -> None:
    """Wait until the command palette has listed its hits for ``text``: its query reads
    ``text``, a search has ended (``-ready``) and none is running (Textual gathers the hits
    in a worker and shows them in batches, so the list is partial until it ends)."""
    group = CommandPalette._GATHER_COMMANDS_GROUP

    def searched() -> bool:
        return (palette.query_one(Input).value == text and palette.has_class("-ready")
                and not any(worker.group == group for worker in pilot.app.workers))

    await until(pilot, searched, why=lambda: f"the palette still searches for {text!r}")


async def ready(pilot: Any, app: GpuTuiApp, nodes: int = 3) -> NodesScreen:
    """The node screen once every list is read (actions wait for that)."""
    await until(pilot, lambda: len(app.snapshot.nodes) == nodes and not app.snapshot.loading)
    await until(pilot, lambda: app.runner is not None and not app.runner.permissions.pending)
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    await until(pilot, lambda: screen.table.row_count == nodes)
    screen.table.focus()
    return screen


async def nodes_screen(pilot: Any, app: GpuTuiApp, count: int) -> NodesScreen:
    """The node screen once ``count`` nodes are read and the permissions are known."""
    await until(pilot, lambda: len(app.snapshot.nodes) == count and not app.snapshot.loading
                and app.runner is not None
                and not app.runner.permissions.pending, timeout=60)
    screen = app.screen
    assert isinstance(screen, NodesScreen)
    return screen


# ------------------------------------------- the live app on an emulated cluster
LiveApp = Callable[..., GpuTuiApp]


@pytest.fixture
def cluster(request_log: list[tuple[str, str]]) -> Iterator[EmulatedCluster]:
    """An API-only emulated cluster with three GPU nodes and a budget-protected trainer."""
    made = EmulatedCluster(run_controllers=False).start()
    store = made.store
    for name in ("gpu-1", "gpu-2", "gpu-3"):
        store.create("nodes", gpu_node(name))
    store.create("pods", gpu_pod("train-0", "gpu-1"))
    store.create("poddisruptionbudgets.policy", budget("trainer-pdb"))
    try:
        yield made
    finally:
        made.stop()


@pytest.fixture
def live_app(cluster: EmulatedCluster, tmp_path: Path) -> Iterator[LiveApp]:
    """``live_app(read_only=False)``: the app on the cluster, with an audit log in tmp."""
    made: list[Any] = []

    def build(read_only: bool = False) -> GpuTuiApp:
        config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
        settings = Settings(kubeconfig=str(config), namespace="gpu-operator",
                            read_only=read_only, audit_log=str(tmp_path / "audit.jsonl"))
        source = open_source(settings, watch_timeout=5)
        writer = writer_for_source(source, read_only=read_only)
        made.append(writer)
        app = make_app(settings, session_of(settings, source, writer=writer))
        app.min_snapshot_interval = 0.0
        return app

    yield build
    for writer in made:
        if writer is not None:
            writer.close()


def app_with_audit(cluster: EmulatedCluster, tmp_path: Path, audit: Path,
                   notes: list[str]) -> tuple[GpuTuiApp, Any]:
    """The app on ``cluster`` with its audit log at ``audit`` (a path a test may break) and
    every notification appended to ``notes``; also its writer (the test closes it)."""
    config = cluster.write_kubeconfig(tmp_path / "kubeconfig")
    settings = Settings(kubeconfig=str(config), namespace="gpu-operator",
                        audit_log=str(audit))
    source = open_source(settings, watch_timeout=5)
    writer = writer_for_source(source, read_only=False)
    app = make_app(settings, session_of(settings, source, writer=writer))
    app.min_snapshot_interval = 0.0
    app.notify = lambda message, **kw: notes.append(str(message))  # type: ignore[method-assign]
    return app, writer


# ------------------------------------------ the journeys on an emulated scenario
CANARY = """summary: two pools of two H100 nodes, one node at a time
namespace: gpu-operator
clusterPolicy:
  spec:
    driver:
      upgradePolicy: {autoUpgrade: true, maxParallelUpgrades: 1, maxUnavailable: 50%}
nodePools:
  - {name: pool-a, prefix: gke-prod-h100-pool-7f3a, count: 2, gpu: H100-80GB, gpusPerNode: 8}
  - {name: pool-b, prefix: gke-prod-h100-pool-9e1d, count: 2, gpu: H100-80GB, gpusPerNode: 8}
"""


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Any]:
    """``demo(yaml, speed)``: the app on an emulated scenario, with its writer and audit log."""
    opened: list[Any] = []

    def build(text: str, speed: float) -> GpuTuiApp:
        path = tmp_path / "scenario.yaml"
        path.write_text(text)
        settings = Settings(demo=True, scenario=str(path), speed=speed,
                            audit_log=str(tmp_path / "audit.jsonl"))
        source = open_demo_source(settings)
        writer = writer_for_source(source, read_only=False)
        opened.append(writer)
        app = make_app(settings, session_of(settings, source, clock=source.clock, writer=writer))
        app.min_snapshot_interval = 0.0
        return app

    yield build
    for writer in opened:
        if writer is not None:
            writer.close()


@pytest.fixture
def fast_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registered canary and MIG actions poll every 0.1 s instead of every 10/5 s."""
    monkeypatch.setattr(action("upgrade-canary"), "poll_seconds", 0.1)
    monkeypatch.setattr(action("mig-config-safe"), "poll_seconds", 0.1)


async def answer_prompt(pilot: Any, app: GpuTuiApp, value: str) -> None:
    """Answer the open ParamPrompt: pick ``value`` from its list, or type it."""
    await until(pilot, lambda: isinstance(app.screen, ParamPrompt))
    prompt = app.screen
    assert isinstance(prompt, ParamPrompt)
    if prompt.choices:
        prompt.query_one(OptionList).highlighted = prompt.choices.index(value)
    else:
        prompt.query_one(Input).value = value
    await pilot.press("enter")


# --------------------------------------------------------- what the screen shows
def header_lines(app: Any) -> list[str]:
    """The status header of the screen on top, line by line."""
    return str(app.screen.query_one(StatusHeader).render()).splitlines()


def header_text(app: GpuTuiApp) -> str:
    """The plain text of every status header on the screen on top."""
    return "\n".join(h.render().plain for h in app.screen.query(StatusHeader))


def rendered_text(renderable: RenderableType, width: int = 80) -> str:
    """What ``renderable`` shows at ``width`` columns, as plain text."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def shown(screen: Screen[object] | Widget, selector: str) -> str:
    """The plain text a Static under ``screen`` currently shows."""
    content = screen.query_one(selector, Static).content
    if isinstance(content, str):
        return content
    return rendered_text(content, width=200)


# --------------------------------------------------------------------- snapshots
async def settle_for_snapshot(pilot: Any) -> None:
    """Let the app draw before an SVG snapshot is taken (a snapshot has no condition to
    wait on; the same pauses every time)."""
    await pilot.pause()
    await pilot.pause(0.15)  # window: timers due soon after the first frame (a debounce) fire
    await pilot.pause()


def server_plan(app: Any, node: str, refuse: bool) -> Any:
    """The drain's plan as the runner completes it from the server: the node's GPU pods, a
    DaemonSet pod, the completed validator, and (``refuse``) a bare pod with emptyDir data."""
    view = app.snapshot.nodes[node]
    pods = [pod(p.name, node, p.namespace, dict(p.labels), owner=("ReplicaSet", "trainer"))
            for p in view.gpu_pods]
    pods.append(pod("nvidia-driver-daemonset-x1", node, "gpu-operator",
                    owner=("DaemonSet", "nvidia-driver-daemonset")))
    validator = pod("nvidia-cuda-validator-x1", node, "gpu-operator")
    validator["status"]["phase"] = "Succeeded"
    pods.append(validator)
    if refuse:
        pods.append(pod("scratch-notebook", node, "ml-training", empty_dir=True,
                        owner=("StatefulSet", "notebook")))
    options = DrainOptions()
    plan = action("drain").plan(app.snapshot, [node], {"timeout": 300})
    sorting = sort_pods(pods, options)
    added = [] if sorting.refused else evictions(sorting, drain_kubectl(node, options, 300))
    return describe(replace(plan, changes=(*plan.changes, *added)), {node: sorting})


# ------------------------------------------------------ the real terminal (tmux)
REPO = Path(__file__).resolve().parents[2]


def gputui_command() -> str:
    """This checkout's code through this interpreter (the ``gputui`` on PATH may be another
    checkout's: an editable install points at wherever it was installed from)."""
    return f"{sys.executable} -m gputui"


class Tmux:
    """A private tmux server (``-L <unique>``) so the test never touches the user's."""

    def __init__(self) -> None:
        self.server = f"gputui-smoke-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.server, *args], capture_output=True,
                              text=True, check=False, cwd=REPO)

    def screen(self) -> str:
        return self.run("capture-pane", "-p").stdout

    def alive(self) -> bool:
        return self.run("has-session").returncode == 0


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    """A private tmux server for one test, killed after it."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux not found: run ./scripts/test.sh, which installs it")
    session = Tmux()
    try:
        yield session
    finally:
        session.run("kill-server")


def poll_screen(check: Callable[[], bool], timeout: float = 90.0) -> bool:
    """Whether ``check`` (a look at ``tmux.screen()``) held within ``timeout`` seconds, asked
    every 0.2 s: each look is a tmux subprocess."""
    return poll(check, timeout, step=0.2)


def xid_recorded(path: Path) -> bool:
    """The growing file opens (sync-flushed) and already holds an XID and a reading."""
    try:
        reader = TapeReader.open(path)
    except TapeError:
        return False
    xids = reader.objects_at(reader.end).xids
    return bool(xids) and reader.metrics_at(reader.end, MetricsWant()) is not None
