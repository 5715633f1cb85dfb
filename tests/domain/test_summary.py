"""The handoff summary (:mod:`gputui.domain.summary`): each section, from frozen values.

What the next person on call reads: severities in order with every node and hint, upgrade
and MIG trouble, the session's operations paired with their outcomes, and what could not be
read said to be unknown (never left out, never "ok").
"""

from __future__ import annotations

import json
from types import MappingProxyType

from markdown_it import MarkdownIt

from gputui.actions.audit_read import read_audit
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.operations import NO_OUTCOME, pair_operations, parse_time
from gputui.domain.summary import SECTIONS, SummaryInput, build_summary, iso_utc
from gputui.domain.views import (
    ClusterPolicyView,
    MigView,
    NodeMigView,
    NodeUpgradeStatus,
    UpgradePolicy,
    UpgradeView,
)

NOW = 1_796_000_000.0  # 2026-11-30T...Z

FINDINGS = (
    Finding("xid-error", Severity.CRITICAL, "gpu-a", "GPU 3: XID 79", "Drain and reboot."),
    Finding("cluster-policy-not-ready", Severity.WARNING, None, "notReady: state-driver",
            "Open the nodes.", nodes=("gpu-b", "gpu-c")),
    Finding("upgrade-failed", Severity.WARNING, "gpu-b", "driver upgrade failed", "Retry."),
    Finding("validator-stuck", Severity.INFO, "gpu-c", "validator stuck", "Wait."),
)


def snapshot(**fields: object) -> ClusterSnapshot:
    base: dict[str, object] = {
        "context": "prod-east", "server": "https://10.0.0.1:6443", "generated_at": NOW,
        "cluster_policy": ClusterPolicyView(name="cluster-policy", state="notReady",
                                         not_ready_states=("state-driver",)),
        "findings": FINDINGS,
        "upgrade": UpgradeView(
            policy=UpgradePolicy(), enabled=True, total=3, in_progress=2, failed=1, done=1,
            lanes=MappingProxyType({"drain-required": ("gpu-c",), "upgrade-failed": ("gpu-b",),
                                    "upgrade-done": ("gpu-a",)}),
            nodes=MappingProxyType({
                "gpu-b": NodeUpgradeStatus("gpu-b", "upgrade-failed", wait_reason="pod crash"),
                "gpu-c": NodeUpgradeStatus("gpu-c", "drain-required",
                                           wait_reason="PDB blocks eviction of trainer-0")})),
        "mig": MigView(nodes=MappingProxyType({
            "gpu-m1": NodeMigView("gpu-m1", "all-3g.20gb", None, "failed", "single", NOW - 60,
                                  True),
            "gpu-m2": NodeMigView("gpu-m2", "all-1g.10gb", "all-1g.10gb", "success", "single",
                                  NOW - 60, True),
            "gpu-m3": NodeMigView("gpu-m3", "all-balanced", None, "pending", "single", None,
                                  True)}))}
    base.update(fields)
    return ClusterSnapshot(**base)  # type: ignore[arg-type]


def section(text: str, title: str) -> str:
    """The lines under ``## title`` up to the next ``## ``."""
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def test_header_names_context_cluster_and_utc_time() -> None:
    text = build_summary(SummaryInput(snapshot(), NOW))
    assert text.startswith("# GPU cluster handoff: prod-east\n")
    assert "- Cluster: https://10.0.0.1:6443" in text
    assert f"- Time: {iso_utc(NOW)} (UTC)" in text
    assert iso_utc(0) == "1970-01-01T00:00:00Z"


def test_policy_state_and_not_ready_operands() -> None:
    policy = section(build_summary(SummaryInput(snapshot(), NOW)), "ClusterPolicy")
    assert "cluster-policy: **notReady**" in policy and "state-driver" in policy


def test_findings_by_severity_critical_then_warning_then_info_with_nodes_and_hints() -> None:
    findings = section(build_summary(SummaryInput(snapshot(), NOW)), "Findings")
    assert "1 critical, 2 warning, 1 info" in findings
    order = [findings.index(h) for h in ("### Critical (1)", "### Warning (2)", "### Info (1)")]
    assert order == sorted(order)
    for finding in FINDINGS:
        assert f"**{finding.code}**" in findings and finding.hint in findings
    # a cluster finding names its nodes
    assert "**cluster-policy-not-ready** on the cluster" in findings
    assert "  - Nodes: gpu-b, gpu-c" in findings
    assert findings.index("**xid-error** on gpu-a") < findings.index("**upgrade-failed**")


