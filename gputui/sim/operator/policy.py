"""ClusterPolicy objects and their status (§2, §1.6): ready/notReady/ignored with conditions."""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.operands import OPERANDS
from gputui.sim.operator.world import DEFAULT_POLICY_SPEC, World, deep_merge

Obj = dict[str, Any]


def cluster_policy(name: str, spec_overrides: Obj) -> Obj:
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy",
            "metadata": {"name": name,
                         "labels": {"app.kubernetes.io/component": "gpu-operator",
                                    "app.kubernetes.io/managed-by": "Helm"},
                         "annotations": {"meta.helm.sh/release-name": "gpu-operator",
                                         "meta.helm.sh/release-namespace": "gpu-operator"}},
            "spec": deep_merge(DEFAULT_POLICY_SPEC, spec_overrides)}


def ds_ready(ds: Obj) -> bool:
    """``isDaemonSetReady`` of the operator (§1.6)."""
    st = ds.get("status") or {}
    desired = st.get("desiredNumberScheduled", 0)
    if desired == 0:
        return True
    if st.get("numberUnavailable", 0) != 0:
        return False
    if (ds["spec"].get("updateStrategy") or {}).get("type") == "OnDelete":
        return bool(st.get("updatedNumberScheduled", 0) == desired
                    and st.get("numberReady", 0) == desired)
    return bool(st.get("observedGeneration", 0) >= ds["metadata"].get("generation", 1)
            and st.get("updatedNumberScheduled", 0) == desired
            and st.get("numberAvailable", 0) == desired)


def _conditions(ready: bool, reason: str, message: str, stamp: str) -> list[Obj]:
    if ready:
        return [{"type": "Ready", "status": "True", "reason": reason, "message": message,
                 "lastTransitionTime": stamp},
                {"type": "Error", "status": "False", "reason": "Ready", "message": "",
                 "lastTransitionTime": stamp}]
    return [{"type": "Ready", "status": "False", "reason": "Error", "message": "",
             "lastTransitionTime": stamp},
            {"type": "Error", "status": "True", "reason": reason, "message": message,
             "lastTransitionTime": stamp}]


def update_status(world: World) -> None:
    """Write every ClusterPolicy's status from the operand DaemonSets and the nodes."""
    items, _ = world.store.list("clusterpolicies.nvidia.com")
    if not items:
        return
    active = world.policy()
    assert active is not None
    nodes, _ = world.store.list("nodes")
    has_nfd = any(k.startswith("feature.node.kubernetes.io/")
                  for n in nodes for k in (n["metadata"].get("labels") or {}))
    gpu_nodes = [n for n in nodes if (n["metadata"].get("labels") or {}).get(K.GPU_PRESENT) == "true"]
    not_ready = []
    for op in OPERANDS:
        ds = world.store.get("daemonsets.apps", op.ds, world.ns)
        if ds is not None and not ds_ready(ds) and op.state not in not_ready:
            not_ready.append(op.state)
    if not_ready:
        state, conds = "notReady", ("OperandNotReady",
                                    f"ClusterPolicy is not ready; states not ready: [{' '.join(not_ready)}]")
    elif not has_nfd:
        state, conds = "ready", ("NFDLabelsMissing", "No NFD labels found")
    elif not gpu_nodes:
        state, conds = "ready", ("NoGPUNodes",
                                 "No GPU node found, watching for new nodes to join the cluster.")
    else:
        state, conds = "ready", ("Reconciled", ("ClusterPolicy is ready as all resources have been "
                                              "successfully reconciled"))
    for item in items:
        name = item["metadata"]["name"]
        if name == active["metadata"]["name"]:
            _write(world, name, state, not_ready == [] , conds)
        else:
            _write(world, name, "ignored", False, None)


def _write(world: World, name: str, state: str, ready: bool,
           reason_msg: tuple[str, str] | None) -> None:
    """Set the state and, unless ``reason_msg`` is None, the conditions: an ignored
    ClusterPolicy only gets ``SetStatus(Ignored)``, its conditions stay as they were
    (gpu-operator ``controllers/clusterpolicy_controller.go``)."""
    current = world.store.get("clusterpolicies.nvidia.com", name) or {}
    old = current.get("status") or {}
    old_conds = {(c["type"], c["status"], c.get("reason"), c.get("message")) for c in old.get("conditions", [])}
    conds = (list(old.get("conditions") or []) if reason_msg is None else
             _conditions(ready, reason_msg[0], reason_msg[1], world.clock.rfc3339()))
    new_conds = {(c["type"], c["status"], c.get("reason"), c.get("message")) for c in conds}
    if old.get("state") == state and old.get("namespace") == world.ns and old_conds == new_conds:
        return

    def change(obj: Obj) -> None:
        obj["status"] = {"state": state, "namespace": world.ns, "conditions": conds}
    world.store.mutate("clusterpolicies.nvidia.com", name, None, change, manager=K.M_OPERATOR)
