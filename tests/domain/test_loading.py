"""Progressive load: a snapshot built before the pod lists arrived says so, and guesses nothing."""

from __future__ import annotations

from gputui.domain.snapshot import SnapshotBuilder
from tests.domain.factory import T0, healthy_pods, node, objects


def test_nodes_without_their_pods_yet_have_no_findings_and_no_pipeline() -> None:
    """Without pods every operand would look absent and the policy missing: while those
    lists load, nodes carry ``loading`` instead of findings, and so does the snapshot."""
    builder = SnapshotBuilder()
    early = builder.build(objects([node("n1"), node("n2", ready=False)], policies=[],
                                  loading=frozenset({"pods", "clusterpolicies"})), T0)
    assert sorted(early.nodes) == ["n1", "n2"] and early.loading == {"pods", "clusterpolicies"}
    assert early.findings == ()
    for view in early.nodes.values():
        assert view.loading and view.findings == () and view.pipeline.stages == ()
    later = builder.build(objects([node("n1"), node("n2", ready=False)],
                                  healthy_pods("n1") + healthy_pods("n2")), T0, frozenset())
    assert later.loading == frozenset() and not later.nodes["n1"].loading
    assert later.nodes["n1"].pipeline.stage("driver") is not None
    assert [f.code for f in later.findings if f.node == "n2"] == ["node-not-ready"]