def test_no_findings_with_a_required_gap_is_unknown_not_healthy() -> None:
    text = build_summary(SummaryInput(snapshot(findings=(), unreadable=MappingProxyType(
        {"pods": "forbidden"})), NOW))
    assert "health **unknown**" in section(text, "Findings")
    gaps = section(text, "Could not be read")
    assert "cannot read pods \\(403\\)" in gaps or "cannot read pods (403)" in gaps
    assert "unknown" in gaps and "No findings." not in text


def test_everything_read_says_so() -> None:
    text = build_summary(SummaryInput(snapshot(findings=()), NOW))
    assert "No findings." in text
    assert "Nothing: every resource gputui reads was read." in section(text,
                                                                      "Could not be read")


def test_still_loading_is_unknown() -> None:
    text = build_summary(SummaryInput(snapshot(loading=frozenset({"clusterpolicies"})), NOW))
    assert "still loading clusterpolicies: what it feeds is unknown" in text
    assert "**unknown**" in section(text, "ClusterPolicy")


def test_upgrade_counts_by_state_failed_and_waiting_nodes() -> None:
    upgrade = section(build_summary(SummaryInput(snapshot(), NOW)), "Driver upgrade")
    assert "drain-required 1, upgrade-failed 1, upgrade-done 1" in upgrade
    assert "- Failed: gpu-b: pod crash" in upgrade
    assert "- Waiting: gpu-c in drain-required: PDB blocks eviction of trainer-0" in upgrade


def test_no_upgrade_policy_is_said() -> None:
    text = build_summary(SummaryInput(snapshot(upgrade=UpgradeView()), NOW))
    assert "No driver upgrade is managed" in section(text, "Driver upgrade")


def test_mig_lists_every_state_but_success() -> None:
    mig = section(build_summary(SummaryInput(snapshot(), NOW)), "MIG")
    assert "gpu-m1: **failed**, config all-3g.20gb" in mig
    assert "gpu-m3: **pending**" in mig and "gpu-m2" not in mig
    assert "## MIG" not in build_summary(SummaryInput(snapshot(mig=MigView()), NOW))


def _intent(audit_id: str, when: str, action: str, targets: list[str]) -> dict[str, object]:
    return {"id": audit_id, "time": when, "phase": "intent", "context": "prod-east",
            "user": "alice", "action": action, "targets": targets, "dry_run": "passed"}


def _outcome(audit_id: str, result: str, error: str | None = None) -> dict[str, object]:
    return {"id": audit_id, "time": "2026-11-30T10:00:05.000Z", "phase": "outcome",
            "result": result, "error": error, "interrupted": None}


AUDIT = [
    _intent("a", "2026-11-30T10:00:00.000Z", "cordon", ["gpu-a"]),
    _intent("b", "2026-11-30T10:01:00.000Z", "drain", ["gpu-a", "gpu-b"]),
    _outcome("a", "ok: cordoned 1 node"),
    _intent("c", "2026-11-29T09:00:00.000Z", "uncordon", ["gpu-z"]),  # before the window
    _outcome("c", "ok: uncordoned 1 node"),
    _outcome("ghost", "ok: nothing"),  # its intent is not in the file
    {"phase": "intent"},  # no id
]


def test_audit_intents_pair_with_outcomes_and_a_missing_outcome_is_said() -> None:
    since = parse_time("2026-11-30T00:00:00Z")
    ops = pair_operations(AUDIT, since=since)
    assert [(op.action, op.targets, op.outcome) for op in ops] == [
        ("cordon", ("gpu-a",), "ok: cordoned 1 node"),
        ("drain", ("gpu-a", "gpu-b"), NO_OUTCOME)]
    assert len(pair_operations(AUDIT)) == 3  # no window: the older uncordon too
    text = build_summary(SummaryInput(snapshot(), NOW, ops))
    operations = section(text, "Operations (this session)")
    assert "**cordon** on gpu-a by alice: ok: cordoned 1 node" in operations
    assert "**drain** on gpu-a, gpu-b by alice: no outcome recorded" in operations
    assert "uncordon" not in operations


def test_an_intent_without_a_readable_time_is_outside_any_window() -> None:
    entries = [_intent("x", "yesterday", "cordon", ["gpu-a"]),
               _intent("y", "2026-11-30T10:00:00", "cordon", ["gpu-a"])]  # no offset
    assert pair_operations(entries, since=0.0) == ()
    assert len(pair_operations(entries)) == 2


