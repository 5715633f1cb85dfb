#!/usr/bin/env python3
"""Write ``screenshots/*.svg`` of each main view from the recorded emulated scenarios.

Same factory as the CLI and the tests (``make_app``), a replay source over
``tests/fixtures/scenarios`` and a frozen clock, so the pictures are reproducible and never
edited by hand. ``--keys`` prints the README's key table, generated from the registry.

Usage: ``python scripts/screenshots.py [--out screenshots] [--keys]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
#: the recorded scenarios the UI tests and the screenshots read (not part of the package)
SCENARIOS = REPO / "tests" / "fixtures" / "scenarios"

from gputui.session import session_of
from gputui.settings import Settings
from gputui.ui.app import make_app
from gputui.ui.key_table import key_table
from tests.fixtures.recordings import Recording, ReplaySource, load_recording


@dataclass(frozen=True)
class Shot:
    """One picture: which recording, which keys to press, what size."""

    name: str
    scenario: str
    keys: tuple[str, ...] = ()
    size: tuple[int, int] = (120, 40)
    title: str = ""
    #: a screen pushed before the keys (a view a replay cannot open by itself: ``:ctx``)
    push: Callable[[], Any] | None = None
    #: builds the app instead of the frozen scenario (``gputui replay`` on a recording)
    make: Callable[[], Any] | None = None
    #: later snapshots the source delivers before the keys (what ``:timeline`` shows)
    later: Callable[[Recording], list[Any]] | None = None


def contexts_screen() -> Any:
    """``:ctx`` as a kubeconfig of three clusters lists it (a replay has no kubeconfig)."""
    from gputui.sources.contexts import ContextEntry
    from gputui.ui.screens.contexts import ContextsScreen

    return ContextsScreen((
        ContextEntry("lab", "lab", "lab", "https://10.20.0.4:6443", "alice", current=True),
        ContextEntry("staging-us", "staging-us", "staging", "https://staging.k8s.example:6443",
                     "oncall"),
        ContextEntry("prod-eu-west-1", "prod-eu-west-1", "prod", "https://prod-eu-west-1."
                     "k8s.example:6443", "oncall", read_only=True),
    ))


def replay_app() -> Any:
    """``gputui replay`` on the xid-storm test recording (tests/fixtures/tapes.py), its
    header's recording date fixed."""
    from gputui.session import open_session
    from tests.fixtures.tapes import write_xid_tape

    path = write_xid_tape(Path(tempfile.mkdtemp(prefix="gputui-shot-")) / "xid-storm.tape")
    session = open_session(Settings(), "replay", path)
    assert session.replay is not None
    session.replay.tape.recorded_at = 1796117400.0  # 2026-12-01
    app = make_app(Settings(), session)
    app.min_snapshot_interval = 0.0
    return app


async def _replayed(app: Any, pilot: Any) -> None:
    """A replay builds on its own thread: wait until the cursor's snapshot is shown."""
    cursor = getattr(app, "cursor", None)
    for _ in range(200):
        if cursor is None or app.snapshot.generated_at == cursor.position:
            return
        await pilot.pause(0.05)


def incident(recording: Recording) -> list[Any]:
    """Three later reads of the recording: a node cordoned, a new XID on another, then the
    first NotReady and a node gone (the events ``:timeline`` shows)."""
    from dataclasses import replace

    from gputui.domain.inputs import XidEvent
    from gputui.domain.snapshot import SnapshotBuilder

    objects = recording.objects
    names = sorted(objects.nodes)
    now = recording.now
    nodes = dict(objects.nodes)
    cordoned = {**nodes[names[0]], "spec": {**nodes[names[0]].get("spec", {}),
                                            "unschedulable": True}}
    nodes[names[0]] = cordoned
    xids = {**objects.xids, names[1]: (*objects.xids.get(names[1], ()),
                                       XidEvent(2, 79, now - 200, "GPU has fallen off the bus"))}
    down = {**cordoned, "status": {**cordoned["status"], "conditions": [
        {**c, "status": "False"} if c.get("type") == "Ready" else c
        for c in cordoned["status"]["conditions"]]}}
    gone = {k: v for k, v in nodes.items() if k != names[-1]}
    builder = SnapshotBuilder()
    builder.build(objects, now - 600)
    return [builder.build(replace(objects, nodes=nodes), now - 420),
            builder.build(replace(objects, nodes=nodes, xids=xids), now - 180),
            builder.build(replace(objects, nodes={**gone, names[0]: down}, xids=xids), now)]


