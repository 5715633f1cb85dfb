"""Builders for the Kubernetes objects the emulated stack writes, shaped like real ones."""

from __future__ import annotations

import hashlib
import json
from functools import partial
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.operands import Operand, image_for
from gputui.sim.operator.runtime import ContainerRun, NodeRun, PodRun

Obj = dict[str, Any]


def revision_hash(template: Obj) -> str:
    """A controller-revision-hash computed from the pod template, like the DS controller's."""
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    return str(int(digest[:8], 16))[:10].ljust(10, "7")[:10]


def pod_template(op: Operand, namespace: str, driver_image: str, env: dict[str, str]) -> Obj:
    """The DaemonSet pod template for an operand (containers, tolerations, priority)."""
    def container(name: str) -> Obj:
        entry: Obj = {"name": name, "image": image_for(op, name, driver_image),
                      "imagePullPolicy": "IfNotPresent",
                      "env": [{"name": k, "value": v} for k, v in sorted(env.items())]}
        if name == "nvidia-dcgm-exporter":
            entry["ports"] = [{"name": "metrics", "containerPort": 9400, "protocol": "TCP"}]
        return entry

    labels = {"app": op.app, **op.extra_labels}
    spec: Obj = {
        "priorityClassName": "system-node-critical",
        "serviceAccountName": op.ds if op.key != "validator" else "nvidia-operator-validator",
        "tolerations": [dict(K.TOLERATION_GPU)],
        "nodeSelector": dict(op.node_selector),
        "initContainers": [container(c) for c in op.init],
        "containers": [container(c) for c in op.main],
        "restartPolicy": "Always",
    }
    if op.key in ("driver", "mig-manager"):
        spec["hostPID"] = True
    return {"metadata": {"labels": labels}, "spec": spec}


def daemonset(op: Operand, namespace: str, template: Obj, owner: Obj | None) -> Obj:
    strategy: Obj = ({"type": "OnDelete"} if op.on_delete else
                     {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "1", "maxSurge": 0}})
    meta: Obj = {"name": op.ds, "namespace": namespace,
                 "labels": {"app": op.app, "app.kubernetes.io/managed-by": "gpu-operator",
                            "helm.sh/chart": "gpu-operator-v26.7.0", **op.extra_labels},
                 "annotations": {"deprecated.daemonset.template.generation": "1"}}
    if owner:
        meta["ownerReferences"] = [_owner_ref(owner, controller=True)]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": op.app}}, "template": template,
                     "updateStrategy": strategy, "revisionHistoryLimit": 10},
            "status": {"currentNumberScheduled": 0, "desiredNumberScheduled": 0,
                       "numberMisscheduled": 0, "numberReady": 0, "observedGeneration": 1}}


def controller_revision(ds: Obj, template: Obj, rev_hash: str, revision: int) -> Obj:
    meta = ds["metadata"]
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": f"{meta['name']}-{rev_hash}", "namespace": meta["namespace"],
                         "labels": {**template["metadata"]["labels"], K.REVISION_HASH: rev_hash},
                         "annotations": {"deprecated.daemonset.template.generation": str(revision)},
                         "ownerReferences": [_owner_ref(ds, controller=True)]},
            "data": {"spec": {"template": template}}, "revision": revision}


def _owner_ref(owner: Obj, controller: bool) -> Obj:
    return {"apiVersion": owner.get("apiVersion", "v1"), "kind": owner.get("kind", ""),
            "name": owner["metadata"]["name"], "uid": owner["metadata"].get("uid", ""),
            "controller": controller, "blockOwnerDeletion": True}