def test_failed_outcome_carries_its_error() -> None:
    ops = pair_operations([_intent("a", "2026-11-30T10:00:00Z", "drain", ["n"]),
                           _outcome("a", "failed: 1 of 2 evicted", "PDB refused")])
    assert ops[0].outcome == "failed: 1 of 2 evicted; error: PDB refused"


def test_no_operations_and_an_unreadable_log_are_said() -> None:
    text = build_summary(SummaryInput(snapshot(), NOW, (), "the audit log /x, last 24 h",
                                      "cannot read the audit log /x: Permission denied"))
    operations = section(text, "Operations")
    assert "No operations recorded." in operations and "Permission denied" in operations


def test_read_audit_skips_cut_lines_and_reads_only_the_end(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "audit.jsonl"
    lines = [json.dumps(entry) for entry in AUDIT[:3]]
    path.write_text("\n".join(lines) + '\n{"id": "cut', encoding="utf-8")
    read = read_audit(path)
    assert len(read.entries) == 3 and read.skipped == 1 and "1 unreadable" in read.note
    tail = read_audit(path, max_bytes=len(lines[-1]) + 20)
    assert [e.get("id") for e in tail.entries] == ["a"] and tail.cut and not read.cut
    assert read_audit(path.parent / "none.jsonl").entries == ()


def test_hostile_names_cannot_add_structure() -> None:
    evil = "gpu-x](https://evil.example)`|<img src=x>\n# pwned\x1b]52;c;AAAA\x07"
    snap = snapshot(findings=(Finding("xid-error", Severity.CRITICAL, evil, evil, evil),))
    text = build_summary(SummaryInput(snap, NOW))
    assert "\x1b" not in text and "\x07" not in text
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(text)
    inline = [child.type for token in tokens for child in token.children or ()]
    assert set(inline) <= {"text", "strong_open", "strong_close", "softbreak"}, inline
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if "pwned" in h]
    assert "gpu-x\\](https://evil.example)\\`\\|\\<img src=x\\>\\\\n\\# pwned" in text


def test_sections_are_a_tuple_to_extend() -> None:
    """A new section (the incident timeline) is one more function in SECTIONS."""
    def extra(summary: SummaryInput) -> list[str]:
        return ["## Extra", "", f"- {len(summary.snapshot.findings)} findings"]

    text = build_summary(SummaryInput(snapshot(), NOW), (*SECTIONS, extra))
    assert text.endswith("## Extra\n\n- 4 findings\n")


def test_timeline_section_lists_the_affected_nodes_and_every_action() -> None:
    """The last hour of events for nodes with warning or critical findings (gpu-a, gpu-b),
    plus actions; gpu-c (info only), older events and cluster text stay out or inert."""
    from gputui.domain.timeline import make_event

    events = (
        make_event(NOW - 7200, "ready", "gpu-a", "NotReady", Severity.WARNING),
        make_event(NOW - 600, "xid", "gpu-a", "XID 79 on GPU 3: fallen off the bus",
                   Severity.CRITICAL),
        make_event(NOW - 500, "finding", "gpu-c", "validator-stuck: validator stuck"),
        make_event(NOW - 400, "upgrade", "gpu-b", "upgrade upgrade-done → upgrade-failed"),
        make_event(NOW - 300, "action", "gpu-x", "cordon on gpu-x: ok: done", who="alice|`"),
    )
    text = build_summary(SummaryInput(snapshot(), NOW, timeline=events,
                                      timeline_since=NOW - 9000))
    part = text[text.index("## Timeline (last hour)"):text.index("## Could not be read")]
    assert f"Events of gpu-a, gpu-b and every action, since {iso_utc(NOW - 3600)}:" in part
    assert f"- {iso_utc(NOW - 600)} gpu-a: XID 79 on GPU 3: fallen off the bus" in part
    assert f"- {iso_utc(NOW - 400)} gpu-b: upgrade upgrade-done → upgrade-failed" in part
    assert f"- {iso_utc(NOW - 300)} gpu-x: cordon on gpu-x: ok: done (by alice\\|\\`)" in part
    assert "NotReady" not in part and "validator stuck" not in part
    assert part.index("XID 79") < part.index("upgrade-failed")  # oldest first


def test_timeline_section_says_when_there_is_none() -> None:
    check = build_summary(SummaryInput(snapshot(), NOW))
    assert ("## Timeline (last hour)\n\nNo live timeline: a one-shot read sees no changes"
            in check)
    quiet = build_summary(SummaryInput(snapshot(), NOW, timeline=(), timeline_since=NOW - 60))
    assert (f"No events for gpu-a, gpu-b, and no action, since {iso_utc(NOW - 60)}."
            in quiet)
