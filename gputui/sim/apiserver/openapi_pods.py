"""OpenAPI v3 components for core/v1 Pod, Event, ConfigMap and Namespace.

The fields an operator reads while a GPU node's pods start, crash or get evicted: container
states and restarts, resource requests (``nvidia.com/gpu``), tolerations, events.
Descriptions are written for this project; names and types follow the real API.
"""

from __future__ import annotations

from gputui.sim.apiserver.openapi_core import CORE
from gputui.sim.apiserver.openapi_dsl import (
    Schema,
    array,
    boolean,
    int64,
    integer,
    item_ref,
    kind_fields,
    map_of,
    obj,
    quantity,
    ref,
    string,
    string_map,
    time,
)

_STATUS = string("True, False or Unknown.", enum=["True", "False", "Unknown"])


def _pod_spec() -> Schema:
    return obj("What the pod should run and where.", {
        "nodeName": string("The node the pod is bound to; set by the scheduler."),
        "nodeSelector": string_map("Labels a node must carry for the pod to be placed there "
                                   "(the GPU Operator's daemonsets select on "
                                   "nvidia.com/gpu.deploy.* labels)."),
        "containers": array(item_ref(CORE + "Container"), "The pod's main containers.",
                            merge_key="name"),
        "initContainers": array(item_ref(CORE + "Container"), "Containers run one after the "
                                "other, each to completion, before the main ones start.",
                                merge_key="name"),
        "tolerations": array(item_ref(CORE + "Toleration"), "Taints the pod accepts."),
        "restartPolicy": string("Always, OnFailure or Never.",
                                enum=["Always", "Never", "OnFailure"]),
        "serviceAccountName": string("Service account the pod runs as."),
        "priorityClassName": string("Priority class; system-node-critical pods are evicted "
                                    "last."),
        "runtimeClassName": string("RuntimeClass to run with (nvidia for GPU containers on "
                                   "some setups)."),
        "volumes": array({"type": "object"}, "Volumes the containers can mount "
                         "(emptyDir ones block a plain drain).", merge_key="name"),
    }, required=["containers"])


