"""What the action tests share, one copy each (test modules import from here, never from
one another: ``tests/meta/test_test_imports.py``).
"""

from __future__ import annotations

from pathlib import Path

from gputui.actions.audit import AuditLog
from gputui.actions.runner import Runner
from gputui.sources.writer import KubeWriter


def runner_for(writer: KubeWriter, tmp_path: Path) -> Runner:
    """A runner on ``writer`` with its audit log in ``tmp_path``, permissions checked."""
    runner = Runner(writer, AuditLog(tmp_path / "audit.jsonl"))
    runner.check_permissions()
    return runner
