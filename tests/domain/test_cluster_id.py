"""Which cluster an audit line is about (:mod:`gputui.domain.cluster_id`), and the summary
that keeps only this cluster's actions and reads "done" then "failed" in order (issue 29,
item 3). Every test here fails on the code before the change (no ``cluster`` was read, the
summary kept every operation, nothing said a finding came after an action)."""

from __future__ import annotations

from gputui.domain.cluster_id import (
    ClusterId,
    bare_server,
    cluster_id,
    parse_cluster,
    same_cluster,
    uid_of_namespace,
)
from gputui.domain.model import ClusterSnapshot, Finding, Severity
from gputui.domain.operations import for_cluster, pair_operations
from gputui.domain.summary import SummaryInput, build_summary

PROD = {"server": "https://prod.example:6443", "uid": "u-prod"}
NOW = 1_796_000_000.0


def _intent(audit_id: str, cluster: object, node: str = "gpu-a",
            action: str = "cordon", time: str = "2026-11-30T10:00:00Z") -> dict[str, object]:
    line: dict[str, object] = {"id": audit_id, "time": time, "phase": "intent",
                               "context": "prod", "user": "alice", "action": action,
                               "targets": [node]}
    if cluster is not None:
        line["cluster"] = cluster
    return line


def test_the_url_loses_its_userinfo_and_compares_without_case_or_trailing_slash() -> None:
    assert bare_server("https://admin:pw@Prod.Example:6443/") == "https://prod.example:6443"
    assert cluster_id("https://u:p@k:6443", "x").to_json() == {"server": "https://k:6443",
                                                               "uid": "x"}
    assert "pw" not in bare_server("not a url admin:pw@host")


def test_same_cluster_needs_the_url_and_the_uid_when_both_are_known() -> None:
    ours = ClusterId("https://prod.example:6443", "u-prod")
    assert same_cluster(ours, ClusterId("https://PROD.example:6443/", "u-prod"))
    assert not same_cluster(ours, ClusterId("https://prod.example:6443", "u-rebuilt"))
    assert not same_cluster(ours, ClusterId("https://staging:6443", "u-prod"))
    # one side could not read its UID (403): the URL alone decides
    assert same_cluster(ClusterId("https://prod.example:6443"), ours)
    assert same_cluster(ours, ClusterId("https://prod.example:6443"))


def test_a_hostile_cluster_field_names_no_cluster() -> None:
    for bad in (None, "https://k", {"server": 7}, {"server": ""}, {"server": "k\x1b[2J"},
                {"server": "x" * 5000}, ["https://k"]):
        assert parse_cluster(bad) is None, bad
    assert parse_cluster({"server": "https://k", "uid": "\x07"}) == ClusterId("https://k")
    assert uid_of_namespace({"metadata": {"uid": "abc"}}) == "abc"
    assert uid_of_namespace({"metadata": {"uid": 5}}) == "" == uid_of_namespace([])


def test_only_this_clusters_operations_are_kept_and_the_rest_counted() -> None:
    lines = [_intent("1", PROD), _intent("2", {**PROD, "uid": "u-other"}), _intent("3", None),
             _intent("4", None), _intent("5", {"server": "https://staging", "uid": "u-prod"})]
    mine = for_cluster(pair_operations(lines), cluster_id(PROD["server"], PROD["uid"]))
    assert [op.id for op in mine.operations] == ["1"]
    assert (mine.other_clusters, mine.without_id) == (2, 2)
    assert mine.left_out() == ["2 older actions without a cluster id not shown",
                               "2 actions on other clusters not shown"]


def test_a_failure_after_a_successful_action_reads_in_order() -> None:
    """The MIG change was set ("done"); the MIG manager failed it later. The summary says
    the failure came after, under the action, not as a second, contradicting fact."""
    lines = [_intent("1", PROD, "gpu-m", "mig-config-safe"),
             {"id": "1", "time": "2026-11-30T10:00:05Z", "phase": "outcome",
              "result": "ok: MIG layout all-1g.10gb set on gpu-m: done"},
             _intent("2", PROD, "gpu-m", "cordon", "2026-11-30T09:00:00Z")]
    snap = ClusterSnapshot(context="prod", server=PROD["server"], cluster_uid="u-prod",
                           generated_at=NOW, findings=(
                               Finding("mig-config-failed", Severity.WARNING, "gpu-m",
                                       "MIG manager failed all-1g.10gb", "Look."),))
    mine = for_cluster(pair_operations(lines), cluster_id(snap.server, snap.cluster_uid))
    text = build_summary(SummaryInput(snap, NOW, mine.operations))
    operations = text[text.index("## Operations"):text.index("## Timeline")]
    done = operations.index("**mig-config-safe** on gpu-m by alice: ok: MIG layout")
    after = operations.index("  - Now, after it: **mig-config-failed** on gpu-m: MIG manager "
                             "failed all-1g.10gb")
    assert done < after
    # by time (the cordon's line came later in the file), and said once, under the last
    # action on the node, not under every action on it
    assert operations.index("**cordon**") < done
    assert operations.count("Now, after it") == 1
