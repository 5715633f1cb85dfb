"""PodDisruptionBudgets: which budget held the pod a driver upgrade's drain could not evict.

An ``upgrade-failed`` node whose drain or pod deletion timed out on an eviction names the pod
in its ``GPUDriverUpgrade`` event (kubectl's drain helper: ``error when evicting
pods/"NAME" -n "NS": global timeout reached: 5m0s``): the eviction was refused (429) until
then, which is what a PodDisruptionBudget with no disruption left does. The operator's next
question is *which* budget; answering it takes the budgets (``policy/v1``, read cluster-wide
by the sources) and the pod's labels.

What is said is only what was read: a budget list that could not be read (403), is not read
yet, or is not in the input at all (a recording made before gputui read budgets) is a gap
named as such, never "no budget"; a pod whose labels were not read (gputui reads GPU pods and
the pods the upgrade waits for, not every pod) is matched to no budget, and the budgets of
its namespace with no disruption left are named as candidates instead.

Selectors follow policy/v1 (``selectors.selector_terms``): a null selector selects no pod,
an empty one every pod of the namespace; a pod two budgets select cannot be evicted at all
(the eviction subresource answers 500), which a drain also waits out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gputui.domain.inputs import ClusterObjects, JsonDict
from gputui.domain.kube import sub
from gputui.domain.model import UpgradeEvent
from gputui.domain.pods import as_pod_info
from gputui.domain.readgaps import REASON_CODE
from gputui.domain.selectors import SelectorTerm, selector_terms, terms_match, terms_text

#: the resource (feed) name the sources read budgets under, as ``unreadable`` names it
RESOURCE = "poddisruptionbudgets"

_TIMEOUT_WORDS = "global timeout reached"
_EVICTION_TIMEOUT = re.compile(
    r'error when evicting pods/"(?P<name>[^"]+)" -n "(?P<ns>[^"]+)": '
    r"global timeout reached: (?P<after>\S+)")


@dataclass(frozen=True, slots=True)
class EvictionTimeout:
    """The pod whose eviction was refused until a drain's or pod deletion's timeout."""

    namespace: str
    name: str
    after: str

    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"


def eviction_timeout(event: UpgradeEvent | None) -> EvictionTimeout | None:
    """The pod named by a failed drain's or pod deletion's "global timeout reached" error."""
    if event is None:
        return None
    for text in (event.cause, event.message):
        if _TIMEOUT_WORDS not in text:  # a substring test first: every node's last event
            continue                    # is looked at whenever the events change
        match = _EVICTION_TIMEOUT.search(text)
        if match is not None:
            return EvictionTimeout(match["ns"], match["name"], match["after"])
    return None


@dataclass(frozen=True, slots=True)
class Budget:
    """One PodDisruptionBudget as the hints need it.

    Attributes:
        selector: its ``spec.selector`` read by :func:`selector_terms` (None: null, selects
            no pod).
        allowed / healthy / needed: ``status.disruptionsAllowed``, ``currentHealthy`` and
            ``desiredHealthy`` as the disruption controller last wrote them; None while it
            has not (a budget just made).
        limit: ``minAvailable 2`` or ``maxUnavailable 0`` as written ("" when neither).
    """

    namespace: str
    name: str
    selector: tuple[SelectorTerm, ...] | None
    allowed: int | None = None
    healthy: int | None = None
    needed: int | None = None
    limit: str = ""

    def ref(self) -> str:
        return f"{self.namespace}/{self.name}"

    def selects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Whether this budget covers a pod of ``namespace`` with ``labels``."""
        return namespace == self.namespace and terms_match(self.selector, labels)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_budget(obj: JsonDict) -> Budget:
    """One budget from its (reduced) object; odd shapes read as unknown, never raise."""
    metadata, spec, status = sub(obj, "metadata"), sub(obj, "spec"), sub(obj, "status")
    limit = next((f"{key} {spec[key]}" for key in ("minAvailable", "maxUnavailable")
                  if isinstance(spec.get(key), int | str)), "")
    return Budget(str(metadata.get("namespace") or ""), str(metadata.get("name") or ""),
                  selector_terms(spec.get("selector")), _count(status.get("disruptionsAllowed")),
                  _count(status.get("currentHealthy")), _count(status.get("desiredHealthy")),
                  limit)


