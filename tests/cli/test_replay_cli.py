"""``gputui replay FILE``: a file that is not a readable recording is one line and exit 2,
before the terminal is touched (the TUI itself is in tests/ui/test_replay.py and
tests/ui/test_tmux_replay.py)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path

from tests.fixtures.tapes import write_xid_tape


def _replay(path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    return subprocess.run([sys.executable, "-m", "gputui", "replay", str(path)],
                          capture_output=True, text=True, timeout=60, env=env, check=False,
                          stdin=subprocess.DEVNULL)


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout == ""  # nothing was drawn: the terminal was never switched
    return lines[0]


def test_missing_file(tmp_path: Path) -> None:
    line = _one_line(_replay(tmp_path / "nope.tape"))
    assert line.startswith("gputui: cannot read recording ") and "nope.tape" in line


def test_not_a_recording_and_corrupt_data(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    assert _one_line(_replay(text)) == f"gputui: not a gputui recording: {text}"
    foreign = tmp_path / "other.gz"
    foreign.write_bytes(gzip.compress(b'{"some": "json"}\n'))
    assert _one_line(_replay(foreign)) == f"gputui: not a gputui recording: {foreign}"
    good = write_xid_tape(tmp_path / "good.tape").read_bytes()
    broken = tmp_path / "broken.tape"
    broken.write_bytes(good[:40] + bytes(b ^ 0x5A for b in good[40:200]) + good[200:])
    assert "broken.tape" in _one_line(_replay(broken))


def test_a_directory_and_no_file_argument(tmp_path: Path) -> None:
    assert "cannot read recording" in _one_line(_replay(tmp_path))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    result = subprocess.run([sys.executable, "-m", "gputui", "replay"], capture_output=True,
                            text=True, timeout=60, env=env, check=False)
    assert _one_line(result).startswith("gputui replay: error: the following arguments")


def test_times_no_calendar_has_are_one_line(tmp_path: Path) -> None:
    """A hostile recording's frame time of 1e300 s would crash the header's clock."""
    from gputui.domain.inputs import ClusterObjects
    from gputui.sources.tape.writer import TapeWriter

    path = tmp_path / "far.tape"
    writer = TapeWriter(path, context="c", server="s")
    writer.objects(ClusterObjects(context="c"), 1e300)
    writer.close()
    assert _one_line(_replay(path)) == (f"gputui: recording {path} is damaged (its times are "
                                        "not times)")