def operand_pod(op: Operand, ds: Obj, run: PodRun, node: NodeRun, template: Obj,
                generation: int) -> Obj:
    """A DaemonSet pod as the DS controller creates it (bound to its node by affinity)."""
    labels = {**template["metadata"]["labels"], K.REVISION_HASH: run.revision,
              K.TEMPLATE_GENERATION: str(generation)}
    # the template's containers, volumes and tolerations are shared, not copied: stored
    # objects are read-only (a write copies first), and at 5,000 nodes 34,000 copies of
    # them were a third of the set-up's time and of the emulator's memory
    spec = dict(template["spec"])
    spec["nodeName"] = node.name
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": [node.name]}]}]}}}
    spec["tolerations"] = [*spec["tolerations"], *_DS_TOLERATIONS]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": run.name, "namespace": ds["metadata"]["namespace"],
                         "generateName": op.ds + "-", "labels": labels,
                         "ownerReferences": [_owner_ref(ds, controller=True)]},
            "spec": spec, "status": {"phase": "Pending", "qosClass": "BestEffort"}}


#: the tolerations the DaemonSet controller adds to every pod it makes (shared: read-only)
_DS_TOLERATIONS: tuple[Obj, ...] = tuple(
    {"key": f"node.kubernetes.io/{t}", "operator": "Exists", "effect": e}
    for t, e in (("not-ready", "NoExecute"), ("unreachable", "NoExecute"),
                 ("disk-pressure", "NoSchedule"), ("memory-pressure", "NoSchedule"),
                 ("pid-pressure", "NoSchedule"), ("unschedulable", "NoSchedule")))


def _container_status(run: ContainerRun, image: str, init: bool, rfc: Any, now: float,
                      pending: bool) -> Obj:
    status: Obj = {"name": run.name, "image": image, "imageID": image.replace(":", "@sha256:", 1)
                   if pending is False else "", "ready": run.ready,
                   "restartCount": run.restarts, "started": bool(run.started_at) and not pending}
    if run.last_exit:
        code, reason, start, end = run.last_exit
        status["lastState"] = {"terminated": {"exitCode": code, "reason": reason,
                                              "startedAt": rfc(start), "finishedAt": rfc(end)}}
    else:
        status["lastState"] = {}
    if run.crash_until is not None and now < run.crash_until:
        status["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": (
            f"back-off {int(run.crash_until - (run.last_exit or (0, '', 0, now))[3])}s "
            f"restarting failed container={run.name}")}}
        status["started"] = False
    elif pending or run.started_at is None:
        status["state"] = {"waiting": {"reason": "PodInitializing"}}
    elif run.finished_at is not None:
        status["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                          "startedAt": rfc(run.started_at),
                                          "finishedAt": rfc(run.finished_at)}}
        status["started"] = False
    else:
        status["state"] = {"running": {"startedAt": rfc(run.started_at)}}
    if not init:
        status["containerID"] = "containerd://" + hashlib.sha1(
            f"{run.name}{run.started_at}".encode()).hexdigest() * 1 + "0" * 24
    return status


def _shared_status(shared: dict[tuple[object, ...], Obj], run: ContainerRun, image: str,
                   init: bool, rfc: Any, now: float, pending: bool) -> Obj:
    """:func:`_container_status`, one object per distinct input (see :func:`pod_status`)."""
    crashing = run.crash_until is not None and now < run.crash_until
    key = ("container", run.name, image, init, pending, run.ready, run.restarts,
           run.started_at, run.finished_at, run.last_exit, crashing, run.crash_until, now)
    found = shared.get(key)
    if found is None:
        found = shared[key] = _container_status(run, image, init, rfc, now, pending)
    return found


