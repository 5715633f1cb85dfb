"""When the audit log cannot be written, nothing is sent, and the result says why.

Each unsafe path is planted under tmp_path as an attacker or a mistake would leave it; the
emulated server's request log proves that no write (other than the dry run) arrived.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gputui.actions.audit import AuditLog
from gputui.actions.base import Cancel
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.sim.cluster import EmulatedCluster
from gputui.sources.writer import KubeWriter
from tests.actions.conftest import gpu_node, snapshot_of

REPO = Path(__file__).resolve().parents[2]
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def _directory(path: Path) -> None:
    path.mkdir(parents=True)


def _symlink_to_a_file(path: Path) -> None:
    elsewhere = path.parent.parent / "elsewhere.txt"
    elsewhere.write_text("someone else's file\n")
    elsewhere.chmod(0o644)
    path.symlink_to(elsewhere)


def _dangling_symlink(path: Path) -> None:
    path.symlink_to(path.parent.parent / "planted.jsonl")


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _hard_link(path: Path) -> None:
    other = path.parent.parent / "other.txt"
    other.write_text("")
    os.link(other, path)


def _foreign_file(path: Path) -> None:
    path.write_text("")
    os.chown(path, *_nobody())


def _foreign_dir(path: Path) -> None:
    os.chown(path.parent, *_nobody())


def _symlinked_dir(path: Path) -> None:
    real = path.parent.parent / "real-dir"
    real.mkdir(mode=0o700)
    path.parent.rmdir()
    path.parent.symlink_to(real)


CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "directory": (_directory, "is a directory, not a file"),
    "symlink": (_symlink_to_a_file, "is a symbolic link"),
    "dangling symlink": (_dangling_symlink, "is a symbolic link"),
    "fifo": (_fifo, "is not a regular file"),
    "hard link": (_hard_link, "has 2 hard links"),
    "symlinked directory": (_symlinked_dir, "is a symbolic link"),
}
ROOT_CASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "file of another user": (_foreign_file, "is owned by uid"),
    "directory of another user": (_foreign_dir, "is owned by uid"),
}


def _run_cordon(server: EmulatedCluster, writer: KubeWriter, tmp_path: Path, path: Path,
                request_log: list[tuple[str, str]], reason: str) -> None:
    """Check, plan, dry-run and apply a cordon on ``path``: refused, nothing sent."""
    server.store.create("nodes", gpu_node("gpu-1"))
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    why = runner.blocked(action("cordon"))
    assert why is not None and reason in why  # greyed from the start, with the reason
    # the action's own plan, not the runner's (which is blocked now): as if the path had
    # gone bad after start; the apply itself must refuse
    plan = action("cordon").plan(snapshot_of(server, tmp_path), ["gpu-1"], {})
    dry = runner.dry_run(plan)
    assert dry.ok and not plan.blocked
    sent_before = len(request_log)
    result = runner.apply(action("cordon"), plan, dry, lambda p: None, Cancel())
    assert not result.ok and result.error is not None
    assert result.error.startswith("nothing was sent: ") and reason in result.error
    assert len(result.error.splitlines()) == 1
    assert request_log[sent_before:] == []  # not even a read: nothing reached the server
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]


@pytest.mark.parametrize("case", list(CASES))
def test_an_unsafe_audit_path_sends_nothing(case: str, server: EmulatedCluster,
                                            request_log: list[tuple[str, str]],
                                            writer: KubeWriter, tmp_path: Path) -> None:
    plant, reason = CASES[case]
    path = tmp_path / "state" / "audit.jsonl"
    path.parent.mkdir(mode=0o700)
    plant(path)
    _run_cordon(server, writer, tmp_path, path, request_log, reason)
    if case == "symlink":  # the target was not touched, nor made 0600
        target = tmp_path / "elsewhere.txt"
        assert target.read_text() == "someone else's file\n"
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
    if case == "dangling symlink":
        assert not (tmp_path / "planted.jsonl").exists()


@as_root
@pytest.mark.parametrize("case", list(ROOT_CASES))
def test_an_audit_path_owned_by_another_user_sends_nothing(
        case: str, server: EmulatedCluster, request_log: list[tuple[str, str]],
        writer: KubeWriter, tmp_path: Path) -> None:
    plant, reason = ROOT_CASES[case]
    path = tmp_path / "state" / "audit.jsonl"
    path.parent.mkdir(mode=0o700)
    plant(path)
    _run_cordon(server, writer, tmp_path, path, request_log, reason)


def test_an_existing_0644_log_is_made_0600_and_its_directory_0700(
        server: EmulatedCluster, writer: KubeWriter, tmp_path: Path) -> None:
    path = tmp_path / "state" / "audit.jsonl"
    path.parent.mkdir(mode=0o755)
    path.parent.chmod(0o755)
    path.write_text('{"old": "line"}\n')
    path.chmod(0o644)
    server.store.create("nodes", gpu_node("gpu-1"))
    runner = Runner(writer, AuditLog(path))
    runner.check_permissions()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # at start, before any action
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    plan = runner.plan(action("cordon"), snapshot_of(server, tmp_path), ["gpu-1"], {})
    assert runner.apply(action("cordon"), plan, runner.dry_run(plan), lambda p: None,
                        Cancel()).ok
    lines = path.read_text().splitlines()
    assert lines[0] == '{"old": "line"}' and len(lines) == 3


def test_read_only_mode_neither_checks_nor_creates_the_log(
        server: EmulatedCluster, tmp_path: Path) -> None:
    from tests.actions.conftest import writer_for

    writer = writer_for(server, tmp_path, read_only=True)
    try:
        path = tmp_path / "state" / "audit.jsonl"
        runner = Runner(writer, AuditLog(path))
        runner.check_permissions()
        assert runner.audit_problem is None and not path.parent.exists()
    finally:
        writer.close()


_FULL_DISK = """
import json, resource, signal, sys
from gputui.actions.audit import AuditLog
from gputui.actions.base import Cancel
from gputui.actions.registry import action
from gputui.actions.runner import Runner
from gputui.settings import Settings
from gputui.sources.connect import read_snapshot
from gputui.sources.kubeconfig import load_target
from gputui.sources.writer import KubeWriter

