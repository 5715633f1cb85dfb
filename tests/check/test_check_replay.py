"""``gputui check --replay FILE --at TIME``: the findings as they were, from a recording.

The agreement test runs what an operator would: ``gputui sim`` serving ``xid-storm``, a
recording session (the live source tapped by the recorder, headless) on its kubeconfig,
``gputui check --json`` on the same cluster, then ``check --replay --at`` the moment that
check reports; both through the real CLI in subprocesses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gputui.sources.kubeconfig import load_target
from tests.sources.tape_record import Session

Run = Callable[..., subprocess.CompletedProcess[str]]
REPO = Path(__file__).resolve().parents[2]


def _poll(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


@pytest.fixture
def storm_sim(tmp_path: Path) -> Iterator[Path]:
    """``gputui sim --scenario xid-storm --speed 10``; yields its kubeconfig."""
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "gputui", "sim", "--scenario", "xid-storm", "--speed", "10",
         "--kubeconfig-out", str(config)], cwd=REPO, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert _poll(config.exists, timeout=60), "gputui sim did not start"
        yield config
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    """A short recording of a small demo cluster (for the CLI's own behaviour)."""
    from gputui.demo import DemoCluster

    path = tmp_path / "short.gputui-rec"
    demo = DemoCluster("xid-storm", speed=10)
    session = Session(demo.start(), path, clock=demo.now).start()
    try:
        assert _poll(lambda: any(not s.loading for s in session.snapshots), timeout=60)
    finally:
        session.stop()
        demo.stop()
    return path


def _findings(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(f["code"], f["node"] or "", f["severity"]) for f in report["findings"]}


def test_replay_agrees_with_live_check_at_that_moment(gputui: Run, storm_sim: Path,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "storm.gputui-rec"
    session = Session(load_target(str(storm_sim)), path).start()
    try:
        def all_xids() -> bool:
            # the four GPUs that raise one (a GPU's XIDs are all kept now, so four events
            # can be two GPUs' histories before the last XID of the storm came)
            return any(len({(node, row[0]) for node, rows in b["xids"].items() for row in rows})
                       >= 4 for b, _ in session.built())

        assert _poll(all_xids, timeout=120), "the recorder never read the four XIDs"
        # --at takes the report's time to the second: the live read must come after the
        # second in which the recorder's build with all four happened, or the replay's
        # moment (that second's start) falls before that build
        built = min(at for b, at in session.built() if len(
            {(node, row[0]) for node, rows in b["xids"].items() for row in rows}) >= 4)
        time.sleep(max(0.0, int(built) + 1.1 - time.time()))
        live = gputui("check", "--json", "--kubeconfig", str(storm_sim))
        assert live.returncode == 1, live.stderr
        time.sleep(1.5)  # the recorder's next flush covers that moment
    finally:
        session.stop()
    report = json.loads(live.stdout)
    replayed = gputui("check", "--json", "--replay", str(path), "--at", report["generated_at"])
    assert replayed.returncode == 1 and replayed.stderr == "", replayed.stderr
    again = json.loads(replayed.stdout)
    assert again["generated_at"] == report["generated_at"]
    assert again["context"] == report["context"]
    # a one-shot check cannot date an XID it finds already there (info, "time unknown");
    # the recording saw them appear: same XIDs, every other finding exactly the same
    xid = {(c, n) for c, n, _ in _findings(report) if c == "xid-error"}
    assert xid and xid == {(c, n) for c, n, _ in _findings(again) if c == "xid-error"}
    assert {f for f in _findings(again) if f[0] != "xid-error"} == {
        f for f in _findings(report) if f[0] != "xid-error"}
    assert [n["name"] for n in again["nodes"]] == [n["name"] for n in report["nodes"]]


def test_table_and_markdown_from_a_recording(gputui: Run, recording: Path) -> None:
    table = gputui("check", "--replay", str(recording), "--at=-0s")  # = : argparse
    assert table.returncode in (0, 1) and table.stderr == "", table.stderr
    first = table.stdout.splitlines()[0]
    assert "replay of short.gputui-rec at 20" in first and "GPU nodes 4" in first
    # the end: the start may be a moment still loading, which is unknown (exit 2)
    markdown = gputui("check", "--format", "markdown", "--replay", str(recording), "--at=-0s")
    assert markdown.returncode == table.returncode, markdown.stderr
    assert markdown.stdout.startswith("#")


@pytest.mark.parametrize(("args", "message"), [
    (["--replay", "R", "--at", "+0s", "--kubeconfig", "k"],
     "--replay reads a recording, not a cluster: it cannot be combined with --kubeconfig"),
    (["--replay", "R", "--at", "+0s", "--demo", "--scenario", "healthy"],
     "cannot be combined with --demo, --scenario"),
    (["--replay", "R"], "--replay needs --at TIME"),
    (["--at", "+0s"], "--at needs --replay FILE"),
    (["--replay", "R", "--at", "+10h"], "time \\+10h is outside the recording, which runs "),
    (["--replay", "R", "--at", "noon"], "--at: cannot read time 'noon'"),
    (["--replay", "missing", "--at", "+0s"], "cannot read recording .*missing: No such file"),
    (["--replay", "NOTREC", "--at", "+0s"], "not a gputui recording: .*NOTREC"),
])
def test_bad_replay_arguments_are_one_line_exit_2(gputui: Run, recording: Path,
                                                   tmp_path: Path, args: list[str],
                                                   message: str) -> None:
    (tmp_path / "NOTREC").write_text("kind: Config\n")
    args = [str(recording) if a == "R" else str(tmp_path / a) if a in ("missing", "NOTREC")
            else a for a in args]
    result = gputui("check", *args)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("gputui: "), result.stderr
    assert re.search(message, lines[0]), lines[0]


def test_record_to_an_unusable_file_stops_before_the_screen(gputui: Run,
                                                            tmp_path: Path) -> None:
    (tmp_path / "target").write_text("")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    result = gputui("--demo", "--record", str(tmp_path / "link"), timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        (f"gputui: recording {tmp_path / 'link'} is a symbolic link; gputui does not write "
         "through one")]


def test_markdown_from_a_recording_holds_its_timeline_and_who_acted(gputui: Run,
                                                                    tmp_path: Path) -> None:
    """``--format markdown`` on a recording: the timeline section is the recorded one up to
    --at (alice's cordon with who, the XIDs of the affected node), the operations section
    says the actions are in it (not this machine's audit log), and a damaged entry of the
    file is counted, not shown."""
    from tests.fixtures.tapes import XID_NODE, write_xid_tape

    tape = write_xid_tape(tmp_path / "xid-storm.tape")
    late = gputui("check", "--format", "markdown", "--replay", str(tape), "--at=-0s")
    assert late.returncode == 1, late.stderr
    text = late.stdout
    assert "## Operations (the recording xid-storm.tape)" in text
    assert "actions taken are in the timeline below" in text
    assert "1 damaged timeline entries of the recording were skipped" in text
    timeline = text[text.index("## Timeline"):]
    assert "cordon: ok" in timeline and "alice" in timeline and XID_NODE in timeline
    assert "no-such-kind" not in text
    early = gputui("check", "--format", "markdown", "--replay", str(tape), "--at", "+0s")
    assert "cordon: ok" not in early.stdout  # the cordon came later than that


def test_a_moment_still_loading_is_unknown_not_healthy(gputui: Run, tmp_path: Path) -> None:
    """A recording starts while the session's first lists arrive (a 5,000-node cluster's
    pods take a minute): a report of that moment would say "no findings", so it is one
    line, exit 2, naming what was missing and the first complete moment."""
    from dataclasses import replace

    from gputui.sources.tape.writer import TapeWriter
    from tests.fixtures.tapes import T0, small_cluster

    path = tmp_path / "loading.gputui-rec"
    writer = TapeWriter(path, context="ctx", server="https://k")
    half = replace(small_cluster(2), loading=frozenset({"pods", "clusterpolicies"}))
    writer.objects(half, T0)
    assert writer.drain(10.0)
    writer.objects(replace(half, loading=frozenset()), T0 + 10)
    writer.close()
    early = gputui("check", "--replay", str(path), "--at", "+5s")
    assert early.returncode == 2 and early.stdout == ""
    assert early.stderr.count("\n") == 1
    assert "still loading (clusterpolicies, pods)" in early.stderr
    assert "findings are unknown; the first complete read is at " in early.stderr
    late = gputui("check", "--replay", str(path), "--at", "+10s")
    assert late.returncode in (0, 1) and late.stderr == "", late.stderr
