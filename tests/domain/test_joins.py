"""Time to GPU: a node's join timed stage by stage from what the cluster records, the pool
figures, and ``slow-gpu-join``.

The stage ends are the operand pods' ``Ready`` transition times (the kubelet moves
``lastTransitionTime`` only when the status flips, kubernetes
``pkg/kubelet/status/status_manager.go``), the validator's init containers' finish times
(gpu-operator ``cmd/nvidia-validator/main.go``) and, for what gputui watched, its own
observation; a join the records do not describe is unknown, never estimated.
"""

from __future__ import annotations

from typing import Any

from gputui.domain.checkjson import to_check_json
from gputui.domain.join_pools import nearest_rank
from gputui.domain.model import ClusterSnapshot
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.thresholds import DomainThresholds
from tests.domain import factory as f

DRIVER_NOT_READY = {"driver": {"not_ready": True}}


def ready_at(pod: dict[str, Any], when: float) -> dict[str, Any]:
    """The pod with its Ready condition turned True at ``when``."""
    pod["status"]["conditions"] = [{"type": "Ready", "status": "True",
                                    "lastTransitionTime": f.iso(when)}]
    return pod


def joining_node(name: str, joined: float, allocatable: int = 8, pool: str = "h100-pool",
                 counted: bool = True) -> dict[str, Any]:
    """A GPU node created at ``joined``; GFD's gpu.count only once counted."""
    node = f.node(name, labels={"cloud.google.com/gke-nodepool": pool},
                  allocatable=allocatable)
    node["metadata"]["creationTimestamp"] = f.iso(joined)
    if not counted:
        del node["metadata"]["labels"]["nvidia.com/gpu.count"]
    return node


def join_pods(name: str, joined: float, driver: float, toolkit: float, cuda: float,
              plugin: float | None, stuck_in: str | None = None) -> list[dict[str, Any]]:
    """The four operand pods of a join: stage ends ``driver``..``plugin`` seconds after
    ``joined`` (None: the device plugin not ready yet, the validator ``stuck_in``)."""
    made = joined + 20
    pods = {op: f.operand_pod(op, name, start=made, suffix=name[-4:] + op[:3])
            for op in ("driver", "container-toolkit", "device-plugin")}
    ready_at(pods["driver"], joined + driver)
    ready_at(pods["container-toolkit"], joined + toolkit)
    if plugin is None:
        pods["device-plugin"] = f.operand_pod("device-plugin", name, start=made,
                                              not_ready=True, suffix=name[-4:] + "dev")
    else:
        ready_at(pods["device-plugin"], joined + plugin)
    # the validator's init containers all finish 10 s after it starts (factory): start it so
    # that cuda-validation ends at ``cuda``
    validator = f.operand_pod("operator-validator", name, start=joined + cuda - 10,
                              suffix=name[-4:] + "val", stuck_in=stuck_in)
    validator["metadata"]["creationTimestamp"] = f.iso(made)
    return [*pods.values(), validator]


def build(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], now: float = f.T0,
          **thresholds: Any) -> ClusterSnapshot:
    return SnapshotBuilder(DomainThresholds(**thresholds)).build(f.objects(nodes, pods), now)


def test_a_join_is_timed_stage_by_stage_from_what_the_pods_record() -> None:
    joined = f.T0 - 3600
    snap = build([joining_node("n1", joined)], join_pods("n1", joined, 300, 320, 350, 400))
    join = snap.nodes["n1"].join
    assert join is not None and join.state == "done" and not join.observed
    assert join.total == 400
    assert join.stage_seconds() == (300, 20, 30, 50)
    (pool,) = snap.joins
    assert (pool.pool, pool.count, pool.p50, pool.p90, pool.max) == ("h100-pool", 1, 400, 400, 400)
    assert pool.slowest_stage == "driver"


def test_a_join_before_the_pods_records_is_unknown_never_a_figure() -> None:
    """The node joined 30 days ago; its pods were made yesterday (an upgrade recreated them)."""
    joined = f.T0 - 30 * 86400
    pods = join_pods("n1", f.T0 - 86400, 300, 320, 350, 400)
    snap = build([joining_node("n1", joined)], pods)
    join = snap.nodes["n1"].join
    assert join is not None and join.state == "unknown" and join.total is None
    assert "after it joined" in join.why_unknown
    (pool,) = snap.joins
    assert (pool.count, pool.p50, pool.unknown) == (0, None, 1)
    assert to_check_json(snap)["joins"][0]["p50_s"] is None


def test_a_restarted_pod_moved_its_times_so_it_does_not_time_the_join() -> None:
    joined = f.T0 - 3600
    pods = join_pods("n1", joined, 300, 320, 350, 400)
    for pod in pods:  # every container restarted since: no record is the join's
        for status in pod["status"].get("containerStatuses", []):
            status["restartCount"] = 2
        for status in pod["status"].get("initContainerStatuses", []):
            status["restartCount"] = 1
    snap = build([joining_node("n1", joined)], pods)
    assert snap.nodes["n1"].join.state == "unknown"  # type: ignore[union-attr]