kubeconfig, audit = sys.argv[1], sys.argv[2]
writer = KubeWriter(load_target(kubeconfig))
runner = Runner(writer, AuditLog(audit))
runner.check_permissions()
plan = runner.plan(action("cordon"), read_snapshot(Settings(kubeconfig=kubeconfig)),
                   ["gpu-1"], {})
dry = runner.dry_run(plan)
# from here no file may grow: the next byte appended to the audit log fails (EFBIG), as a
# full disk fails it (ENOSPC)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
size = len(open(audit, "rb").read())
resource.setrlimit(resource.RLIMIT_FSIZE, (size, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
result = runner.apply(action("cordon"), plan, dry, lambda p: None, Cancel())
print(json.dumps({"ok": result.ok, "error": result.error}))
"""


def test_a_log_that_cannot_grow_sends_nothing(server: EmulatedCluster,
                                              request_log: list[tuple[str, str]],
                                              tmp_path: Path) -> None:
    server.store.create("nodes", gpu_node("gpu-1"))
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    audit = tmp_path / "audit.jsonl"
    audit.write_text('{"old": "line"}\n')
    script = tmp_path / "full_disk.py"
    script.write_text(_FULL_DISK)
    done = subprocess.run([sys.executable, str(script), str(config), str(audit)],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    assert not answer["ok"] and answer["error"].startswith("nothing was sent: cannot write "
                                                           "the audit log")
    assert "File too large" in answer["error"]
    patches = [path for method, path in request_log if method == "PATCH"]
    assert patches == ["/api/v1/nodes/gpu-1"]  # the dry run only (dryRun=All)
    assert "unschedulable" not in server.store.get("nodes", "gpu-1", None)["spec"]
    assert audit.read_text() == '{"old": "line"}\n'
