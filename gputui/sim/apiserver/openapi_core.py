"""OpenAPI v3 components for meta/v1 and core/v1: the fields operators read and write.

Not the whole upstream API: the kinds the emulator serves, with the fields gputui, kubectl
and GPU operators use (cordon, taints, conditions, node info, container states, events).
Field names and types follow the real API; the descriptions are written for this project.
"""

from __future__ import annotations

from gputui.sim.apiserver.openapi_dsl import (
    Schema,
    array,
    boolean,
    int64,
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

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
CORE = "io.k8s.api.core.v1."

META_SCHEMAS: dict[str, Schema] = {
    META + "ObjectMeta": obj("Metadata every persisted object carries.", {
        "name": string("Unique name within the namespace (or the cluster, for cluster-scoped "
                       "kinds). Cannot be changed after creation."),
        "generateName": string("Prefix from which the server builds a unique name when "
                               "name is empty."),
        "namespace": string("Namespace the object lives in; empty for cluster-scoped kinds."),
        "uid": string("Server-assigned identity, unique over the cluster's lifetime; a "
                      "recreated object with the same name gets a new one."),
        "resourceVersion": string("Opaque version of this object, changed on every write; "
                                  "used for optimistic concurrency and to resume watches."),
        "generation": int64("Sequence number of changes to the desired state (spec), set by "
                            "the server."),
        "creationTimestamp": time("When the server stored the object first (UTC)."),
        "deletionTimestamp": time("When a graceful deletion was requested; the object "
                                  "disappears once its finalizers are gone."),
        "labels": string_map("Key/value pairs used to select and group objects (node "
                             "selectors, label selectors of controllers)."),
        "annotations": string_map("Key/value pairs for tools; not used for selection."),
        "ownerReferences": array(item_ref(META + "OwnerReference"),
                                 "Objects this one depends on; when all owners are gone the "
                                 "object is garbage-collected.", merge_key="uid"),
        "finalizers": array(string(""), "Names that must be removed before the object is "
                            "deleted from storage.", strategy="merge"),
        "managedFields": array(item_ref(META + "ManagedFieldsEntry"),
                               "Which field manager set which fields, and when."),
    }),
    META + "OwnerReference": obj("A reference to an owning object in the same namespace.", {
        "apiVersion": string("API version of the owner."),
        "kind": string("Kind of the owner (DaemonSet, ReplicaSet, ClusterPolicy...)."),
        "name": string("Name of the owner."),
        "uid": string("UID of the owner."),
        "controller": boolean("True for the managing controller (at most one owner)."),
        "blockOwnerDeletion": boolean("Whether foreground deletion of the owner waits for "
                                      "this object."),
    }, required=["apiVersion", "kind", "name", "uid"]),
    META + "ManagedFieldsEntry": obj("One field manager's share of an object.", {
        "manager": string("Name of the tool or controller that wrote the fields."),
        "operation": string("Apply or Update."),
        "apiVersion": string("Version of the object the fields belong to."),
        "time": time("When the manager last changed these fields."),
        "fieldsType": string("Format of fieldsV1; always FieldsV1."),
        "fieldsV1": {"type": "object", "description": "The set of fields, as a trie."},
        "subresource": string("Subresource written through (status), empty for the main "
                              "resource."),
    }),
    META + "LabelSelector": obj("A query over labels; all given terms must match.", {
        "matchLabels": string_map("Exact key=value pairs that must all be present."),
        "matchExpressions": array(item_ref(META + "LabelSelectorRequirement"),
                                  "Set-based requirements (In, NotIn, Exists, "
                                  "DoesNotExist)."),
    }),
    META + "LabelSelectorRequirement": obj("One set-based label requirement.", {
        "key": string("Label key the requirement applies to."),
        "operator": string("In, NotIn, Exists or DoesNotExist."),
        "values": array(string(""), "Values for In and NotIn; empty for the others."),
    }, required=["key", "operator"]),
    META + "Condition": obj("One aspect of an object's current state.", {
        "type": string("What the condition reports, CamelCase (Ready, Error...)."),
        "status": string("True, False or Unknown.", enum=["True", "False", "Unknown"]),
        "reason": string("Machine-readable CamelCase cause of the last transition."),
        "message": string("Human-readable detail of the last transition."),
        "lastTransitionTime": time("When status last changed."),
        "observedGeneration": int64("The generation the condition was computed for."),
    }, required=["type", "status", "lastTransitionTime", "reason", "message"]),
}

_CONDITION_STATUS = string("True, False or Unknown.", enum=["True", "False", "Unknown"])


def _kind(name: str, doc: str, spec: str | None, status: str | None,
          gvk: tuple[str, str, str]) -> Schema:
    props = kind_fields(gvk[2])
    if spec:
        props["spec"] = ref(spec, f"Desired state of the {gvk[2]}.")
    if status:
        props["status"] = ref(status, f"Most recently observed state of the {gvk[2]}, "
                                      "written by the system; read-only for users.")
    return obj(doc, props, gvk=gvk)


NODE_SCHEMAS: dict[str, Schema] = {
    CORE + "Node": _kind(CORE + "Node", "A worker machine; each node runs a kubelet that "
                         "registers it and reports its status.", CORE + "NodeSpec",
                         CORE + "NodeStatus", ("", "v1", "Node")),
    CORE + "NodeSpec": obj("How the node may be used.", {
        "unschedulable": boolean("Marks the node unschedulable: the scheduler places no new "
                                 "pods on it, running pods stay. `kubectl cordon` sets it, "
                                 "`kubectl uncordon` clears it, and a drain starts with it."),
        "taints": array(item_ref(CORE + "Taint"), "Taints repel pods that do not tolerate "
                        "them (NoSchedule, PreferNoSchedule, NoExecute)."),
        "podCIDR": string("Pod IP range assigned to this node."),
        "providerID": string("The cloud provider's ID of the machine."),
    }),
    CORE + "Taint": obj("A mark on a node that only pods with a matching toleration accept.", {
        "key": string("Taint key."),
        "value": string("Taint value."),
        "effect": string("What happens to pods that do not tolerate it.",
                         enum=["NoExecute", "NoSchedule", "PreferNoSchedule"]),
        "timeAdded": time("When a NoExecute taint was added."),
    }, required=["key", "effect"]),
    CORE + "NodeStatus": obj("What the kubelet and controllers last observed of the node.", {
        "capacity": map_of(quantity(""), "Total resources of the node, including extended "
                           "resources such as nvidia.com/gpu."),
        "allocatable": map_of(quantity(""), "Resources available to pods after system "
                              "reservations; the scheduler uses these."),
        "conditions": array(item_ref(CORE + "NodeCondition"), "Current conditions (Ready, "
                            "MemoryPressure, DiskPressure, PIDPressure...).", merge_key="type"),
        "addresses": array(item_ref(CORE + "NodeAddress"), "Addresses of the node.",
                           merge_key="type"),
        "nodeInfo": ref(CORE + "NodeSystemInfo", "Versions and identifiers the kubelet "
                        "reports."),
        "images": array({"type": "object"}, "Container images present on the node."),
    }),
    CORE + "NodeCondition": obj("One condition of a node.", {
        "type": string("Ready, MemoryPressure, DiskPressure, PIDPressure or "
                       "NetworkUnavailable."),
        "status": _CONDITION_STATUS,
        "reason": string("CamelCase cause of the last transition."),
        "message": string("Human-readable detail."),
        "lastHeartbeatTime": time("When the kubelet last confirmed the condition."),
        "lastTransitionTime": time("When the status last changed."),
    }, required=["type", "status"]),
    CORE + "NodeAddress": obj("One address of a node.", {
        "type": string("Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS."),
        "address": string("The address."),
    }, required=["type", "address"]),
    CORE + "NodeSystemInfo": obj("Versions and identifiers of the node's software.", {
        "kubeletVersion": string("Version of the kubelet; never newer than the API server."),
        "kubeProxyVersion": string("Version of kube-proxy (deprecated field)."),
        "kernelVersion": string("Kernel release (uname -r); the NVIDIA driver is built "
                                "against it."),
        "osImage": string("Operating system image (from /etc/os-release)."),
        "containerRuntimeVersion": string("Container runtime and version "
                                          "(containerd://...)."),
        "operatingSystem": string("linux or windows."),
        "architecture": string("CPU architecture (amd64, arm64)."),
        "machineID": string("The machine-id of the host."),
        "systemUUID": string("The hardware UUID of the host."),
        "bootID": string("Changes at every reboot."),
    }),
}
