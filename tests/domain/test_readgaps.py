"""Unknown is not ok: what could not be read is carried into the snapshot, said with what it
hides, and never shown as healthy (a 403 is unknown; a CRD that is not installed is known)."""

from __future__ import annotations

from gputui.domain.checkjson import exit_code, to_check_json
from gputui.domain.model import StageStatus
from gputui.domain.readgaps import FORBIDDEN, NOT_SERVED, REACH, health_unknowable, read_gaps
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain.factory import T0, healthy_pods, node, objects


def _build(**extra: object):  # type: ignore[no-untyped-def]
    return SnapshotBuilder().build(objects([node("n1"), node("n2")], **extra), T0)


def test_forbidden_pods_make_rows_unknown_and_operands_unknown_not_absent() -> None:
    snap = _build(unreadable={"pods": FORBIDDEN})
    assert dict(snap.unreadable) == {"pods": FORBIDDEN}
    assert [g.resource for g in snap.gaps] == ["pods"] and snap.gaps[0].required
    for view in snap.nodes.values():
        assert view.unknown == ("pods",) and view.findings == ()
        statuses = {s.operand: s.status for s in view.pipeline.stages}
        assert statuses["driver"] is StageStatus.UNKNOWN
        assert StageStatus.ABSENT not in statuses.values()
    assert exit_code(snap) == 2
    body = to_check_json(snap)
    assert body["unreadable"] == [{"resource": "pods", "reason": "forbidden",
                                   "hides": REACH["pods"].hides, "required": True}]
    assert {s["status"] for s in body["nodes"][0]["pipeline"]} == {"unknown"}


def test_a_finding_from_node_data_alone_still_shows_while_pods_are_unknown() -> None:
    snap = SnapshotBuilder().build(objects([node("n1", allocatable=0), node("n2")],
                                           unreadable={"pods": FORBIDDEN}), T0)
    n1 = snap.nodes["n1"]
    assert [f.code for f in n1.findings] == ["gpus-unavailable"]
    assert n1.findings[0].severity.value == "critical" and "cannot be read" in n1.findings[0].hint
    assert snap.nodes["n2"].findings == () and snap.nodes["n2"].unknown == ("pods",)


def test_forbidden_cluster_policy_is_unknown_not_missing() -> None:
    snap = _build(pods=healthy_pods("n1") + healthy_pods("n2"), policies=[],
                  forbidden=frozenset({"clusterpolicies"}))
    assert snap.cluster_policy.state == "unknown"
    assert not [f for f in snap.findings if f.code.startswith("cluster-policy")]
    assert snap.unreadable == {"clusterpolicies": FORBIDDEN}  # the older field counts too
    assert exit_code(snap) == 2
    # pods readable: the operands that run are read from them; the rest may be disabled
    view = snap.nodes["n1"]
    assert view.pipeline.stage("driver").status is StageStatus.READY  # type: ignore[union-attr]


def test_cluster_policy_crd_not_served_is_a_real_missing_finding() -> None:
    snap = _build(pods=healthy_pods("n1") + healthy_pods("n2"), policies=[],
                  unreadable={"clusterpolicies": NOT_SERVED, "nvidiadrivers": NOT_SERVED})
    assert snap.cluster_policy.state == "missing" and snap.gaps == ()
    assert any(f.code == "cluster-policy-missing" and f.severity.value == "critical"
               for f in snap.findings)
    assert exit_code(snap) == 1 and to_check_json(snap)["unreadable"] == []


def test_forbidden_daemonsets_leave_mig_manager_unknown_not_absent() -> None:
    mig = node("n1", labels={"nvidia.com/mig.capable": "true"})
    # no deploy label: whether mig-manager should run here rests on its DaemonSet
    mig["metadata"]["labels"].pop("nvidia.com/gpu.deploy.mig-manager", None)
    pods = [p for p in healthy_pods("n1") if "mig-manager" not in p["metadata"]["name"]]
    snap = SnapshotBuilder().build(objects([mig], pods, unreadable={"daemonsets": FORBIDDEN}),
                                   T0)
    stage = snap.nodes["n1"].pipeline.stage("mig-manager")
    assert stage is not None and stage.status is StageStatus.UNKNOWN
    assert "daemonsets" in stage.detail


def test_only_optional_sources_missing_keep_the_exit_code() -> None:
    unreadable = {"events": FORBIDDEN, "configmaps": FORBIDDEN, "nvidiadrivers": FORBIDDEN}
    snap = _build(pods=healthy_pods("n1") + healthy_pods("n2"), unreadable=unreadable)
    assert not health_unknowable(snap.unreadable)
    assert [g.resource for g in snap.gaps] == ["configmaps", "events", "nvidiadrivers"]
    assert all(not v.unknown for v in snap.nodes.values())
    assert exit_code(snap) == 0
    assert {e["resource"] for e in to_check_json(snap)["unreadable"]} == set(unreadable)


def test_every_resource_says_why_it_is_required_or_not() -> None:
    assert {r for r, reach in REACH.items() if reach.required} == {
        "nodes", "pods", "daemonsets", "clusterpolicies"}
    assert all(reach.why and reach.hides and reach.short for reach in REACH.values())
    assert read_gaps({"nodes": FORBIDDEN, "events": FORBIDDEN})[0].resource == "nodes"


def test_gpu_workload_pods_alone_are_an_optional_gap() -> None:
    """A viewer with a Role in the operator namespace reads the operand pods, not every pod:
    the pipelines are known, only the GPU workloads are not (and the exit code stays)."""
    snap = _build(pods=healthy_pods("n1") + healthy_pods("n2"),
                  unreadable={"gpu-pods": FORBIDDEN}, forbidden=frozenset({"pods"}))
    assert dict(snap.unreadable) == {"gpu-pods": FORBIDDEN}
    assert [(g.resource, g.required) for g in snap.gaps] == [("gpu-pods", False)]
    assert all(not v.unknown for v in snap.nodes.values()) and exit_code(snap) == 0
