"""A drain's pods from the server: listed fresh, sorted by kubectl's rules, written into the plan.

Why not from the snapshot: the snapshot knows the GPU pods, but a drain evicts every pod on
the node (a completed ``nvidia-cuda-validator`` too), and kubectl's rules refuse some
(emptyDir data, no controller, a DaemonSet that is gone) before any eviction, after the
cordon. So the plan lists the node's pods as the server has them when the plan is made
(``fieldSelector=spec.nodeName=NODE``), each with what the drain will do to it, and carries
one eviction :class:`~gputui.actions.base.Change` per pod it will evict: the dry run checks
each, the audit log records each, and the apply evicts exactly those
(:func:`check_unchanged` refuses to go on when the server's pods are no longer the plan's).

Used by the drain (key ``r``) and by the MIG safe path's drain step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gputui.actions.base import Change, ClusterWriter, Plan, WriteError
from gputui.actions.drain_rules import DrainOptions, Sorting, sort_pods

#: the plan's params key holding, per node, the pods the plan evicts and refuses
PODS_KEY = "pods"
#: kubectl's flag, and gputui's drain option, that allow each kind of refused pod
EMPTYDIR_FLAG = "--delete-emptydir-data"
FORCE_FLAG = "--force"
EMPTYDIR_ALLOWED_BY = f"option 'also delete emptyDir data' ({EMPTYDIR_FLAG})"
FORCE_ALLOWED_BY = f"option 'also force unmanaged pods' ({FORCE_FLAG})"


def eviction_change(namespace: str, pod: str, kubectl: str) -> Change:
    """One policy/v1 Eviction, exactly as the apply sends it (dry-run before the drain)."""
    body = {"apiVersion": "policy/v1", "kind": "Eviction",
            "metadata": {"name": pod, "namespace": namespace}}
    return Change("create", "Pod", pod, body, kubectl=kubectl,
                  summary=f"evict {namespace}/{pod}", namespace=namespace)


def daemonset_exists(writer: ClusterWriter, namespace: str, name: str) -> bool:
    """Whether the server has the DaemonSet; an error other than 404 counts as "exists"
    (skipping a DaemonSet pod is the safe side)."""
    try:
        writer.get("DaemonSet", name, namespace)
    except WriteError as error:
        return error.status != 404
    return True


def sort_node(writer: ClusterWriter, node: str, options: DrainOptions) -> Sorting:
    """The node's pods as the server lists them now, sorted; raises :class:`WriteError`."""
    listed = writer.list_pods_on_node(node)
    return sort_pods(listed, options, lambda ns, name: daemonset_exists(writer, ns, name))


def pod_lines(node: str, sorting: Sorting) -> tuple[str, ...]:
    """One compact line per pod, refused first (they decide whether the drain runs)."""
    total = (len(sorting.evict) + len(sorting.daemonset) + len(sorting.mirror)
             + len(sorting.unmanaged) + len(sorting.emptydir) + len(sorting.orphans))
    refused = len(sorting.unmanaged) + len(sorting.emptydir) + len(sorting.orphans)
    head = (f"{node}: {total} pod{'s' if total != 1 else ''} (listed from the server): "
            f"{len(sorting.evict)} evicted, {len(sorting.daemonset) + len(sorting.mirror)} "
            f"skipped, {refused} refused")
    lines = [head]
    lines += [f"  refused {p}: emptyDir; allowed by {EMPTYDIR_FLAG}" for p in sorting.emptydir]
    lines += [f"  refused {p}: no controller; allowed by {FORCE_FLAG}" for p in sorting.unmanaged]
    lines += [f"  refused {p}: its DaemonSet is gone; allowed by {FORCE_FLAG}"
              for p in sorting.orphans]
    finished = set(sorting.finished)
    lines += [f"  evict {p}" + (" (completed)" if str(p) in finished else "")
              for p in sorting.evict]
    lines += [f"  skip {p} (DaemonSet)" for p in sorting.daemonset]
    lines += [f"  skip {p} (mirror pod)" for p in sorting.mirror]
    return tuple(lines)


def stop_warning(refused: Mapping[str, Sorting]) -> str:
    """What the operator must read before ``y`` when the chosen options refuse a pod."""
    nodes = ", ".join(refused)
    pods = [p for s in refused.values() for p in (*s.emptydir, *s.unmanaged, *s.orphans)]
    allow = []
    if any(s.emptydir for s in refused.values()):
        allow.append(EMPTYDIR_ALLOWED_BY)
    if any(s.unmanaged or s.orphans for s in refused.values()):
        allow.append(FORCE_ALLOWED_BY)
    return (f"the drain will cordon {nodes} and then stop, evicting nothing (as kubectl "
            f"drain does): {len(pods)} pod{'s' if len(pods) != 1 else ''} refused with these "
            f"options ({', '.join(pods[:3])}{', ...' if len(pods) > 3 else ''}); "
            f"{' and '.join(allow)} would allow {'them' if len(pods) != 1 else 'it'} "
            "(o: other options)")


