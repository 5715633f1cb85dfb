"""The operand DaemonSets: objects, ControllerRevisions, per-node pods and status (§1.2, §1.6).

Plays two real components: the operator rendering DaemonSets from the ClusterPolicy, and the
DaemonSet controller creating a pod on every node whose labels match and deleting pods whose
node no longer matches (this is how pause labels make operands disappear). The driver
DaemonSet is OnDelete: a new revision leaves old pods alone until someone deletes them.
"""

from __future__ import annotations

import json
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.objects import (
    controller_revision,
    daemonset,
    operand_pod,
    pod_status,
    pod_template,
    readdressed,
    revision_hash,
)
from gputui.sim.operator.operands import OPERANDS, Operand
from gputui.sim.operator.runtime import ContainerRun, NodeRun, PodRun
from gputui.sim.operator.world import STATUS, World

Obj = dict[str, Any]
DISABLED_BY_DEFAULT = {"dcgm", "nodeStatusExporter"}


def enabled(op: Operand, spec: Obj) -> bool:
    if not spec:
        return False
    return bool((spec.get(op.policy_key) or {}).get("enabled", True))


def driver_image(spec: Obj) -> str:
    driver = spec.get("driver") or {}
    return (f"{driver.get('repository', 'nvcr.io/nvidia')}/{driver.get('image', 'driver')}:"
            f"{driver.get('version', '570.172.08')}-ubuntu22.04")


def _env(op: Operand, spec: Obj) -> dict[str, str]:
    env = {"NODE_NAME": "", "OPERATOR_NAMESPACE": ""}
    strategy = str((spec.get("mig") or {}).get("strategy", "single"))
    if op.key in ("device-plugin", "gfd", "validator"):
        env["MIG_STRATEGY"] = strategy
        if strategy in ("single", "mixed"):
            env["NVIDIA_MIG_MONITOR_DEVICES"] = "all"
    if op.key == "validator":
        env["WITH_WORKLOAD"] = "false"
    if op.key == "dcgm-exporter":
        env.update({"DCGM_EXPORTER_LISTEN": ":9400", "DCGM_EXPORTER_KUBERNETES": "true",
                    "DCGM_EXPORTER_COLLECTORS": "/etc/dcgm-exporter/dcp-metrics-included.csv"})
    if op.key in ("device-plugin", "gfd", "mps"):
        cfg = (spec.get("devicePlugin") or {}).get("config") or {}
        if cfg.get("name"):
            env.update({"CONFIG_FILE": "/config/config.yaml", "DEFAULT_CONFIG": cfg.get("default", ""),
                        "FALLBACK_STRATEGIES": "empty"})
    if op.key == "mig-manager":
        env.update({"WITH_REBOOT": "false", "CONFIG_FILE": "/mig-parted-config/config.yaml"})
    if op.key == "device-plugin":  # devicePlugin.env (e.g. DP_DISABLE_HEALTHCHECKS) as upstream
        for entry in (spec.get("devicePlugin") or {}).get("env") or []:
            if isinstance(entry, dict) and entry.get("name") and "value" in entry:
                env[str(entry["name"])] = str(entry["value"])
    return env