def test_a_joining_node_says_its_stage_and_is_slow_only_past_the_configured_limit() -> None:
    """A pool with fewer timed joins than ``slow_join_min_joins``: 15 min stands in."""
    joined = f.T0 - 10 * 60
    node = joining_node("n1", joined, allocatable=0, counted=False)
    pods = [p for p in join_pods("n1", joined, 300, 320, 350, None, "driver-validation")
            if "driver" not in p["metadata"]["name"]]
    pods.append(f.operand_pod("driver", "n1", start=joined + 20, not_ready=True, suffix="drv"))
    snap = build([node], pods)
    join = snap.nodes["n1"].join
    assert join is not None and join.state == "joining" and join.stage == "driver"
    assert join.elapsed(f.T0) == 600
    assert not [x for x in snap.findings if x.code == "slow-gpu-join"]
    late = build([node], pods, now=f.T0 + 6 * 60)  # 16 min
    (slow,) = [x for x in late.findings if x.code == "slow-gpu-join"]
    assert slow.severity.value == "warning" and slow.node == "n1" and slow.subject == "driver"
    assert "stuck before 'driver ready'" in slow.message and "configured 15 min" in slow.message
    assert to_check_json(late)["joins"][0]["stragglers"] == [
        {"node": "n1", "seconds": 960, "stage": "driver", "joining": True}]


def test_a_pool_with_enough_joins_is_slow_past_twice_its_p90() -> None:
    nodes, pods = [], []
    for index, total in enumerate((300, 320, 340, 360, 380)):
        name = f"done{index}"
        joined = f.T0 - 86400 + index * 1000
        nodes.append(joining_node(name, joined))
        pods += join_pods(name, joined, total - 100, total - 80, total - 50, total)
    joined = f.T0 - 12 * 60
    nodes.append(joining_node("late", joined, allocatable=0, counted=False))
    pods += [p for p in join_pods("late", joined, 300, 320, 350, None, "toolkit-validation")
             if "toolkit" not in p["metadata"]["name"]]
    pods.append(f.operand_pod("container-toolkit", "late", start=joined + 20, not_ready=True,
                              suffix="tkt"))
    snap = build(nodes, pods)
    (pool,) = snap.joins
    assert (pool.count, pool.p50, pool.p90, pool.max) == (5, 340, 380, 380)
    assert pool.limit == 760 and [j.node for j in pool.joining] == ["late"]
    assert not [x for x in snap.findings if x.code == "slow-gpu-join"]  # 12 min < 12:40
    later = build(nodes, pods, now=f.T0 + 60)
    (slow,) = [x for x in later.findings if x.code == "slow-gpu-join"]
    assert slow.subject == "toolkit" and "'toolkit ready'" in slow.message
    assert "2 x the pool's p90 of 6 min" in slow.message


def test_only_joins_within_the_window_count() -> None:
    old, recent = f.T0 - 9 * 86400, f.T0 - 86400
    nodes = [joining_node("old", old), joining_node("new", recent)]
    pods = join_pods("old", old, 900, 920, 950, 1000) + join_pods("new", recent, 1, 2, 3, 100)
    (pool,) = build(nodes, pods).joins
    assert (pool.count, pool.max) == (1, 100)
    (wide,) = build(nodes, pods, join_window_days=10).joins
    assert (wide.count, wide.max) == (2, 1000)


def test_a_node_that_had_its_driver_before_is_not_joining() -> None:
    """GFD counts GPUs only after driver and toolkit are ready: a node with a gpu.count
    waiting for its driver lost it (a crash, a reboot), it is not on its first way."""
    joined = f.T0 - 3 * 3600
    pods = f.healthy_pods("n1", overrides={"driver": {"crash_in": "nvidia-driver-ctr",
                                                      "restarts": 5, "start": joined + 20}})
    snap = build([joining_node("n1", joined, allocatable=0)], pods)
    assert snap.nodes["n1"].join.state == "unknown"  # type: ignore[union-attr]
    assert not [x for x in snap.findings if x.code == "slow-gpu-join"]


def test_gputui_times_what_it_watched_when_the_records_are_gone() -> None:
    """Seen without GPUs, then with: the moment it saw them is the join's end, said so."""
    joined = f.T0 - 300
    builder = SnapshotBuilder()
    node = joining_node("n1", joined, allocatable=0, counted=False)
    first = builder.build(f.objects([node], []), f.T0)
    assert first.nodes["n1"].join.state == "joining"  # type: ignore[union-attr]
    later = f.T0 + 200
    snap = builder.build(f.objects([joining_node("n1", joined)], []), later, changed_nodes={"n1"})
    join = snap.nodes["n1"].join
    assert join is not None and join.observed and join.total == 500


def test_nearest_rank_is_a_value_of_the_list() -> None:
    values = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0]
    assert nearest_rank(values, 50) == 50 and nearest_rank(values, 90) == 90
    assert nearest_rank([7.0], 90) == 7 and nearest_rank([1.0, 2.0], 50) == 1
