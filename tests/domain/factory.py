"""Builders for realistic GPU Operator objects, from the JSON fixtures plus overrides.

Written from the domain reference (gpu-operator.md §1.2 init containers, §4 upgrade keys),
not from the emulator, so the two cannot share a mistake.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC
from pathlib import Path
from typing import Any

from gputui.domain.model import ClusterSnapshot, Finding
from gputui.domain.snapshot import SnapshotBuilder

FIXTURES = Path(__file__).parent / "fixtures"
NODE = "gke-prod-h100-pool-7f3a-xk2p"
NS = "gpu-operator"
T0 = 1795946400.0  # 2026-11-29T10:00:00Z: "now" in most tests


def iso(epoch: float) -> str:
    from datetime import datetime
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load(name: str) -> dict[str, Any]:
    """A fresh copy of a fixture."""
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``override`` into a copy of ``base``; a None value deletes the key."""
    result = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def node(name: str = NODE, labels: dict[str, Any] | None = None, gpus: int | None = None,
         allocatable: int | None = None, ready: bool = True, cordoned: bool = False,
         annotations: dict[str, Any] | None = None, **override: Any) -> dict[str, Any]:
    """The H100 node fixture renamed, with label/annotation/resource overrides."""
    result = load("node-h100.json")
    result["metadata"]["name"] = name
    result["metadata"]["labels"]["kubernetes.io/hostname"] = name
    result = merge(result, {"metadata": {"labels": labels or {}, "annotations": annotations or {}}})
    if gpus is not None:
        result["status"]["capacity"]["nvidia.com/gpu"] = str(gpus)
        result["status"]["allocatable"]["nvidia.com/gpu"] = str(gpus)
    if allocatable is not None:
        result["status"]["allocatable"]["nvidia.com/gpu"] = str(allocatable)
    if not ready:
        for cond in result["status"]["conditions"]:
            if cond["type"] == "Ready":
                cond.update(status="Unknown", reason="NodeStatusUnknown",
                            message="Kubelet stopped posting node status.")
    if cordoned:
        result["spec"]["unschedulable"] = True
    return merge(result, override)


# operand -> (app label, init containers, main containers), from §1.2
OPERAND_PODS: dict[str, tuple[str, list[str], list[str]]] = {
    "driver": ("nvidia-driver-daemonset", ["k8s-driver-manager"], ["nvidia-driver-ctr"]),
    "container-toolkit": ("nvidia-container-toolkit-daemonset", ["driver-validation"],
                          ["nvidia-container-toolkit-ctr"]),
    "operator-validator": ("nvidia-operator-validator",
                           ["driver-validation", "toolkit-validation", "cuda-validation",
                            "plugin-validation"], ["nvidia-operator-validator"]),
    "device-plugin": ("nvidia-device-plugin-daemonset", ["toolkit-validation",
                                                         "config-manager-init"],
                      ["nvidia-device-plugin", "config-manager"]),
    "dcgm-exporter": ("nvidia-dcgm-exporter", ["toolkit-validation"], ["nvidia-dcgm-exporter"]),
    "gpu-feature-discovery": ("gpu-feature-discovery", ["toolkit-validation",
                                                         "config-manager-init"],
                              ["gpu-feature-discovery", "config-manager"]),
    "mig-manager": ("nvidia-mig-manager", ["toolkit-validation"], ["nvidia-mig-manager"]),
    "dcgm": ("nvidia-dcgm", ["toolkit-validation"], ["nvidia-dcgm-ctr"]),
}
CORE = ["driver", "container-toolkit", "operator-validator", "device-plugin", "dcgm-exporter",
        "gpu-feature-discovery", "mig-manager"]


def _done(name: str, start: float) -> dict[str, Any]:
    return {"name": name, "ready": True, "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": iso(start), "finishedAt": iso(start + 10)}}}


def _waiting(name: str, reason: str = "PodInitializing") -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": 0,
            "state": {"waiting": {"reason": reason}}}


