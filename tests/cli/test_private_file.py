"""``open_private``: the rules the audit and debug logs share, on paths planted as an
attacker on a shared machine would plant them."""

from __future__ import annotations

import os
import pwd
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gputui.privatefile import PrivateFileError, open_private

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _nobody() -> int:
    return pwd.getpwnam("nobody").pw_uid


def test_a_new_file_is_0600_in_a_new_0700_directory(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "log"
    os.close(open_private(path, "the audit log", private_dir=True))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


@as_root
def test_a_symlink_on_the_way_owned_by_a_third_user_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    hop = tmp_path / "hop"
    hop.symlink_to(real)
    os.lchown(hop, _nobody(), -1)
    with pytest.raises(PrivateFileError, match=r"goes through .*hop, a symbolic link owned by"):
        open_private(hop / "gputui" / "audit.jsonl", "the audit log", private_dir=True)
    assert not (real / "gputui").exists()
    os.lchown(hop, 0, -1)  # a link of root's (or ours) on the way is an ordinary setup
    os.close(open_private(hop / "gputui" / "audit.jsonl", "the audit log", private_dir=True))


@as_root
def test_the_debug_log_may_live_in_a_shared_sticky_directory(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chown(shared, _nobody(), -1)
    shared.chmod(0o1777)
    os.close(open_private(shared / "gputui.log", "the log file"))
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777  # not ours to change
    with pytest.raises(PrivateFileError, match="is owned by uid"):
        open_private(shared / "audit.jsonl", "the audit log", private_dir=True)


def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "log"
    os.mkfifo(fifo)
    code = ("import sys; from gputui.privatefile import open_private, PrivateFileError\n"
            "try:\n    open_private(sys.argv[1], 'the log file')\n"
            "except PrivateFileError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True,
                          text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert done.stdout.strip() == f"the log file {fifo} is not a regular file"
