"""``gputui check --format markdown``: the handoff summary through the real CLI.

On the emulated ``driver-crashloop`` cluster (critical and warning findings): the codes the
scenario plants appear under their severity, every finding with its hint, the exit code is
check's (1: findings), the configured audit log's last 24 h are listed with the
file named (only this cluster's actions: the others are counted), and bad ``--format``
values are one line and exit 2.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gputui.actions.audit import rfc3339
from gputui.domain.markdown import md_text

Run = Callable[..., subprocess.CompletedProcess[str]]
SCENARIO = "driver-crashloop"


def _audit(path: Path) -> None:
    now = time.time()
    lines = [
        {"id": "new", "time": rfc3339(now - 600), "phase": "intent", "context": "gputui-demo",
         "cluster": {"server": "http://127.0.0.1:1", "uid": "an-earlier-demo"},
         "user": "alice", "action": "cordon", "targets": ["gke-prod-h100-pool-7f3a-4vvm"]},
        {"id": "new", "time": rfc3339(now - 599), "phase": "outcome",
         "result": "ok: cordoned 1 node", "error": None, "interrupted": None},
        {"id": "open", "time": rfc3339(now - 300), "phase": "intent", "context": "gputui-demo",
         "user": "alice", "action": "drain", "targets": ["gke-prod-h100-pool-7f3a-bfdz"]},
        {"id": "old", "time": rfc3339(now - 3 * 86400), "phase": "intent",
         "context": "gputui-demo", "user": "bob", "action": "uncordon", "targets": ["gone"]},
    ]
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


#: what driver-crashloop plants once settled (tests/check/test_scenarios.py holds the
#: critical one; the warnings follow from it): code -> its section
PLANTED = {"driver-pod-failing": "Critical", "gpus-unavailable": "Warning",
           "cluster-policy-not-ready": "Warning"}


def _section(text: str, title: str) -> str:
    start = text.index(f"### {title}")
    end = min((i for i in (text.find("\n### ", start + 1), text.find("\n## ", start + 1))
               if i != -1), default=len(text))
    return text[start:end]


def test_markdown_names_every_warning_and_critical_finding(gputui: Run,
                                                          tmp_path: Path) -> None:
    audit = tmp_path / "state" / "gputui" / "audit.jsonl"  # the default under XDG_STATE_HOME
    _audit(audit)
    result = gputui("check", "--demo", "--scenario", SCENARIO, "--format", "markdown",
                    timeout=180)
    assert result.returncode == 1, result.stderr  # as the table's and --json's: findings
    text = result.stdout
    assert text.startswith("# GPU cluster handoff: gputui")
    assert text.index("### Critical") < text.index("### Warning")
    for code, title in PLANTED.items():
        assert f"**{code}** on " in _section(text, title), code
    # each heading's count is the number of findings listed under it, each with its hint
    for title in ("Critical", "Warning"):
        part = _section(text, title)
        count = int(part.split("(", 1)[1].split(")", 1)[0])
        assert part.count("\n- **") == count and part.count("  - Hint: ") == count
    assert f"## Operations (the audit log {md_text(str(audit))}, last 24 h)" in text
    # every demo cluster is "gputui-demo": only this one's actions (by its server URL and
    # kube-system UID) are its, the others' and those of lines without a cluster are
    # counted (issue 29, item 3: before, both were listed as this cluster's)
    assert "**cordon**" not in text and "**drain**" not in text
    assert ("- Note: 1 older action without a cluster id not shown; 1 action on other "
            "clusters not shown\nNo operations recorded.") in text
    assert "uncordon" not in text  # three days old
    assert "(kube-system UID " in text.split("\n")[3]


def test_bad_format_is_one_line_and_exit_2(gputui: Run) -> None:
    result = gputui("check", "--format", "html")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "invalid choice: 'html'" in result.stderr
    # table is accepted (today's output): it goes on to connect, as without --format
    table = gputui("check", "--format", "table")
    assert (table.returncode, table.stderr) == (2, gputui("check").stderr) and \
        "no kubeconfig found" in table.stderr
    both = gputui("check", "--json", "--format", "markdown")
    assert both.returncode == 2 and both.stdout == ""
    assert both.stderr == ("gputui: --json and --format cannot be combined (--json is the "
                           "script contract)\n")


def test_a_log_cut_inside_the_window_is_said(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the log's end is read: when that end starts inside the 24 h, the summary says
    operations may be missing; when it reaches back past them, nothing is said."""
    from gputui import handoff
    from gputui.actions import audit_read
    from gputui.domain.model import ClusterSnapshot

    audit = tmp_path / "state" / "audit.jsonl"
    _audit(audit)
    snapshot = ClusterSnapshot(context="c", generated_at=time.time())
    assert "were read" not in handoff.check_summary(snapshot, str(audit))
    monkeypatch.setattr(handoff, "read_audit",
                        lambda path: audit_read.read_audit(path, max_bytes=450))
    assert "older operations in this window are left out" in \
        handoff.check_summary(snapshot, str(audit))
