"""A node coming up is judged from its own pipeline and age, not from its findings.

A joining node has no ``nvidia.com/gpu.count`` until gpu-feature-discovery runs, and GFD waits
behind the toolkit in ``toolkit-validation`` (gpu-operator
``assets/gpu-feature-discovery/0500_daemonset.yaml``), so while its driver compiles nothing
but its pipeline says it is coming up. The ClusterPolicy is ``notReady`` meanwhile (the
operator's ``isDaemonSetReady``, ``controllers/object_controls.go``).
"""

from __future__ import annotations

from typing import Any

from gputui.domain.checkjson import exit_code
from gputui.domain.model import Severity
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f
from tests.domain.factory import NOT_READY, build, joining_pods, of

#: labels GFD writes once it runs (gpu-feature-discovery ``internal/lm``): absent while joining
GFD_PREFIXES = ("nvidia.com/gpu.count", "nvidia.com/gpu.product", "nvidia.com/gpu.memory",
                "nvidia.com/gpu.family", "nvidia.com/cuda.", "nvidia.com/gfd.",
                "nvidia.com/gpu.replicas", "nvidia.com/mig.capable", "nvidia.com/mps.capable")


def joining_node(name: str = f.NODE, age: float = 240.0,
                 labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A node as it is while it joins: NFD's PCI label and the operator's gpu.present and
    deploy labels, none of GFD's labels (no ``gpu.count``), no ``nvidia.com/gpu`` capacity."""
    node = f.node(name, labels=labels)
    for key in [k for k in node["metadata"]["labels"] if k.startswith(GFD_PREFIXES)]:
        del node["metadata"]["labels"][key]
    node["metadata"]["labels"]["feature.node.kubernetes.io/pci-10de.present"] = "true"
    node["metadata"]["labels"]["nvidia.com/gpu.present"] = "true"
    node["metadata"]["creationTimestamp"] = f.iso(f.T0 - age)
    for field in ("capacity", "allocatable"):
        node["status"][field].pop("nvidia.com/gpu", None)
    return node


def test_joining_node_without_a_gpu_count_explains_the_policy() -> None:
    """No gpu.count yet, so no GPU finding: the driver compiling within its startup probe
    (21 min, gpu-operator ``assets/state-driver/0500_daemonset.yaml``) explains notReady.
    Today's code leaves ``cluster-policy-not-ready`` a warning here (issue 19, item 2)."""
    node = joining_node()
    assert "nvidia.com/gpu.count" not in node["metadata"]["labels"]
    snap = build([node], joining_pods(f.T0 - 180), policies=[NOT_READY])
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO, policy.message
    # the driver container started 3 min ago: its 21-minute budget ends at 10:18
    assert f"1 node comes up within its grace (driver compiling on {f.NODE}); normal until " \
           "10:18 UTC" in policy.message
    assert exit_code(snap) == 0
    view = snap.nodes[f.NODE]
    assert view.gpu_count == 0 and view.coming_up is not None
    assert view.coming_up.what == "driver compiling"


def test_two_joining_nodes_are_named_together() -> None:
    """"N nodes come up (driver compiling on X, Y); normal until HH:MM": the latest
    deadline, since the policy is normal until the last of them is up."""
    a, b = "gke-prod-h100-pool-7f3a-aaaa", "gke-prod-h100-pool-7f3a-bbbb"
    pods = joining_pods(f.T0 - 180, node=a) + [
        {**p, "metadata": {**p["metadata"], "name": p["metadata"]["name"] + "-b"}}
        for p in joining_pods(f.T0 - 60, node=b)]
    snap = build([joining_node(a), joining_node(b, age=90)], pods, policies=[NOT_READY])
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO
    assert f"2 nodes come up within their grace (driver compiling on {a}, {b}); normal until " \
           "10:20 UTC" in policy.message


def test_node_seen_only_by_nfd_is_coming_up_before_its_pods_exist() -> None:
    """Seconds after joining, NFD's PCI label is there and nothing else: the operator
    labels it, then the DaemonSets schedule the operands (gpu-operator
    ``controllers/state_manager.go``). Not scheduled yet, within the driver's budget from
    the node's creation: coming up."""
    node = joining_node(age=20)
    del node["metadata"]["labels"]["nvidia.com/gpu.present"]
    for key in [k for k in node["metadata"]["labels"] if k.startswith("nvidia.com/gpu.deploy")]:
        del node["metadata"]["labels"][key]
    snap = build([node], [], policies=[NOT_READY])
    view = snap.nodes[f.NODE]
    assert view.coming_up is not None and view.coming_up.what == "driver not scheduled yet"
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO and "normal until 10:20 UTC" in policy.message


def test_a_failing_joining_node_is_not_coming_up() -> None:
    """An image that cannot be pulled is a fault at once (ErrImagePull/ImagePullBackOff),
    whatever the node's age."""
    pods = joining_pods(f.T0 - 180)
    driver = pods[0]
    driver["status"]["containerStatuses"][0].update(
        ready=False, state={"waiting": {"reason": "ImagePullBackOff",
                                        "message": "Back-off pulling image"}})
    snap = build([joining_node()], pods, policies=[NOT_READY])
    assert snap.nodes[f.NODE].coming_up is None
    assert of(snap, "cluster-policy-not-ready")[0].severity is Severity.WARNING
    assert exit_code(snap) == 1


def test_an_operand_missing_on_an_old_node_is_not_explained_by_an_upgrade_elsewhere() -> None:
    """An upgrade rolling on one node explains that node only. A node that joined days ago
    and still has no dcgm-exporter pod is not coming up: notReady is a warning. Today's
    code calls it "expected while a driver upgrade rolls"."""
    upgrading = f.node("gke-prod-h100-pool-7f3a-upgr",
                       labels={"nvidia.com/gpu-driver-upgrade-state": "upgrade-required"})
    old = f.node("gke-prod-h100-pool-7f3a-oldn")
    pods = f.healthy_pods("gke-prod-h100-pool-7f3a-upgr") + f.healthy_pods(
        "gke-prod-h100-pool-7f3a-oldn", [o for o in f.CORE if o != "dcgm-exporter"])
    snap = build([upgrading, old], pods, policies=[NOT_READY])
    assert snap.upgrade.pending == 1
    assert not snap.nodes["gke-prod-h100-pool-7f3a-oldn"].findings
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.WARNING, policy.message
    assert exit_code(snap) == 1


def test_coming_up_ends_with_its_grace() -> None:
    """The node is judged again at its deadline (the builder's recheck), and past it the
    same pipeline explains nothing."""
    builder = SnapshotBuilder()
    objects = f.objects([joining_node(age=60)], joining_pods(f.T0 - 30), policies=[NOT_READY])
    first = builder.build(objects, f.T0)
    assert first.nodes[f.NODE].coming_up is not None
    later = builder.build(objects, f.T0 + 30 * 60, changed_nodes=())
    assert later.nodes[f.NODE].coming_up is None
    assert of(later, "cluster-policy-not-ready")[0].severity is Severity.WARNING


def test_policy_catching_up_with_a_node_that_just_came_up_is_info() -> None:
    """The ClusterPolicy controller re-checks every 5 s while notReady (gpu-operator
    ``controllers/clusterpolicy_controller.go``): for a moment after the last operand pod
    of a joining node turned ready the policy still says notReady. A minute later nothing
    explains it any more."""
    recent = {"gpu-feature-discovery": {"start": f.T0 - 50}}  # its main container: T0 - 20
    snap = build([f.node()], f.healthy_pods(overrides=recent), policies=[NOT_READY])
    (policy,) = of(snap, "cluster-policy-not-ready")
    assert policy.severity is Severity.INFO, policy.message
    assert f"(operands ready moments ago on {f.NODE}); normal until 10:00 UTC" in policy.message
    later = build([f.node()], f.healthy_pods(overrides=recent), now=f.T0 + 60,
                  policies=[NOT_READY])
    assert of(later, "cluster-policy-not-ready")[0].severity is Severity.WARNING