def reconcile(world: World) -> bool:
    """Create, update or delete operand DaemonSets to match the ClusterPolicy; True if changed."""
    spec = world.policy_spec()
    policy = world.policy()
    changed = False
    for op in OPERANDS:
        existing = world.store.get("daemonsets.apps", op.ds, world.ns)
        if not enabled(op, spec):
            if existing is not None:
                world.store.delete("daemonsets.apps", op.ds, world.ns)
                world.templates.pop(op.key, None)
                changed = True
            continue
        template = pod_template(op, world.ns, driver_image(spec), _env(op, spec))
        rev_hash = revision_hash(template)
        if existing is None:
            obj = daemonset(op, world.ns, template, policy)
            ds = world.store.create("daemonsets.apps", obj, manager=K.M_OPERATOR)
            _add_revision(world, op, ds, template, rev_hash, 1)
            changed = True
        elif world.revisions.get(op.key, ("", 0))[0] != rev_hash:
            number = world.revisions.get(op.key, ("", 0))[1] + 1

            def change(obj: Obj, template: Obj = template, number: int = number) -> None:
                obj["spec"]["template"] = template
                obj["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = str(number)
            ds = world.store.mutate("daemonsets.apps", op.ds, world.ns, change, manager=K.M_OPERATOR)
            _add_revision(world, op, ds, template, rev_hash, number)
            changed = True
        world.templates[op.key] = template
    return changed


def _add_revision(world: World, op: Operand, ds: Obj, template: Obj, rev_hash: str, number: int) -> None:
    """The DaemonSet controller's history: a new template gets a ControllerRevision
    ``<ds>-<hash>``; a template seen before (a rollback) reuses its revision, renumbered
    as the newest (kubernetes ``pkg/controller/daemon/update.go`` ``constructHistory``), so
    the newest revision is always the current template, as the upgrade library reads it."""
    name = f"{op.ds}-{rev_hash}"
    if world.store.get("controllerrevisions.apps", name, world.ns) is None:
        world.store.create("controllerrevisions.apps",
                           controller_revision(ds, template, rev_hash, number), manager=K.M_KCM)
    else:
        def renumber(obj: Obj) -> None:
            obj["revision"] = number
        world.store.mutate("controllerrevisions.apps", name, world.ns, renumber, manager=K.M_KCM)
    world.revisions[op.key] = (rev_hash, number)


def _matches(labels: dict[str, str], selector: dict[str, str]) -> bool:
    """Whether ``labels`` hold every key of ``selector`` with its value (a subset of
    items, compared in C: the DaemonSets' status asks it 80,000 times at 5,000 nodes)."""
    return selector.items() <= labels.items()


def sync_node(world: World, node: NodeRun, labels: dict[str, str], now: float) -> bool:
    """The DS controller for one node: create missing pods, delete pods that no longer fit."""
    changed = False
    for op in OPERANDS:
        run = node.pods.get(op.key)
        if run is not None and world.store.get("pods", run.name, world.ns) is None:
            pod_gone(world, node, run)
            run = None
            changed = True
        want = op.key in world.templates and _matches(labels, op.node_selector)
        if op.key == "driver" and node.driver_blocked:
            want = False
        if want and run is None:
            create_pod(world, node, op, now)
            changed = True
        elif not want and run is not None:
            delete_pod(world, node, run)
            changed = True
    return changed


def create_pod(world: World, node: NodeRun, op: Operand, now: float, converged: bool = False) -> PodRun:
    rev_hash, number = world.revisions[op.key]
    template = world.templates[op.key]
    ds = world.store.get("daemonsets.apps", op.ds, world.ns) or {}
    name = world.pod_name(op.ds + "-")
    run = PodRun(name, op.key, node.name, rev_hash, [ContainerRun(c) for c in op.init],
                 [ContainerRun(c) for c in op.main], created_at=now, step_started=now,
                 driver_version=world.driver_version(), ip=node.ip if op.key == "driver" else world.next_ip("10.64.0.0"))
    if converged:
        for c in run.init:
            c.started_at, c.finished_at = now, now
        for c in run.main:
            c.started_at, c.ready = now, True
        run.step, run.phase = len(run.init), "Running"
    obj = operand_pod(op, ds, run, node, template, number)
    if converged:
        obj["status"] = _converged_status(world, op, run, node, template, now)
    world.store.create("pods", obj, manager=K.M_KCM, adopt=True)
    node.pods[op.key] = run
    _started(node, op.key, converged)
    world.pod_index[name] = (node.name, op.key)
    return run


def _converged_status(world: World, op: Operand, run: PodRun, node: NodeRun, template: Obj,
                      now: float) -> Obj:
    """The status of an operand pod the set-up makes already running.

    Worked out in full for the first pod of the operand's revision made at ``now``; the
    others are in the same state by construction (fresh containers, all started at
    ``now``), so they take its status with their own addresses, and its conditions'
    transition times (34,000 such pods at 5,000 nodes: building each status was a tenth of
    the set-up)."""
    key = (op.key, run.revision, now)
    first = world.setup_pods.get(key)
    if first is not None:
        status, transitions = first
        run.transitions.update(transitions)
        return readdressed(status, run, node)
    spec = template["spec"]
    images = {c["name"]: c["image"] for c in spec["initContainers"] + spec["containers"]}
    status = pod_status(run, node, images, world.clock.rfc3339, now, world.setup_statuses)
    world.setup_pods[key] = (status, dict(run.transitions))
    return status


def _started(node: NodeRun, operand: str, converged: bool) -> None:
    """What a new operand pod forgets of its predecessor: a new device plugin registers
    every GPU healthy (k8s-device-plugin ``internal/rm/health.go`` keeps health in memory);
    a new mig-manager applies the node's current label when it starts (mig-parted
    ``cmd/nvidia-mig-manager/main.go``), so deleting its pod is the real retry."""
    if operand == "device-plugin":
        for gpu in node.gpus:
            gpu.unhealthy = False
    elif operand == "mig-manager" and not converged:
        node.mig_applied_label = None


def unscheduled_driver_pod(world: World, node: str) -> None:
    """A driver pod the scheduler could not place: Pending, no ``spec.nodeName``."""
    op = next(o for o in OPERANDS if o.key == "driver")
    template = world.templates.get(op.key)
    ds = world.store.get("daemonsets.apps", op.ds, world.ns)
    if template is None or ds is None:
        return
    rev_hash, number = world.revisions[op.key]
    labels = {**template["metadata"]["labels"], K.REVISION_HASH: rev_hash,
              K.TEMPLATE_GENERATION: str(number)}
    spec = json.loads(json.dumps(template["spec"]))
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [node]}]}]}}}
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": op.ds,
             "uid": ds["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    world.store.create("pods", {
        "metadata": {"name": world.pod_name(op.ds + "-"), "namespace": world.ns,
                     "generateName": op.ds + "-", "labels": labels, "ownerReferences": [owner]},
        "spec": spec,
        "status": {"phase": "Pending", "qosClass": "BestEffort", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": world.clock.rfc3339(),
            "message": "0/25 nodes are available: 1 node(s) had untolerated taint "
                       "{node.kubernetes.io/unreachable: }, 24 node(s) didn't match Pod's "
                       "node affinity/selector."}]}}, manager=K.M_KCM)