def pod_status(run: PodRun, node: NodeRun, images: dict[str, str], rfc: Any, now: float,
               shared: dict[tuple[object, ...], Obj] | None = None) -> Obj:
    """The status a kubelet reports for an operand pod in its current step.

    ``shared``: equal container statuses and conditions are one object, kept there (the
    scenario's set-up: 34,000 converged pods at 5,000 nodes differ in names and IPs only,
    and building each entry anew was a tenth of the set-up's time and memory)."""
    status = _container_status if shared is None else partial(_shared_status, shared)
    inits = [status(c, images.get(c.name, ""), True, rfc, now, False)
             for c in run.init[: run.step + 1]]
    inits += [status(c, images.get(c.name, ""), True, rfc, now, True)
              for c in run.init[run.step + 1:]]
    mains = [status(c, images.get(c.name, ""), False, rfc, now, not run.initialized)
             for c in run.main]
    started = rfc(run.created_at)
    conditions = _conditions(run, rfc, now)
    if shared is not None:
        conditions = [shared.setdefault(("condition", *c.items()), c) for c in conditions]
    return {
        "phase": run.phase,
        "conditions": conditions,
        **_addresses(run, node),
        "startTime": started, "qosClass": "BestEffort",
        "initContainerStatuses": inits, "containerStatuses": mains,
    }


def readdressed(status: Obj, run: PodRun, node: NodeRun) -> Obj:
    """Another pod's ``status`` (read-only, shared) with the addresses of ``run`` on
    ``node``: what a pod in the same state, made at the same instant, reports."""
    copied = dict(status)
    copied.update(_addresses(run, node))
    return copied


def _addresses(run: PodRun, node: NodeRun) -> Obj:
    return {"hostIP": node.ip, "hostIPs": [{"ip": node.ip}],
            "podIP": run.ip, "podIPs": [{"ip": run.ip}] if run.ip else []}


def _conditions(run: PodRun, rfc: Any, now: float) -> list[Obj]:
    """The pod's conditions, each with the time its status last changed: the kubelet's
    status manager (kubernetes ``pkg/kubelet/status/status_manager.go``,
    ``updateLastTransitionTime``) keeps ``lastTransitionTime`` while a condition's status
    stays the same and sets it to now when it flips, so ``Ready`` says when the pod last
    became ready, not when it was last written."""
    run.transitions.setdefault("PodScheduled", (True, run.created_at))  # bound as created

    def cond(kind: str, ok: bool, reason: str | None = None) -> Obj:
        before = run.transitions.get(kind)
        if before is None or before[0] != ok:
            before = run.transitions[kind] = (ok, now)
        entry: Obj = {"type": kind, "status": "True" if ok else "False",
                      "lastProbeTime": None, "lastTransitionTime": rfc(before[1])}
        if not ok and reason:
            entry["reason"] = reason
        return entry

    not_ready = "ContainersNotInitialized" if not run.initialized else "ContainersNotReady"
    return [cond("PodReadyToStartContainers", True),
            cond("Initialized", run.initialized, "ContainersNotInitialized"),
            cond("Ready", run.ready, not_ready),
            cond("ContainersReady", run.ready, not_ready),
            cond("PodScheduled", True)]


def node_event(node: str, node_uid: str, reason: str, message: str, stamp: str, seq: int,
               etype: str = "Normal", component: str = "gpu-operator") -> Obj:
    """An Event on a Node: namespace ``default`` like real node events (§4.1)."""
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{node}.{seq:016x}", "namespace": "default"},
            "involvedObject": {"kind": "Node", "name": node, "uid": node_uid,
                               "apiVersion": "v1"},
            "reason": reason, "message": message, "type": etype,
            "source": {"component": component}, "reportingComponent": component,
            "firstTimestamp": stamp, "lastTimestamp": stamp, "count": 1,
            "eventTime": None}


def pod_event(pod: Obj, reason: str, message: str, stamp: str, seq: int,
              etype: str = "Normal", component: str = "gpu-operator") -> Obj:
    """An Event on a Pod, in the pod's namespace (what a recorder writes for a Pod object)."""
    meta = pod.get("metadata") or {}
    name, namespace = str(meta.get("name", "")), str(meta.get("namespace", "default"))
    event = node_event(name, str(meta.get("uid", "")), reason, message, stamp, seq, etype,
                       component)
    event["metadata"]["namespace"] = namespace
    event["involvedObject"].update(kind="Pod", namespace=namespace)
    return event
