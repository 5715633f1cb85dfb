"""What the driver-upgrade, canary and MIG actions share: where the driver is configured,
how a policy write is sent (with its resourceVersion, re-planned on 409), and a cancellable
wait. The value rules are in :mod:`gputui.actions.upgrade_values`.

Where the driver is configured (§2, §3 of gpu-operator.md): normally the ClusterPolicy
(``spec.driver.version``, ``spec.driver.upgradePolicy``); when the ClusterPolicy says
``driver.useNvidiaDriverCRD`` (or there is no ClusterPolicy but nodes have a driver owner),
the NVIDIADriver that owns the node (``spec.version``, ``spec.upgradePolicy``; v26.7 names it
in the node label ``nvidia.com/gpu-operator.driver.owner``). Each has its own upgrade policy.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gputui.actions.base import Change, ClusterWriter, JsonObj, Plan, Progress, Result, WriteError
from gputui.actions.guard import stop_reason
from gputui.domain import labels as L
from gputui.domain.model import ClusterSnapshot, NodeView, UpgradePolicy
from gputui.domain.policy import read_cluster_policy, read_upgrade_policy
from gputui.domain.upgrade import is_managed

CLUSTER_POLICY = "ClusterPolicy"
NVIDIA_DRIVER = "NVIDIADriver"
#: kubectl resource names (the CRDs' plurals with their group)
_KUBECTL_RESOURCE = {CLUSTER_POLICY: "clusterpolicies.nvidia.com",
                     NVIDIA_DRIVER: "nvidiadrivers.nvidia.com"}


@dataclass(frozen=True)
class DriverTarget:
    """The object whose driver version and upgrade policy a cluster-wide action edits.

    Attributes:
        kind: ``ClusterPolicy`` or ``NVIDIADriver``.
        name: the object's name.
        resource_version: sent as a precondition (``None`` when the snapshot does not hold
            the object: NVIDIADrivers; apply then reads it first).
        current_version: the configured driver version, "" when the snapshot does not say.
        policy: its upgrade policy with CRD defaults, None when unknown.
    """

    kind: str
    name: str
    resource_version: str | None
    current_version: str
    policy: UpgradePolicy | None

    @property
    def version_path(self) -> tuple[str, ...]:
        return ("spec", "driver", "version") if self.kind == CLUSTER_POLICY else ("spec", "version")

    @property
    def policy_path(self) -> tuple[str, ...]:
        return (("spec", "driver", "upgradePolicy") if self.kind == CLUSTER_POLICY
                else ("spec", "upgradePolicy"))

    def describe(self) -> str:
        return f"{self.kind} {self.name}"

    def change(self, path: Sequence[str], value: Any, summary: str) -> Change:
        """A JSON merge patch setting ``path`` to ``value`` (``None`` removes it)."""
        body: Any = value
        for key in reversed(tuple(path)):
            body = {key: body}
        return Change(verb="patch", kind=self.kind, name=self.name, body=body,
                      kubectl=kubectl_patch(self.kind, self.name, body), summary=summary,
                      patch_type="merge", resource_version=self.resource_version)

    def nodes(self, snapshot: ClusterSnapshot) -> list[NodeView]:
        """The nodes whose driver this object drives (the upgrade controller's managed set)."""
        if self.kind == NVIDIA_DRIVER:
            return [n for n in snapshot.nodes.values() if n.driver_owner_cr == self.name
                    or (n.driver_owner_cr is None and is_managed(n)
                        and _policy_owner(snapshot) == self.name)]
        return [n for n in snapshot.nodes.values() if is_managed(n)]


def kubectl_patch(kind: str, name: str, body: Any) -> str:
    """``kubectl patch <resource> <name> --type merge -p '<json>'``."""
    return (f"kubectl patch {_KUBECTL_RESOURCE.get(kind, kind.lower())} {name} --type merge "
            f"-p {shlex.quote(json.dumps(body, separators=(',', ':')))}")


def kubectl_label(node: str, labels: Mapping[str, str | None]) -> str:
    """``kubectl label node <n> k=v k2- --overwrite``."""
    parts = [f"{k}-" if v is None else f"{k}={v}" for k, v in labels.items()]
    return f"kubectl label node {node} {' '.join(parts)} --overwrite"


def kubectl_annotate(node: str, annotations: Mapping[str, str | None]) -> str:
    parts = [f"{k}-" if v is None else f"{k}={v}" for k, v in annotations.items()]
    return f"kubectl annotate node {node} {' '.join(parts)} --overwrite"


def node_labels_change(node: str, labels: Mapping[str, str | None], summary: str) -> Change:
    """A merge patch of node labels (``None`` removes a label)."""
    return Change(verb="patch", kind="Node", name=node,
                  body={"metadata": {"labels": dict(labels)}},
                  kubectl=kubectl_label(node, labels), summary=summary)


def _policy_owner(snapshot: ClusterSnapshot) -> str | None:
    """The NVIDIADriver whose policy the snapshot's upgrade view shows (``NVIDIADriver x``)."""
    policy = snapshot.upgrade.policy
    if policy is not None and policy.source.startswith(NVIDIA_DRIVER + " "):
        return policy.source[len(NVIDIA_DRIVER) + 1:]
    return None


def _uses_nvidia_driver(snapshot: ClusterSnapshot) -> bool:
    cp = snapshot.cluster_policy
    if cp.state == "missing":
        return any(n.driver_owner_cr for n in snapshot.nodes.values()) or (
            _policy_owner(snapshot) is not None)
    return cp.use_nvidia_driver_crd


def resolve_target(snapshot: ClusterSnapshot, targets: Sequence[str]) -> DriverTarget | str:
    """The object to edit for ``targets`` (nodes; may be empty), or why there is none."""
    cp = snapshot.cluster_policy
    if cp.state == "unknown":  # forbidden, not missing: no object to name or edit
        return ("ClusterPolicies cannot be read (403): which object configures the driver "
                "is unknown")
    if not _uses_nvidia_driver(snapshot):
        if cp.state == "missing":
            return "no ClusterPolicy in the cluster: nothing configures the driver"
        if not cp.driver_enabled:
            return (f"driver.enabled is false on ClusterPolicy {cp.name}: the operator does "
                    "not manage the driver")
        return DriverTarget(CLUSTER_POLICY, cp.name, cp.resource_version or None,
                            cp.driver_version, cp.upgrade_policy)
    owners = sorted({o for t in targets if (o := _owner_of(snapshot, t))})
    if not owners:
        owners = [o] if (o := _policy_owner(snapshot)) else sorted(
            {n.driver_owner_cr for n in snapshot.nodes.values() if n.driver_owner_cr})
    if len(owners) != 1:
        why = ("several NVIDIADrivers own these nodes: " if owners
               else "no NVIDIADriver owns a node: ")
        return why + (", ".join(owners) or "pick a node that has a driver owner")
    policy = snapshot.upgrade.policy if _policy_owner(snapshot) == owners[0] else None
    return DriverTarget(NVIDIA_DRIVER, owners[0], None, "", policy)


def _owner_of(snapshot: ClusterSnapshot, node: str) -> str | None:
    view = snapshot.nodes.get(node)
    return view.driver_owner_cr if view is not None else None


# ------------------------------------------------------------------ sending
Replanner = Callable[[ClusterSnapshot], Plan]


def send_policy_change(plan: Plan, change: Change, writer: ClusterWriter,
                       replan: Replanner) -> Result | JsonObj:
    """Send one ClusterPolicy/NVIDIADriver patch; a 409 re-reads the object and re-plans.

    Returns the server's object, or a failed :class:`Result` (with ``replan`` on a 409:
    nothing was written, the UI shows the fresh plan and asks again).
    """
    if change.resource_version is None and change.kind == NVIDIA_DRIVER:
        current = writer.get(change.kind, change.name)
        change = replace(change, resource_version=str(
            (current.get("metadata") or {}).get("resourceVersion") or "") or None)
    try:
        return writer.patch(change)
    except WriteError as error:
        if error.status != 409:
            return Result(ok=False, summary=f"{plan.title}: refused", error=error.reason)
        fresh = writer.get(change.kind, change.name)
        new_plan = replan(_rebased(plan.basis, change.kind, fresh))
        return Result(ok=False, summary=f"{plan.title}: not applied",
                      error=(f"{change.kind} {change.name} changed since the plan was made "
                             "(409 Conflict); nothing was written, review the new plan"),
                      details=tuple(new_plan.impact[:3]), conflict=True, replan=new_plan)


def _rebased(basis: ClusterSnapshot | None, kind: str, fresh: JsonObj) -> ClusterSnapshot:
    """``basis`` with the re-read object in place of the one the plan saw."""
    snapshot = basis if basis is not None else ClusterSnapshot()
    if kind == CLUSTER_POLICY:
        view = read_cluster_policy([fresh])
        upgrade = snapshot.upgrade
        if upgrade.policy is not None and upgrade.policy.source.startswith(CLUSTER_POLICY):
            upgrade = replace(upgrade, policy=view.upgrade_policy)
        return replace(snapshot, cluster_policy=view, upgrade=upgrade)
    spec = fresh.get("spec") or {}
    name = str((fresh.get("metadata") or {}).get("name", ""))
    policy = read_upgrade_policy(spec.get("upgradePolicy") or {}, f"{NVIDIA_DRIVER} {name}",
                                 default_auto=True)
    return replace(snapshot, upgrade=replace(snapshot.upgrade, policy=policy))


def send_all(plan: Plan, writer: ClusterWriter, progress: Callable[[Progress], None],
             cancel: threading.Event, changes: Sequence[Change] | None = None
             ) -> tuple[list[str], Result | None]:
    """Send node changes one by one, stopping on cancel or the first refusal.

    Returns the summaries of what was sent, and a Result when it stopped early.
    """
    todo = list(plan.changes if changes is None else changes)
    done: list[str] = []
    for index, change in enumerate(todo):
        if cancel.is_set():
            return done, Result(ok=False, cancelled=True,
                                summary=f"{plan.title}: stopped after {len(done)} of {len(todo)}",
                                details=tuple(done), interrupted=stop_reason(cancel))
        progress(Progress(change.summary, index, len(todo)))
        try:
            writer.patch(change)
        except WriteError as error:
            return done, Result(ok=False, summary=f"{plan.title}: {change.name} refused",
                                error=error.reason, details=tuple(done))
        done.append(f"{change.name}: {change.summary}")
    return done, None


# ------------------------------------------------------------------ waiting
@dataclass
class Waiter:
    """Polls a condition until it holds, the operator cancels, or a deadline passes.

    ``poll_seconds`` is how long to sleep between polls (tests make it short);
    ``cancel.wait`` is the sleep, so escape is answered within one poll.
    """

    cancel: threading.Event
    poll_seconds: float = 5.0

    def until(self, check: Callable[[], bool], timeout: float | None = None) -> str:
        """``done``, ``cancelled`` or ``timeout``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if check():
                return "done"
            if self.cancel.is_set():
                return "cancelled"
            if deadline is not None and time.monotonic() > deadline:
                return "timeout"
            if self.cancel.wait(self.poll_seconds):
                return "cancelled"


def node_labels(writer: ClusterWriter, node: str) -> dict[str, str]:
    """The node's labels read fresh from the server."""
    obj = writer.get("Node", node)
    return dict((obj.get("metadata") or {}).get("labels") or {})


def upgrade_state(writer: ClusterWriter, node: str) -> str:
    return node_labels(writer, node).get(L.UPGRADE_STATE, "")


def is_gpu_pod(pod: Mapping[str, Any]) -> bool:
    """Running/Pending and requesting GPUs or MIG slices (the upgrade controller's filter)."""
    if (pod.get("status") or {}).get("phase") not in ("Running", "Pending"):
        return False
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        for section in ("requests", "limits"):
            if any(L.is_gpu_resource(k) for k in (resources.get(section) or {})):
                return True
    return False


def pod_ref(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"
