"""Cluster-wide findings: ClusterPolicy, DaemonSets (XIDs and other metrics findings are in
:mod:`gputui.domain.findings_metrics`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain import catalogue as C
from gputui.domain import labels as L
from gputui.domain.model import (
    ClusterPolicyView,
    DaemonSetSummary,
    Finding,
    NodeView,
    Severity,
)
from gputui.domain.operands import BY_NAME

CLUSTER_POLICY_RESOURCE = "clusterpolicies"


def cluster_policy_findings(policy: ClusterPolicyView, forbidden: frozenset[str],
                            normal_life: str = "", blamed: str = "") -> list[Finding]:
    """Missing, notReady and ignored ClusterPolicies.

    ``normal_life`` names what explains a notReady state when nothing is actually failing
    (nodes upgrading within the policy, nodes coming up within their grace): the operator
    keeps ``state-driver`` notReady while any driver pod is out of date or not ready
    (``controllers/object_controls.go``, ``isDaemonSetReady``), so this is expected: info.
    ``blamed`` names the node findings that cause the rest ("mig-no-instances on X"): the
    notReady is their symptom, info, and the warning is theirs.
    """
    if policy.state == "unknown" or (
            CLUSTER_POLICY_RESOURCE in forbidden or "clusterpolicies.nvidia.com" in forbidden):
        return []  # forbidden is not missing: the snapshot's read gaps say it is unknown
    if policy.state == "missing":
        return [C.finding(C.CLUSTER_POLICY_MISSING, None,
                          "no ClusterPolicy: the GPU Operator deploys no operand",
                          "Check that the gpu-operator Deployment runs and that the Helm release "
                          "created its ClusterPolicy (clusterPolicy.deployCR).")]
    found = [C.finding(C.CLUSTER_POLICY_IGNORED, None,
                       f"ClusterPolicy {name} is ignored: {policy.name} is the active one",
                       "Only the oldest ClusterPolicy is used; delete the duplicate.",
                       severity=Severity.INFO)
             for name in policy.ignored]
    if policy.state == "ignored":
        found.append(C.finding(C.CLUSTER_POLICY_IGNORED, None,
                               f"ClusterPolicy {policy.name} is ignored and none is active",
                               "Check for a GPUCluster or another ClusterPolicy taking over."))
    if policy.state == "notReady":
        error = next((c for c in policy.conditions if c.type == "Error" and c.status == "True"),
                     None)
        states = ", ".join(policy.not_ready_states) or "unknown states"
        detail = f" ({error.reason}: {error.message})" if error and error.message else ""
        if blamed:
            also = f"; also expected while {normal_life}" if normal_life else ""
            found.append(C.finding(
                C.CLUSTER_POLICY_NOT_READY, None,
                f"ClusterPolicy {policy.name} notReady: {states}, caused by {blamed}"
                f"{also}{detail}",
                "Fix what those node findings say; the operator re-checks every 5 s.",
                severity=Severity.INFO))
            return found
        if normal_life:
            found.append(C.finding(
                C.CLUSTER_POLICY_NOT_READY, None,
                f"ClusterPolicy {policy.name} notReady: {states}, expected while "
                f"{normal_life}{detail}",
                "Nothing to do: the operator re-checks every 5 s and reports ready when the "
                "nodes settle.", severity=Severity.INFO))
            return found
        found.append(C.finding(
            C.CLUSTER_POLICY_NOT_READY, None,
            f"ClusterPolicy {policy.name} notReady: {states}{detail}",
            "Open the nodes whose pipeline breaks at those operands (state-driver → the driver "
            "stage); the operator retries every 5 s."))
    return found


def no_gpu_nodes_seen(policy: ClusterPolicyView, nodes: Mapping[str, NodeView]) -> list[Finding]:
    """The ClusterPolicy says it found no GPU node (reason ``NoGPUNodes`` or
    ``NFDLabelsMissing``) while nodes carry NFD's NVIDIA labels: nothing gets managed
    (gpu-operator ``internal/conditions``; ``controllers/state_manager.go``)."""
    reason = next((c.reason for c in policy.conditions if c.type == "Ready"), "")
    if reason not in ("NoGPUNodes", "NFDLabelsMissing"):
        return []
    seen = sorted(n.name for n in nodes.values()
                  if any(n.labels.get(key) == "true" for key in L.NFD_GPU_LABELS))
    if not seen:
        return []
    return [C.finding(
        C.GPU_NODE_UNMANAGED, None,
        f"ClusterPolicy {policy.name} reports {reason} while NFD sees NVIDIA GPUs on "
        f"{len(seen)} node(s) ({', '.join(seen[:3])}{', ...' if len(seen) > 3 else ''})",
        "Check the NFD pods and the operator log: the operator manages no node until it sees "
        "the NFD labels.")]


def _expects(node: NodeView, operand: str) -> bool:
    deploy = BY_NAME[operand].deploy
    value = node.labels.get(deploy, "")
    return (value.lower() != "false" and not L.is_paused(value)
            and node.labels.get(L.DEPLOY_OPERANDS, "").lower() != "false")


def daemonset_findings(daemonsets: Sequence[DaemonSetSummary],
                       nodes: Mapping[str, NodeView]) -> list[Finding]:
    """DaemonSets that select no node although GPU nodes want them, or leave pods unscheduled."""
    found = []
    for ds in daemonsets:
        operand = BY_NAME.get(ds.operand)
        # walked only for a DaemonSet that selects nothing: every node, every build, otherwise
        wanting = sum(1 for n in nodes.values() if _expects(n, ds.operand)) if (
            ds.desired == 0 and operand is not None and operand.core) else 0
        if wanting:
            found.append(C.finding(
                C.DAEMONSET_NOT_SCHEDULED, None,
                f"DaemonSet {ds.name} selects no node although {wanting} GPU node(s) "
                "exist", f"Nodes lack {operand.deploy if operand else 'the deploy label'}=true:"
                " NFD missing, nvidia.com/gpu.present not true, or gpu.deploy.operands=false.",
                ds.name))
        elif ds.unscheduled > 0:
            found.append(C.finding(
                C.DAEMONSET_NOT_SCHEDULED, None,
                f"DaemonSet {ds.name}: {ds.unscheduled} of {ds.desired} pods not scheduled",
                "Look for nodes that are NotReady, tainted without a matching toleration, or "
                "out of resources.", ds.name))
    return found
