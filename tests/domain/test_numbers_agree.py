"""Issue 29, item 10: one figure, one source, so two screens never disagree about it.

Each test fails on the code before its fix:
* the summary's upgrade counts added up to more than the nodes ("7 nodes: 1 done, 1 in
  progress, 5 pending, 1 failed"): a failed node holds a slot, so ``in_progress`` counts
  it, and the sentence counted it twice;
* a node finding's age was made when the node last changed and kept: "in
  wait-for-jobs-required for 0 s" beside upgrade lanes (built every time) saying 66 s,
  "held by choice since 02:52 (42 s)" at 03:01;
* restarts 2 in the finding and 3 in the pipeline row: the row showed the pod's restarts
  (its init containers' too), the finding and the row's own detail the crash-looping
  container's;
* a NotReady node's ``8/8`` counted in the header's ``GPUs 32/40`` (and shown on its row):
  the kubelet's last report, on a node the scheduler places nothing on;
* (the fleet line's "1 nodes on screen" beside five rows is in
  ``tests/metrics/test_feed_live.py``: it needs exporters to scrape.)
"""

from __future__ import annotations

from types import MappingProxyType

from gputui.domain.model import ClusterSnapshot, Finding
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.summary import SummaryInput, build_summary
from gputui.domain.timefmt import duration, next_change
from gputui.domain.views import UpgradePolicy, UpgradeView
from tests.domain import factory as f

NOW = 1_796_000_000.0


def _counts(text: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith("- Auto upgrade:"))
    return line.split("; ", 1)[1]


def test_the_summary_upgrade_counts_add_up_to_the_nodes() -> None:
    """upgrade-slots-held on the demo: 24 nodes, 20 required, 3 waiting for jobs, 1 failed;
    ``in_progress`` is 4 (the failed one holds a slot)."""
    upgrade = UpgradeView(policy=UpgradePolicy(), enabled=True, total=24, in_progress=4,
                          failed=1, pending=20, done=0, lanes=MappingProxyType({}))
    text = build_summary(SummaryInput(ClusterSnapshot(upgrade=upgrade), NOW))
    assert _counts(text) == "24 nodes: 0 done, 3 in progress, 20 pending, 1 failed"


def test_nodes_without_a_state_label_are_counted_too() -> None:
    upgrade = UpgradeView(policy=UpgradePolicy(), enabled=True, total=7, in_progress=1,
                          failed=0, pending=2, done=1)
    text = build_summary(SummaryInput(ClusterSnapshot(upgrade=upgrade), NOW))
    assert _counts(text) == ("7 nodes: 1 done, 1 in progress, 2 pending, 0 failed, "
                             "3 without a state")


def _stalled(snapshot: ClusterSnapshot) -> Finding:
    (found,) = [x for x in snapshot.findings if x.code == "upgrade-stalled" and x.node]
    return found


def test_an_age_in_a_finding_moves_on_with_the_lanes_while_the_node_does_not_change() -> None:
    """One builder, the same objects twice (the trainer keeps running, nothing about the
    node changes): 66 s later the finding says what the upgrade view says."""
    node = f.node(labels={"nvidia.com/gpu-driver-upgrade-state": "wait-for-jobs-required"})
    policy = f.cluster_policy(**f.upgrade_policy(waitForCompletion={"podSelector": "app=trainer"}))
    objects = f.objects([node], f.healthy_pods() + [f.workload("trainer-0")], policies=[policy],
                        label_times={f.NODE: {"nvidia.com/gpu-driver-upgrade-state": f.T0}})
    builder = SnapshotBuilder()
    first = builder.build(objects, f.T0)
    assert "wait-for-jobs-required for 0 s" in _stalled(first).message
    later = builder.build(objects, f.T0 + 66, changed_nodes=())  # as the live source does
    status = later.upgrade.nodes[f.NODE]
    assert status.since is not None and duration(f.T0 + 66 - status.since) == "66 s"
    assert "wait-for-jobs-required for 66 s" in _stalled(later).message
    assert later.nodes[f.NODE].findings == tuple(  # the node's row says the same
        x for x in later.findings if x.node == f.NODE)


def test_held_by_choice_says_how_long_at_the_time_it_is_read() -> None:
    nodes = [f.node("a", labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required",
                                 "nvidia.com/gpu-driver-upgrade.skip": "true"})]
    policy = f.cluster_policy(**f.upgrade_policy(autoUpgrade=True))
    objects = f.objects(nodes, f.healthy_pods("a"), policies=[policy], label_times={
        "a": {"nvidia.com/gpu-driver-upgrade.skip": f.T0 - 42}})
    builder = SnapshotBuilder()
    assert "UTC (42 s)" in _stalled(builder.build(objects, f.T0)).message
    later = builder.build(objects, f.T0 + 9 * 60 - 42, changed_nodes=())
    assert "UTC (9 min)" in _stalled(later).message


def test_next_change_is_where_duration_reads_differently() -> None:
    for seconds in (0, 0.5, 59, 89.9, 90, 119, 5399, 5400, 7199, 172_799, 172_800, 10 ** 6):
        turn = next_change(seconds)
        assert turn > seconds and duration(turn) != duration(seconds)
        assert duration(turn - 0.001) == duration(seconds), seconds


def test_the_pipeline_row_shows_the_restarts_its_finding_says() -> None:
    """The driver's init container restarted once, its main container crash-loops with 2:
    the finding, the stage's detail and the pipeline row all say 2."""
    from rich.console import Console

    from gputui.ui.render.pipeline import render_pipeline
    from gputui.ui.render.upgrades import node_side_text

    pods = f.healthy_pods(overrides={"driver": {"crash_in": "nvidia-driver-ctr",
                                                "restarts": 2}})
    driver = next(p for p in pods if p["metadata"]["name"].startswith("nvidia-driver"))
    driver["status"]["initContainerStatuses"][0]["restartCount"] = 1
    snapshot = SnapshotBuilder().build(f.objects([f.node()], pods), f.T0)
    (failing,) = [x for x in snapshot.findings if x.code == "driver-pod-failing"]
    assert "2 restarts" in failing.message
    node = snapshot.nodes[f.NODE]
    stage = node.pipeline.stage("driver")
    assert stage is not None and stage.restarts == 3 and "2 restarts" in stage.detail
    console = Console(width=160, record=True)
    console.print(render_pipeline(node, f.T0).body)
    row = next(line for line in console.export_text().splitlines()
               if line.strip().startswith("driver"))
    assert row.split()[1:5] == ["✖", "failed", "◀", "2"], row
    assert " · 2 restarts · " in node_side_text(node, f.T0).plain


def test_a_not_ready_nodes_gpus_are_not_counted_allocatable_anywhere() -> None:
    from gputui.ui.node_rows import CELLS

    nodes = [f.node(f"gpu-{i}", gpus=8) for i in range(3)]
    nodes += [f.node("gpu-down", gpus=8, ready=False), f.node("gpu-empty", allocatable=0)]
    pods = [p for n in nodes for p in f.healthy_pods(n["metadata"]["name"])]
    snapshot = SnapshotBuilder().build(f.objects(nodes, pods), f.T0)
    counts = snapshot.counts
    assert (counts.gpus_allocatable, counts.gpus_total) == (24, 40)
    down = snapshot.nodes["gpu-down"]
    assert not down.ready and down.resources.allocatable == 8  # what the kubelet last said
    assert CELLS["gpus"](down) == ("0/8", "crit")
    assert CELLS["gpus"](snapshot.nodes["gpu-0"]) == ("8/8", "")