def delete_pod(world: World, node: NodeRun, run: PodRun) -> None:
    if world.store.get("pods", run.name, world.ns) is not None:
        world.store.delete("pods", run.name, world.ns)
    pod_gone(world, node, run)


def pod_gone(world: World, node: NodeRun, run: PodRun) -> None:
    """What disappears from the host with the pod (marker files, served ports)."""
    node.pods.pop(run.operand, None)
    world.pod_index.pop(run.name, None)
    world.nodeside.forget_pod(world.ns, run.name)
    if run.operand == "driver":
        node.markers.discard(".driver-ctr-ready")
    elif run.operand == "toolkit":
        node.markers.discard("toolkit-installed")
    elif run.operand == "validator":  # preStop removes /run/nvidia/validations/*-ready
        node.markers.difference_update({"driver-ready", "toolkit-ready", "cuda-ready", "plugin-ready"})
        if run.child and world.store.get("pods", run.child, world.ns) is not None:
            world.store.delete("pods", run.child, world.ns)  # garbage-collected with its owner
    world.mark(node.name, STATUS)


def status(world: World, op: Operand, node_labels: dict[str, dict[str, str]]) -> None:
    """Recompute one DaemonSet's status from nodes and pods, as the DS controller reports it."""
    ds = world.store.get("daemonsets.apps", op.ds, world.ns)
    if ds is None:
        return
    selector = op.node_selector
    desired = sum(1 for labels in node_labels.values() if _matches(labels, selector))
    runs = [n.pods[op.key] for n in world.nodes.values() if op.key in n.pods]
    current = sum(1 for r in runs if _matches(node_labels.get(r.node, {}), selector))
    ready = sum(1 for r in runs if r.ready)
    rev = world.revisions.get(op.key, ("", 0))[0]
    updated = sum(1 for r in runs if r.revision == rev)
    new = {"currentNumberScheduled": current, "desiredNumberScheduled": desired,
           "numberMisscheduled": len(runs) - current, "numberReady": ready,
           "numberAvailable": ready, "updatedNumberScheduled": updated,
           "observedGeneration": ds["metadata"].get("generation", 1)}
    if desired - ready > 0:
        new["numberUnavailable"] = desired - ready
    if ds.get("status") != new:
        def change(obj: Obj) -> None:
            obj["status"] = new
        world.store.mutate("daemonsets.apps", op.ds, world.ns, change, manager=K.M_KCM)


def all_status(world: World) -> None:
    items, _ = world.store.list("nodes")
    labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in items}
    for op in OPERANDS:
        status(world, op, labels)
