"""OpenAPI v3 schemas of the GPU Operator's CRDs: ClusterPolicy and NVIDIADriver.

Inline, as a CRD's ``openAPIV3Schema`` is served. Only the parts gputui reads and operators
change during incidents (driver version and upgrade policy, operand switches, MIG and device
plugin configuration, state); field names follow the operator's CRDs and the upgrade policy
type of k8s-operator-libs (the project's domain notes, gpu-operator.md §2 and §3);
the descriptions are written for this project.
"""

from __future__ import annotations

from gputui.sim.apiserver.openapi_core import META
from gputui.sim.apiserver.openapi_dsl import (
    Schema,
    array,
    boolean,
    int_or_string,
    integer,
    item_ref,
    kind_fields,
    obj,
    string,
    string_map,
)

CLUSTER_POLICY = "com.nvidia.v1.ClusterPolicy"
NVIDIA_DRIVER = "com.nvidia.v1alpha1.NVIDIADriver"


def _upgrade_policy(auto_default: str) -> Schema:
    return obj("How the operator rolls a new driver out across nodes, one upgrade state "
               "label at a time (nvidia.com/gpu-driver-upgrade-state).", {
        "autoUpgrade": boolean("Master switch of managed upgrades; when false the rest of the "
                               f"policy is ignored and the state labels are removed "
                               f"(default {auto_default})."),
        "maxParallelUpgrades": integer("Nodes upgraded at the same time; 0 means no limit "
                                       "(default 1)."),
        "maxUnavailable": int_or_string("Managed nodes (count or percent, rounded up) that "
                                        "may be unavailable during the upgrade (default "
                                        "25%)."),
        "waitForCompletion": obj("Wait for selected workloads to finish before upgrading.", {
            "podSelector": string("Label selector of the pods (jobs) to wait for."),
            "timeoutSeconds": integer("How long to wait; 0 waits forever.")}),
        "podDeletion": obj("Deleting the GPU pods on the node before the driver restarts "
                           "(the Helm value gpuPodDeletion).", {
            "force": boolean("Also delete pods no controller manages."),
            "timeoutSeconds": integer("How long to wait for deletions; 0 waits forever "
                                      "(default 300)."),
            "deleteEmptyDir": boolean("Also delete pods using emptyDir volumes (their data "
                                      "is lost).")}),
        "drain": obj("Draining the whole node before the driver restarts.", {
            "enable": boolean("Run the drain step (default false)."),
            "force": boolean("Also evict pods no controller manages."),
            "podSelector": string("Label selector of the pods to drain; the operator always "
                                  "adds nvidia.com/gpu-driver-upgrade-drain.skip!=true."),
            "timeoutSeconds": integer("How long the drain may take; 0 waits forever "
                                      "(default 300)."),
            "deleteEmptyDir": boolean("Also evict pods using emptyDir volumes.")}),
    })


def _component(what: str, extra: dict[str, Schema] | None = None) -> Schema:
    """An operand block: on/off switch, image and the fields gputui shows."""
    return obj(f"The {what}.", {
        "enabled": boolean(f"Whether the operator deploys the {what}."),
        "repository": string("Image registry and path."),
        "image": string("Image name."),
        "version": string("Image tag (or digest)."),
        "imagePullPolicy": string("Always, IfNotPresent or Never."),
        "env": array({"type": "object"}, "Extra environment variables."),
        **(extra or {}),
    })


def _config_ref(what: str) -> Schema:
    return obj(f"ConfigMap holding {what}.", {
        "name": string("Name of the ConfigMap in the operator's namespace."),
        "default": string("Entry used for nodes without a config label.")})


def _driver_fields() -> dict[str, Schema]:
    return {
        "usePrecompiled": boolean("Use driver images with modules prebuilt for the kernel."),
        "kernelModuleType": string("Which kernel modules to load.",
                                   enum=["auto", "open", "proprietary"]),
        "useNvidiaDriverCRD": boolean("Let NVIDIADriver resources manage the driver instead "
                                      "of this block."),
        "rdma": obj("GPUDirect RDMA.", {"enabled": boolean("Load nvidia-peermem."),
                                        "useHostMofed": boolean("Use the host's MOFED.")}),
        "upgradePolicy": _upgrade_policy("false in the CRD, true in the Helm chart"),
        "manager": obj("The k8s-driver-manager init container that evicts GPU pods before "
                       "a driver (re)install.", {"env": array({"type": "object"},
                                                              "Its settings.")}),
    }


def _status(states: list[str]) -> Schema:
    return obj("What the operator last observed.", {
        "state": string("Overall state of the operands.", enum=states),
        "namespace": string("Namespace the operands run in."),
        "conditions": array(item_ref(META + "Condition"), "Ready and Error conditions with "
                            "their reasons."),
    })