def operand_pod(operand: str, node_name: str = NODE, *, start: float = T0 - 86400,
                stuck_in: str | None = None, crash_in: str | None = None, restarts: int = 0,
                message: str = "", not_ready: bool = False, suffix: str = "abcde",
                stuck_since: float | None = None, deleting: bool = False) -> dict[str, Any]:
    """An operand pod: ready by default; ``stuck_in`` an init container (running there),
    ``crash_in`` a container (CrashLoopBackOff with ``restarts`` and a last message),
    ``not_ready`` main containers running but not ready."""
    app, inits, mains = OPERAND_PODS[operand]
    name = f"{app}-{suffix}"
    stop = stuck_in or (crash_in if crash_in in inits else None)
    init_statuses, reached_stop = [], False
    for init in inits:
        if reached_stop:
            init_statuses.append(_waiting(init))
        elif init == stop:
            reached_stop = True
            if init == crash_in:
                init_statuses.append(_crash(init, restarts, message))
            else:
                running = {"running": {"startedAt": iso(stuck_since or start)}}
                init_statuses.append({"name": init, "ready": False, "restartCount": restarts,
                                      "state": running})
        else:
            init_statuses.append(_done(init, start))
    if reached_stop:
        main_statuses = [_waiting(m) for m in mains]
        phase = "Pending"
    else:
        main_statuses = []
        for main in mains:
            if main == crash_in:
                main_statuses.append(_crash(main, restarts, message))
            else:
                main_statuses.append({"name": main, "ready": not not_ready, "restartCount": 0,
                                      "state": {"running": {"startedAt": iso(start + 30)}}})
        phase = "Running"
    metadata: dict[str, Any] = {
        "name": name, "namespace": NS, "creationTimestamp": iso(start),
        "labels": {"app": app, "controller-revision-hash": "7d9c8b6f5"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": app,
                             "uid": "u-" + app, "controller": True}]}
    if operand == "driver":
        metadata["labels"]["app.kubernetes.io/component"] = "nvidia-driver"
    if deleting:
        metadata["deletionTimestamp"] = iso(start + 60)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
            "spec": {"nodeName": node_name, "initContainers": [{"name": i} for i in inits],
                     "containers": [{"name": m} for m in mains]},
            "status": {"phase": phase, "startTime": iso(start),
                       "initContainerStatuses": init_statuses,
                       "containerStatuses": main_statuses}}


def _crash(name: str, restarts: int, message: str) -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": restarts,
            "state": {"waiting": {"reason": "CrashLoopBackOff",
                                  "message": f"back-off 5m0s restarting failed container={name}"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "message": message}}}