POD_SCHEMAS: dict[str, Schema] = {
    CORE + "Pod": obj("A group of containers scheduled together onto one node.", {
        **kind_fields("Pod"),
        "spec": ref(CORE + "PodSpec", "Desired behaviour of the pod."),
        "status": ref(CORE + "PodStatus", "Most recently observed status of the pod; "
                      "read-only for users."),
    }, gvk=("", "v1", "Pod")),
    CORE + "PodSpec": _pod_spec(),
    CORE + "Container": obj("One container of a pod.", {
        "name": string("Name, unique within the pod (the -c of kubectl logs)."),
        "image": string("Container image reference."),
        "command": array(string(""), "Entrypoint, replacing the image's."),
        "args": array(string(""), "Arguments to the entrypoint."),
        "env": array({"type": "object"}, "Environment variables.", merge_key="name"),
        "resources": ref(CORE + "ResourceRequirements", "Compute resources requested and "
                         "the limits enforced (GPUs are requested as nvidia.com/gpu limits)."),
    }, required=["name"]),
    CORE + "ResourceRequirements": obj("Resource requests and limits.", {
        "limits": map_of(quantity(""), "Most of each resource the container may use."),
        "requests": map_of(quantity(""), "Resources the scheduler reserves for the "
                           "container."),
    }),
    CORE + "Toleration": obj("Lets a pod land on (or stay on) nodes with matching taints.", {
        "key": string("Taint key to match; empty with operator Exists matches all."),
        "operator": string("Exists or Equal (default).", enum=["Equal", "Exists"]),
        "value": string("Taint value to match with Equal."),
        "effect": string("Taint effect to match; empty matches all effects."),
        "tolerationSeconds": int64("How long a NoExecute taint is tolerated before eviction."),
    }),
    CORE + "PodStatus": obj("Observed state of a pod.", {
        "phase": string("Pending, Running, Succeeded, Failed or Unknown.",
                        enum=["Failed", "Pending", "Running", "Succeeded", "Unknown"]),
        "conditions": array(item_ref(CORE + "PodCondition"), "PodScheduled, Initialized, "
                            "ContainersReady, Ready...", merge_key="type"),
        "containerStatuses": array(item_ref(CORE + "ContainerStatus"), "One entry per main "
                                   "container."),
        "initContainerStatuses": array(item_ref(CORE + "ContainerStatus"), "One entry per "
                                       "init container."),
        "hostIP": string("IP of the node the pod runs on."),
        "podIP": string("IP of the pod."),
        "startTime": time("When the kubelet accepted the pod."),
        "reason": string("Why the pod is in this state (Evicted...)."),
        "message": string("Human-readable detail of the state."),
    }),
    CORE + "PodCondition": obj("One condition of a pod.", {
        "type": string("PodScheduled, Initialized, ContainersReady or Ready."),
        "status": _STATUS,
        "reason": string("CamelCase cause of the last transition."),
        "message": string("Human-readable detail."),
        "lastTransitionTime": time("When the status last changed."),
    }, required=["type", "status"]),
    CORE + "ContainerStatus": obj("What the kubelet knows of one container.", {
        "name": string("Container name."),
        "ready": boolean("Whether the container passes its readiness probe."),
        "started": boolean("Whether the container passed its startup probe."),
        "restartCount": integer("Restarts so far; a climbing count with a waiting "
                                "CrashLoopBackOff state is a crash loop."),
        "image": string("Image the container runs."),
        "imageID": string("Digest of that image."),
        "containerID": string("Runtime ID (containerd://...)."),
        "state": ref(CORE + "ContainerState", "Current state."),
        "lastState": ref(CORE + "ContainerState", "State of the previous run (its exit code "
                         "and reason explain a crash loop)."),
    }, required=["name", "ready", "restartCount", "image", "imageID"]),
    CORE + "ContainerState": obj("Exactly one of waiting, running or terminated.", {
        "waiting": obj("Not running yet (or backing off).", {
            "reason": string("ContainerCreating, CrashLoopBackOff, ImagePullBackOff..."),
            "message": string("Human-readable detail.")}),
        "running": obj("Running.", {"startedAt": time("When the container started.")}),
        "terminated": obj("Finished.", {
            "exitCode": integer("Exit status of the last run."),
            "reason": string("Completed, Error, OOMKilled..."),
            "message": string("Human-readable detail."),
            "startedAt": time("When the run started."),
            "finishedAt": time("When the run ended.")}, required=["exitCode"]),
    }),
    CORE + "Event": obj("A report of something that happened to an object (a pod that "
                        "failed, a node that rebooted, a driver upgrade that failed).", {
        **kind_fields("Event"),
        "involvedObject": ref(CORE + "ObjectReference", "The object the event is about."),
        "reason": string("Short CamelCase cause (BackOff, Evicted, DriverUpgradeFailed...)."),
        "message": string("Human-readable description."),
        "type": string("Normal or Warning."),
        "count": integer("How many times this event occurred."),
        "firstTimestamp": time("When the event was first seen."),
        "lastTimestamp": time("When it was seen most recently."),
        "source": obj("Component that reported it.", {
            "component": string("Reporting component."), "host": string("Node name.")}),
        "reportingComponent": string("Controller that emitted the event."),
    }, required=["metadata", "involvedObject"], gvk=("", "v1", "Event")),
    CORE + "ObjectReference": obj("A reference to an object.", {
        "kind": string("Kind of the referent."), "name": string("Name of the referent."),
        "namespace": string("Namespace of the referent."), "uid": string("Its UID."),
        "apiVersion": string("Its API version."),
        "fieldPath": string("Part of the object meant, e.g. a container."),
    }),
    CORE + "ConfigMap": obj("Non-secret configuration data (device plugin and MIG "
                            "configurations, DCGM metric lists).", {
        **kind_fields("ConfigMap"),
        "data": string_map("UTF-8 entries, key to text."),
        "binaryData": map_of({"type": "string", "format": "byte"},
                             "Binary entries, base64 in JSON."),
        "immutable": boolean("When true, data cannot be changed after creation."),
    }, gvk=("", "v1", "ConfigMap")),
    CORE + "Namespace": obj("A scope for names (gpu-operator holds the operator's pods).", {
        **kind_fields("Namespace"),
        "spec": obj("Namespace behaviour.", {
            "finalizers": array(string(""), "Must be empty before the namespace is removed.")}),
        "status": obj("Observed state.", {
            "phase": string("Active or Terminating.", enum=["Active", "Terminating"])}),
    }, gvk=("", "v1", "Namespace")),
}