def _cluster_policy() -> Schema:
    spec = obj("Which GPU software the operator deploys to GPU nodes, and how.", {
        "operator": obj("Operator-wide settings.", {
            "defaultRuntime": string("Container runtime to configure.",
                                     enum=["docker", "crio", "containerd"])}),
        "daemonsets": obj("Settings shared by every operand daemonset.", {
            "updateStrategy": string("RollingUpdate or OnDelete.",
                                     enum=["RollingUpdate", "OnDelete"]),
            "rollingUpdate": obj("Rolling update limits.", {
                "maxUnavailable": string("Nodes whose operand pod may be down at once.")}),
            "priorityClassName": string("Priority class of the operand pods."),
            "tolerations": array({"type": "object"}, "Tolerations of the operand pods."),
            "labels": string_map("Labels added to the operand pods."),
            "annotations": string_map("Annotations added to the operand pods.")}),
        **_operands(),
        "mig": obj("How MIG devices are exposed.", {
            "strategy": string("single, mixed or none.", enum=["none", "single", "mixed"])}),
        "cdi": obj("Container Device Interface.", {
            "enabled": boolean("Use CDI to inject GPUs (default true)."),
            "default": boolean("Deprecated.")}),
        "sandboxWorkloads": obj("VM and Kata workloads.", {
            "enabled": boolean("Deploy the sandbox operands."),
            "defaultWorkload": string("container, vm-passthrough or vm-vgpu.")}),
    })
    props = {**kind_fields("ClusterPolicy"), "spec": spec,
             "status": _status(["ignored", "ready", "notReady"])}
    return obj("The GPU Operator's cluster-wide configuration; one is active (named "
               "cluster-policy when Helm creates it).", props,
               gvk=("nvidia.com", "v1", "ClusterPolicy"))


def _operands() -> dict[str, Schema]:
    """The operand blocks of a ClusterPolicy spec, one per daemonset the operator runs."""
    return {
        "driver": _component("NVIDIA driver daemonset", _driver_fields()),
        "toolkit": _component("NVIDIA Container Toolkit", {
            "installDir": string("Host directory the toolkit is installed to.")}),
        "devicePlugin": _component("device plugin that advertises nvidia.com/gpu", {
            "config": _config_ref("device plugin (and time-slicing) configurations")}),
        "dcgm": _component("standalone DCGM host engine"),
        "dcgmExporter": _component("DCGM exporter (GPU metrics, XID errors)", {
            "config": obj("ConfigMap with the metrics to export (key dcgm-metrics.csv).", {
                "name": string("Name of the ConfigMap.")}),
            "serviceMonitor": obj("Prometheus Operator ServiceMonitor.", {
                "enabled": boolean("Create one."), "interval": string("Scrape interval.")})}),
        "gfd": _component("GPU Feature Discovery (the nvidia.com/gpu.* node labels)"),
        "migManager": _component("MIG manager that applies nvidia.com/mig.config", {
            "config": _config_ref("MIG partitionings (key config.yaml)")}),
        "nodeStatusExporter": _component("node status exporter"),
        "validator": _component("operator validator (driver, toolkit, CUDA and plugin "
                                "checks)"),
    }


def _nvidia_driver() -> Schema:
    spec = obj("One driver configuration and the nodes it applies to.", {
        "default": boolean("Fallback owner of GPU nodes no other NVIDIADriver selects."),
        "driverType": string("gpu, vgpu or vgpu-host-manager; cannot change.",
                             enum=["gpu", "vgpu", "vgpu-host-manager"]),
        "usePrecompiled": boolean("Use driver images with modules prebuilt for the kernel."),
        "kernelModuleType": string("Which kernel modules to load.",
                                   enum=["auto", "open", "proprietary"]),
        "repository": string("Image registry and path."),
        "image": string("Image name (default nvcr.io/nvidia/driver)."),
        "version": string("Driver version (image tag)."),
        "nodeSelector": string_map("Nodes this driver applies to."),
        "upgradePolicy": _upgrade_policy("true"),
        "tolerations": array({"type": "object"}, "Tolerations of the driver pods."),
        "priorityClassName": string("Priority class of the driver pods."),
        "labels": string_map("Labels added to the driver pods."),
        "annotations": string_map("Annotations added to the driver pods."),
    })
    props = {**kind_fields("NVIDIADriver"), "spec": spec,
             "status": _status(["ignored", "ready", "notReady", "disabled"])}
    return obj("A driver deployment for a set of nodes (used when "
               "ClusterPolicy.spec.driver.useNvidiaDriverCRD is true).", props,
               gvk=("nvidia.com", "v1alpha1", "NVIDIADriver"))


NVIDIA_V1: dict[str, Schema] = {CLUSTER_POLICY: _cluster_policy()}
NVIDIA_V1ALPHA1: dict[str, Schema] = {NVIDIA_DRIVER: _nvidia_driver()}
