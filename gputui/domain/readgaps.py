"""What could not be read, and what that hides: "unknown" is never shown as "ok".

A viewer token that may list nodes but not pods, or a cluster without the nvidia.com CRDs,
gives gputui part of the picture. An empty list read as "nothing there" would make every node
``✔ ok`` and every operand ``absent``; so each resource the sources could not read is carried
into the snapshot (``ClusterSnapshot.unreadable``, resource -> reason) and this module says
what it hides and whether, without it, "healthy" can be told at all (ARCHITECTURE.md, CLI
contract: ``check`` exits 2 then).

Two reasons, told apart on purpose (and a third, ``refused``: an object the server sent
that could not be read, nested deeper than any real one; the others are kept):

* ``forbidden`` (403): RBAC refuses the list or watch. The objects exist or not; gputui
  cannot tell, so what they feed is *unknown*.
* ``not-served`` (404): the API is not served. For a CRD that means it is not installed, so
  no such object can exist: that is known, not unknown (no ClusterPolicy CRD is a real
  ``cluster-policy-missing``), and :func:`read_gaps` leaves it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

FORBIDDEN = "forbidden"
NOT_SERVED = "not-served"
#: an object of the resource could not be read (nested deeper than any real object): the
#: others are kept, but what the refused one would say is unknown
REFUSED = "refused"
#: the DCGM metrics (exporter scrapes or Prometheus): their reason is ``forbidden`` for a
#: refused pod proxy, else the failure in words ("503 from the pod proxy on 6 of 6
#: exporters"), and what they hide is each node's GPU health (``NodeView.health_unknown``)
METRICS = "metrics"
#: the HTTP status behind each reason, for the header's "(403)"
REASON_CODE: Mapping[str, int] = MappingProxyType({FORBIDDEN: 403, NOT_SERVED: 404})

#: resources served only when their CRD is installed: a 404 there means "none exist"
CRD_RESOURCES = frozenset({"clusterpolicies", "nvidiadrivers"})
#: what a node's pipeline and findings are built from beyond the Node itself
NODE_INPUTS = frozenset({"pods", "daemonsets", "clusterpolicies"})


@dataclass(frozen=True, slots=True)
class Reach:
    """What one unreadable resource hides.

    Attributes:
        hides: what is unknown without it, in the operator's words.
        short: the few words the header has room for at 80 columns.
        required: without it "healthy" cannot be told (``check`` exits 2).
        why: why it is required or optional (documentation and tests read it).
    """

    hides: str
    short: str
    required: bool
    why: str


REACH: Mapping[str, Reach] = MappingProxyType({
    "nodes": Reach(
        "every GPU node: nodes, GPUs and all their findings", "everything", True,
        "no node list means no node, no GPU and no finding: an empty report would read as "
        "a healthy cluster"),
    "pods": Reach(
        "operand pipelines, GPU pods and the findings on them", "pipelines, GPU pods", True,
        "driver, toolkit, device-plugin and validator failures are read from the operand "
        "pods; without them a broken node shows no finding"),
    "gpu-pods": Reach(
        "GPU workload pods in other namespaces (what a drain evicts, the jobs an upgrade "
        "waits for)", "GPU workloads", False,
        "the operand pods, read apart in the operator namespace, still give every pipeline "
        "and its findings"),
    "daemonsets": Reach(
        "operand DaemonSets: unscheduled operands, a blocked upgrade", "DaemonSets", True,
        "upgrade-blocked and daemonset-not-scheduled come from them, and whether an optional "
        "operand (mig-manager) should run on a node"),
    "clusterpolicies": Reach(
        "the ClusterPolicy: its state and the operands it enables", "policy", True,
        "cluster-policy-not-ready and which operands are disabled come from it; forbidden is "
        "not missing"),
    "nvidiadrivers": Reach(
        "NVIDIADriver upgrade policies", "NVIDIADrivers", False,
        "only clusters with driver.useNvidiaDriverCRD use them; the nodes' upgrade state "
        "labels still show every upgrade step"),
    "configmaps": Reach(
        "MIG and device-plugin configs (config names are not checked)", "configs", False,
        "the MIG state labels still show a failed or pending change; only the check that a "
        "config name exists is lost"),
    "events": Reach(
        "driver upgrade events (why an upgrade failed, step times)", "events", False,
        "the upgrade state labels still show each node's step; events only add reasons"),
    "daemonset-events": Reach(
        "the DaemonSet controller's FailedCreate events (why a driver pod is missing)",
        "FailedCreate events", False,
        "upgrade-blocked still turns critical once gputui has seen it for 3 minutes"),
    "poddisruptionbudgets": Reach(
        "PodDisruptionBudgets (which budget held a pod a driver upgrade's drain could not "
        "evict)", "budgets", False,
        "upgrade-failed still names the pod whose eviction timed out, and its hint says the "
        "budget is not known (kubectl get pdb finds it); no finding rests on budgets alone"),
    METRICS: Reach(
        "GPU health (XIDs, missing GPUs, row remaps)", "GPU health", False,
        "metrics add findings on top of the Kubernetes objects, which still show each "
        "node's state; a cluster without dcgm-exporter is not a gap. When no node's GPU "
        "health could be read, check exits 2 unless other findings already say warning"),
    "namespaces": Reach(
        "the kube-system namespace UID (the audit log's actions are matched to this cluster "
        "by server URL only)", "cluster id", False,
        "it only tells this cluster's actions in the audit log from another's; the server "
        "URL still does, unless two clusters are reached by the same URL"),
})


@dataclass(frozen=True, slots=True)
class ReadGap:
    """One resource gputui could not read, with what it hides."""

    resource: str
    reason: str
    hides: str
    short: str
    required: bool

    @property
    def code(self) -> int:
        """403 or 404 (0 for a reason the sources did not name)."""
        return REASON_CODE.get(self.reason, 0)

    @property
    def why(self) -> str:
        """What the header and ``check`` put in brackets: the status (``403``), or the
        failure in words for a reason that is not one (a metrics read that failed)."""
        if self.reason == REFUSED:
            return "an object nested too deep"
        return str(self.code) if self.code else self.reason


def _reach(resource: str) -> Reach:
    known = REACH.get(resource)
    if known is not None:
        return known
    return Reach(f"what {resource} feed", resource, False, "not an input of any finding")


def read_gaps(unreadable: Mapping[str, str]) -> tuple[ReadGap, ...]:
    """The gaps that hide something, required ones first, then by resource name.

    A CRD that is not served (404) is left out: it is not installed, so none of its objects
    exist, which the findings already say (``cluster-policy-missing``).
    """
    gaps = []
    for resource, reason in unreadable.items():
        if reason == NOT_SERVED and resource in CRD_RESOURCES:
            continue
        reach = _reach(resource)
        gaps.append(ReadGap(resource, reason, reach.hides, reach.short, reach.required))
    return tuple(sorted(gaps, key=lambda g: (not g.required, g.resource)))


def merged(unreadable: Mapping[str, str], forbidden: Iterable[str]) -> Mapping[str, str]:
    """``unreadable`` as one frozen mapping; inputs that carry only the older ``forbidden``
    names (recordings, fixtures) count those as 403s. When ``unreadable`` is given it is the
    finer account (``gpu-pods`` apart from ``pods``) and ``forbidden`` adds nothing."""
    found = dict(unreadable) if unreadable else {name: FORBIDDEN for name in forbidden}
    return MappingProxyType(dict(sorted(found.items())))


def node_unknowns(unreadable: Mapping[str, str]) -> tuple[str, ...]:
    """The inputs of every node's pipeline and findings that could not be read, sorted."""
    return tuple(sorted(g.resource for g in read_gaps(unreadable)
                        if g.resource in NODE_INPUTS))


def health_unknowable(unreadable: Mapping[str, str]) -> bool:
    """Whether what is missing makes "healthy" impossible to tell (``check`` exits 2)."""
    return any(gap.required for gap in read_gaps(unreadable))


def gap_phrase(gap: ReadGap) -> str:
    """``cannot read pods (403): operand pipelines, ... unknown``: one line for a report
    (``cannot read metrics (503 from the pod proxy on 6 of 6 exporters): GPU health ...``)."""
    why = f" ({gap.why})" if gap.why else ""
    return f"cannot read {gap.resource}{why}: {gap.hides} unknown"