def healthy_pods(node_name: str = NODE, operands: list[str] | None = None,
                 overrides: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """One ready pod per operand; ``overrides[operand]`` = kwargs for :func:`operand_pod`."""
    result = []
    for index, operand in enumerate(operands or CORE):
        kwargs = {"suffix": f"{node_name[-5:]}{index}", **(overrides or {}).get(operand, {})}
        result.append(operand_pod(operand, node_name, **kwargs))
    return result


def workload(name: str, node_name: str = NODE, gpus: int = 8, labels: dict[str, str] | None = None,
             start: float = T0 - 31 * 3600, namespace: str = "ml",
             phase: str = "Running") -> dict[str, Any]:
    """A GPU workload pod (the trainer fixture, renamed)."""
    pod = load("pod-workload-trainer.json")
    pod["metadata"].update(name=name, namespace=namespace)
    pod["metadata"]["labels"] = labels if labels is not None else {"app": "trainer"}
    pod["spec"]["nodeName"] = node_name
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    pod["status"]["startTime"] = iso(start)
    pod["status"]["phase"] = phase
    return pod


def cluster_policy(**override: Any) -> dict[str, Any]:
    """The ready ClusterPolicy fixture with overrides."""
    return merge(load("clusterpolicy-ready.json"), override)


def upgrade_policy(**fields: Any) -> dict[str, Any]:
    """A ClusterPolicy override setting ``spec.driver.upgradePolicy`` fields."""
    return {"spec": {"driver": {"upgradePolicy": fields}}}


def daemonset(app: str, desired: int, current: int | None = None, ready: int | None = None,
              operand_component: str = "") -> dict[str, Any]:
    """An operand DaemonSet (the driver fixture renamed) with status numbers."""
    ds = load("daemonset-driver.json")
    ds["metadata"]["name"] = app
    ds["metadata"]["labels"] = {"app": app}
    if operand_component:
        ds["metadata"]["labels"]["app.kubernetes.io/component"] = operand_component
    current = desired if current is None else current
    ready = current if ready is None else ready
    ds["status"].update(desiredNumberScheduled=desired, currentNumberScheduled=current,
                        numberReady=ready, numberAvailable=ready, updatedNumberScheduled=current)
    return ds


def upgrade_event(node_name: str, message: str, when: float,
                  kind: str = "Normal") -> dict[str, Any]:
    """A GPUDriverUpgrade Node event."""
    event = load("event-upgrade-failed.json")
    event["involvedObject"]["name"] = node_name
    event["message"] = message
    event["type"] = kind
    event["lastTimestamp"] = event["firstTimestamp"] = iso(when)
    return event


def objects(nodes: list[dict[str, Any]], pods: list[dict[str, Any]] | None = None, *,
            policies: list[dict[str, Any]] | None = None,
            daemonsets: list[dict[str, Any]] | None = None,
            configmaps: list[dict[str, Any]] | None = None,
            events: list[dict[str, Any]] | None = None,
            label_times: dict[str, dict[str, float]] | None = None, **extra: Any) -> Any:
    """A ClusterObjects from lists of dicts (policy defaults to the ready fixture)."""
    from gputui.domain.inputs import ClusterObjects
    return ClusterObjects(
        nodes={n["metadata"]["name"]: n for n in nodes},
        pods={(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods or []},
        daemonsets={d["metadata"]["name"]: d for d in daemonsets or []},
        cluster_policies=[cluster_policy()] if policies is None else policies,
        configmaps={(c["metadata"]["namespace"], c["metadata"]["name"]): c
                    for c in configmaps or []},
        events=events or [], label_times=label_times or {}, operator_namespace=NS,
        context="prod-gke", server="https://10.0.0.1", **extra)


Json = dict[str, Any]


NAMES = [f"gpu-{i:02d}" for i in range(12)]


def rolling_upgrade() -> tuple[list[Json], list[Json], list[Json]]:
    """Twelve nodes in a rolling upgrade, some sick, some MIG; events for two."""
    nodes, pods = [], []
    states = ["upgrade-done", "upgrade-required", "wait-for-jobs-required", "upgrade-failed",
              "pod-restart-required", "cordon-required"]
    for i, name in enumerate(NAMES):
        labels: Json = {"nvidia.com/gpu-driver-upgrade-state": states[i % len(states)]}
        if i % 4 == 0:
            labels["nvidia.com/mig.config"] = "all-1g.10gb"
        nodes.append(node(name, labels=labels, cordoned=i % 5 == 0, ready=i != 7))
        overrides: dict[str, dict[str, Any]] = {}
        if i % 3 == 1:
            overrides["driver"] = {"crash_in": "nvidia-driver-ctr", "restarts": 4}
        if i % 3 == 2:
            overrides["operator-validator"] = {"stuck_in": "cuda-validation"}
        pods += healthy_pods(name, overrides=overrides)
        pods.append(workload(f"job-{i}", name, gpus=4))
    events = [upgrade_event(NAMES[3], "Failed to drain the node", T0 - 600, "Warning"),
              upgrade_event(NAMES[1], "label to upgrade-required", T0 - 900)]
    return nodes, pods, events


def rolling_upgrade_objects(nodes: list[Json], pods: list[Json], events: list[Json],
                            **kw: Any) -> Any:
    """The objects of :func:`rolling_upgrade` with an upgrade policy (two at a time)."""
    policy = cluster_policy(**upgrade_policy(autoUpgrade=True, maxParallelUpgrades=2))
    return objects(nodes, pods, events=events, policies=[policy],
                     configmaps=[load("configmap-default-mig-parted-config.json")],
                     daemonsets=[daemonset(OPERAND_PODS[op][0], len(nodes))
                                 for op in CORE], **kw)


NOT_READY = cluster_policy(status={"state": "notReady", "conditions": [
    {"type": "Ready", "status": "False", "reason": "Error", "message": ""},
    {"type": "Error", "status": "True", "reason": "OperandNotReady",
     "message": "ClusterPolicy is not ready; states not ready: [state-driver]"}]})


def build(nodes: list[dict[str, Any]], pods: list[dict[str, Any]], now: float = T0,
          **kw: Any) -> ClusterSnapshot:
    """The snapshot of these nodes and pods at ``now``, built by a fresh builder."""
    return SnapshotBuilder().build(objects(nodes, pods, **kw), now)


def of(snap: ClusterSnapshot, code: str) -> list[Finding]:
    """The findings of ``snap`` with this code."""
    return [x for x in snap.findings if x.code == code]


def joining_pods(driver_started: float, node: str = NODE) -> list[dict[str, Any]]:
    """A node whose driver container compiles: every other operand waits in an init
    container for a marker file (gpu-operator ``assets/state-*/0500_daemonset.yaml``)."""
    waits = {"container-toolkit": "driver-validation", "operator-validator": "driver-validation",
             "device-plugin": "toolkit-validation", "dcgm-exporter": "toolkit-validation",
             "gpu-feature-discovery": "toolkit-validation", "mig-manager": "toolkit-validation"}
    pods = [operand_pod("driver", node, start=driver_started - 30, not_ready=True,
                          suffix="drv")]
    for operand, init in waits.items():
        pods.append(operand_pod(operand, node, start=driver_started, stuck_in=init,
                                  suffix=operand[:3]))
    return pods