def list_sorted(writer: ClusterWriter, nodes: Sequence[str],
                options: DrainOptions) -> dict[str, Sorting] | str:
    """Each node's pods sorted, or why they could not be listed (one sentence)."""
    sortings: dict[str, Sorting] = {}
    for node in nodes:
        try:
            sortings[node] = sort_node(writer, node, options)
        except WriteError as error:
            return f"cannot list the pods of {node}: {error.reason}"
    return sortings


def describe(plan: Plan, sortings: Mapping[str, Sorting]) -> Plan:
    """``plan`` with the pods' lines in its impact, the stop in its warnings and caveats when
    a pod is refused, and the record the apply checks the server's pods against in its
    params."""
    refused = {node: s for node, s in sortings.items() if s.refused}
    lines = [line for node, sorting in sortings.items() for line in pod_lines(node, sorting)]
    warnings = (stop_warning(refused),) if refused else ()
    count = sum(len(s.emptydir) + len(s.unmanaged) + len(s.orphans) for s in refused.values())
    caveats = (f"the drain will cordon and then stop ({count} pod{'s' if count != 1 else ''} "
               "refused)",) if refused else ()
    params = {**dict(plan.params), PODS_KEY: {node: _record(s) for node, s in sortings.items()}}
    return replace(plan, impact=(*plan.impact, *lines), warnings=(*warnings, *plan.warnings),
                   caveats=(*plan.caveats, *caveats), params=params)


def evictions(sorting: Sorting, kubectl: str) -> list[Change]:
    """One eviction per pod the rules evict on one node."""
    return [eviction_change(ref.namespace, ref.name, kubectl) for ref in sorting.evict]


def with_pods(plan: Plan, writer: ClusterWriter, nodes: Sequence[str], options: DrainOptions,
              kubectl: Mapping[str, str]) -> Plan:
    """``plan`` with each node's evictions added (after its other changes) and its pods
    described; blocked with the reason when a node's pods cannot be listed.

    When the options refuse a pod on any node no eviction is planned (the apply cordons and
    stops, as kubectl does) and the plan says so in its warnings.
    """
    sortings = list_sorted(writer, nodes, options)
    if isinstance(sortings, str):
        return replace(plan, blocked=sortings)
    stops = any(s.refused for s in sortings.values())
    added = [] if stops else [change for node, sorting in sortings.items()
                              for change in evictions(sorting, kubectl[node])]
    return describe(replace(plan, changes=(*plan.changes, *added)), sortings)


def _record(sorting: Sorting) -> dict[str, list[str]]:
    """What the apply compares the server's pods with: evicted and refused, by name."""
    return {"evict": [str(p) for p in sorting.evict],
            "refused": [*sorting.emptydir, *sorting.unmanaged, *sorting.orphans]}


def planned(plan: Plan, node: str) -> dict[str, list[str]] | None:
    """The node's pods as the plan recorded them; None when the plan never listed them."""
    pods = plan.params.get(PODS_KEY)
    if not isinstance(pods, Mapping) or not isinstance(pods.get(node), Mapping):
        return None
    record: Mapping[str, Any] = pods[node]
    return {key: [str(p) for p in record.get(key) or []] for key in ("evict", "refused")}


def check_unchanged(plan: Plan, node: str, sorting: Sorting) -> str | None:
    """Why the server's pods on ``node`` no longer match the plan, or None when they do.

    Pods the plan evicts that are gone since are fine (nothing to evict); a pod the plan
    does not evict that would now be evicted, or a change in what is refused, is not: the
    apply must not send a write the operator did not see.
    """
    record = planned(plan, node)
    if record is None:
        return (f"the plan does not list the pods of {node} (made without asking the "
                "server): re-plan")
    was_refused, now_refused = bool(record["refused"]), sorting.refused
    if was_refused != now_refused:
        now = ", ".join([*sorting.emptydir, *sorting.unmanaged, *sorting.orphans]) or "none"
        return f"the pods refused on {node} changed since the plan (now: {now}): re-plan"
    extra = _not_in(sorting.evict, record["evict"])
    if extra and not now_refused:
        return (f"{len(extra)} pod{'s' if len(extra) != 1 else ''} on {node} not in the plan "
                f"would be evicted ({', '.join(extra[:3])}{', ...' if len(extra) > 3 else ''})"
                ": nothing of them is sent; re-plan")
    return None


def node_drain(plan: Plan, node: str, options: str, timeout: float) -> Plan:
    """The drain of one node inside a bigger plan (the MIG safe path's step): the plan's
    evictions of that node and its record, for :class:`~gputui.actions.drain.DrainAction`."""
    record = planned(plan, node)
    names = set(record["evict"]) if record is not None else set()
    changes = tuple(c for c in plan.changes if c.verb == "create"
                    and f"{c.namespace}/{c.name}" in names)
    pods = {node: record} if record is not None else {}
    return Plan("drain", f"Drain {node}", (node,), changes,
                params={"options": options, "timeout": timeout, PODS_KEY: pods})


def _not_in(pods: Iterable[object], names: Sequence[str]) -> list[str]:
    known = set(names)
    return [str(p) for p in pods if str(p) not in known]