SHOTS = (
    Shot("nodes", "driver-crashloop", title="Node list: driver crash loop"),
    Shot("node-pipeline", "driver-crashloop", ("enter",), title="Enter: the node's pipeline"),
    Shot("node-describe", "xid-storm", ("d",), title="d: describe the node"),
    Shot("upgrades", "upgrade-rolling", ("2",), title=":upgrades"),
    Shot("mig", "mig-reconfig-failed", ("3",), title=":mig"),
    Shot("findings", "upgrade-failed", ("4",), title=":findings"),
    Shot("help", "healthy", ("question_mark",), title="? help"),
    Shot("nodes-80x24", "upgrade-rolling", (), (80, 24), title="80x24"),
    Shot("joins", "staggered-joins", ("colon", *"joins", "enter", "down", "enter"), (100, 28),
         title=":joins: time to GPU per pool, then the pool's nodes"),
    Shot("contexts", "healthy", (), (100, 20), title=":ctx", push=contexts_screen),
    Shot("replay", "xid-storm", ("right", "4"), (100, 28), title="gputui replay: right "
         "steps to the XID, 4 shows the findings then", make=replay_app),
    Shot("timeline", "xid-storm", ("colon", *"timeline", "enter"), (100, 24),
         title=":timeline: what changed and when, newest first", later=incident),
    Shot("summary", "xid-storm", ("colon", *"summary", "enter"), (100, 32),
         title=":summary: the handoff summary for review, y copies it", later=incident),
)


async def take(shot: Shot, out: Path) -> Path:
    """Run the app headless on the shot's recording, press its keys, save the SVG."""
    recording = load_recording(shot.scenario, SCENARIOS)
    # an audit log that does not exist: no picture shows this machine's own actions
    settings = Settings(audit_log=str(out / "no-audit-log.jsonl"))
    app = shot.make() if shot.make is not None else make_app(settings, session_of(
        settings, ReplaySource.from_recording(recording), clock=lambda: recording.now))
    async with app.run_test(size=shot.size) as pilot:
        await pilot.pause()
        await pilot.pause(0.15)
        await _replayed(app, pilot)
        if shot.push is not None:
            await app.push_screen(shot.push())
            await pilot.pause()
        for snapshot in shot.later(recording) if shot.later is not None else ():
            app.min_snapshot_interval = 0.0
            app.source.push(snapshot)  # type: ignore[attr-defined]  # a ReplaySource
            await pilot.pause(0.05)
        for key in shot.keys:
            await pilot.press(key)
            await pilot.pause()
        await _replayed(app, pilot)
        await pilot.pause(0.15)
        await pilot.pause()
        path = out / f"{shot.name}.svg"
        app.save_screenshot(filename=path.name, path=str(out))
    return path


def key_markdown() -> str:
    """The README key table (generated from the command registry)."""
    lines = ["| Where | Keys | Command | What it does |", "|---|---|---|---|"]
    for scope, keys, title, tooltip in key_table():
        keys_md = " ".join(f"`{k}`" for k in keys.split()) if keys else ""
        keys_md = keys_md.replace("|", "\\|")
        lines.append(f"| {scope} | {keys_md} | {title} | {tooltip} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument("--keys", action="store_true", help="print the key table and exit")
    parser.add_argument("--only", metavar="NAME", action="append",
                        help="take only this shot (repeatable; default: every shot)")
    args = parser.parse_args()
    if args.keys:
        print(key_markdown())
        return 0
    os.environ["TZ"] = "UTC"
    time.tzset()
    args.out.mkdir(parents=True, exist_ok=True)
    unknown = set(args.only or ()) - {shot.name for shot in SHOTS}
    if unknown:
        parser.error(f"no such shot: {', '.join(sorted(unknown))}")
    for shot in SHOTS:
        if args.only and shot.name not in args.only:
            continue
        path = asyncio.run(take(shot, args.out))
        print(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}  {shot.title}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