@dataclass(frozen=True, slots=True)
class HeldBudgets:
    """What the budgets read say about the pod a drain could not evict.

    Attributes:
        gap: why the budgets are not known, as a phrase ("" when they were read).
        labels_read: the pod was read, so its labels were matched against the budgets.
        budgets: the budgets that select the pod; when its labels were not read, the
            budgets of its namespace that allow no disruption (candidates, not a match).
    """

    gap: str
    labels_read: bool
    budgets: tuple[Budget, ...] = ()


def budget_gap(objects: ClusterObjects, unreadable: Mapping[str, str]) -> str:
    """Why the budgets of ``objects`` are not known ("" when they were read)."""
    reason = unreadable.get(RESOURCE)
    if reason:
        code = REASON_CODE.get(reason)
        return f"PodDisruptionBudgets could not be read ({code or reason})"
    if RESOURCE in objects.loading:
        return "PodDisruptionBudgets are not read yet"
    if objects.disruption_budgets is None:
        return "PodDisruptionBudgets were not read (this input holds none)"
    return ""


def held_budgets(held: EvictionTimeout, budgets: Sequence[Budget], gap: str,
                 labels: Mapping[str, str] | None) -> HeldBudgets:
    """The verdict for the pod ``held`` names, with its ``labels`` (None: not read)."""
    if gap:
        return HeldBudgets(gap, labels is not None)
    if labels is None:
        return HeldBudgets("", False, tuple(
            b for b in budgets if b.namespace == held.namespace and b.allowed == 0))
    return HeldBudgets("", True, tuple(b for b in budgets if b.selects(held.namespace, labels)))


class BudgetWatch:
    """Per node whose last upgrade event is an eviction timeout, what the budgets say; the
    builder rebuilds the nodes whose answer changed (a budget's status, a budget made or
    removed), which their own objects would not tell it.

    Cheap on purpose: the events are looked at again only when they changed, the budgets read
    again only when their list did, and only those few nodes are judged on each build.
    """

    def __init__(self) -> None:
        self._events: Mapping[str, UpgradeEvent] | None = None
        self._timeouts: Mapping[str, EvictionTimeout] = {}
        self._source: Sequence[JsonDict] | None = None
        self._budgets: tuple[Budget, ...] = ()
        self._held: Mapping[str, HeldBudgets] = {}

    def update(self, objects: ClusterObjects, unreadable: Mapping[str, str],
               events: Mapping[str, UpgradeEvent]) -> set[str]:
        """Judge again; the nodes whose verdict changed."""
        if events is not self._events:
            found = {name: eviction_timeout(event) for name, event in events.items()}
            self._timeouts = {name: held for name, held in found.items() if held is not None}
            self._events = events
        source = objects.disruption_budgets
        if source is not self._source:
            self._budgets = tuple(read_budget(b) for b in source or ())
            self._source = source
        gap = budget_gap(objects, unreadable)
        held: dict[str, HeldBudgets] = {}
        for name, timeout in self._timeouts.items():
            pod = objects.pods.get((timeout.namespace, timeout.name))
            labels = as_pod_info(pod).labels if pod is not None else None
            held[name] = held_budgets(timeout, self._budgets, gap, labels)
        changed = {n for n in held.keys() | self._held.keys() if held.get(n) != self._held.get(n)}
        self._held = held
        return changed

    def of(self, node: str) -> HeldBudgets | None:
        """The verdict for ``node`` (None: its last event names no eviction timeout)."""
        return self._held.get(node)

    def fork(self) -> BudgetWatch:
        """A watch in this one's state that changes apart from it (its own mappings; it
        reads the events again on its first update, as the forked builder's are a copy)."""
        other = BudgetWatch()
        other._timeouts, other._held = dict(self._timeouts), dict(self._held)
        other._source, other._budgets = self._source, self._budgets
        return other
