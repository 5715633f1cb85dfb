"""Node objects and the labels NFD, the operator and GFD put on them (§1.4, §1.5, §6.3)."""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.hardware import cuda_runtime_for, profile_memory_mib
from gputui.sim.operator.runtime import NodeRun
from gputui.sim.operator.sharing import NO_SHARING, Sharing
from gputui.sim.version import GIT_VERSION

Obj = dict[str, Any]
KUBELET_VERSION = GIT_VERSION  # kubelets run the server's version (never newer)
RUNTIME_VERSION = "containerd://1.7.27"
_IMAGES = [
    ("gke.gcr.io/gke-metrics-agent@sha256:4b1e", 96_240_113),
    ("nvcr.io/nvidia/driver@sha256:9d21", 1_214_770_556),
    ("nvcr.io/nvidia/k8s-device-plugin@sha256:77ab", 181_033_440),
    ("nvcr.io/nvidia/cloud-native/gpu-operator-validator@sha256:ce02", 152_118_901),
    ("nvcr.io/nvidia/k8s/dcgm-exporter@sha256:51f3", 233_504_100),
    ("nvcr.io/nvidia/k8s/container-toolkit@sha256:a81c", 104_884_012),
]


def node_object(run: NodeRun, labels: dict[str, str], now_rfc: str, ready: bool,
                unschedulable: bool) -> Obj:
    """A Node as the kubelet registers it on a GKE-like GPU pool."""
    base_labels = {
        "kubernetes.io/hostname": run.name, "kubernetes.io/arch": "amd64",
        "kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux", "node.kubernetes.io/instance-type": run.model.machine,
        "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": "us-central1-" + "abc"[run.index % 3],
        "cloud.google.com/gke-nodepool": run.pool, "cloud.google.com/gke-os-distribution": "ubuntu",
        "cloud.google.com/gke-accelerator": run.model.key.lower(),
        **labels,
    }
    cpu, mem = ("208", "1842Gi") if run.gpu_count >= 8 else ("48", "192Gi")
    spec: Obj = {"podCIDR": f"10.{64 + run.index // 250}.{run.index % 250}.0/24",
                 "providerID": f"gce://prod-ml/us-central1-a/{run.name}",
                 "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": run.name, "labels": base_labels,
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0",
                                         "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                                         "container.googleapis.com/instance_id": str(abs(hash(run.name)) % 10**19)}},
            "spec": spec,
            "status": {"capacity": {"cpu": cpu, "memory": mem, "pods": "110",
                                    "ephemeral-storage": "507944952Ki"},
                       "allocatable": {"cpu": str(int(cpu) - 1), "memory": mem, "pods": "110",
                                       "ephemeral-storage": "468125962Ki"},
                       "conditions": node_conditions(ready, now_rfc),
                       "addresses": [{"type": "InternalIP", "address": run.ip},
                                     {"type": "Hostname", "address": run.name}],
                       "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                       "nodeInfo": node_info(run),
                       "images": [{"names": [n], "sizeBytes": s} for n, s in _IMAGES]}}


def node_info(run: NodeRun) -> Obj:
    return {"kernelVersion": run.kernel, "osImage": "Ubuntu 22.04.5 LTS",
            "containerRuntimeVersion": RUNTIME_VERSION, "kubeletVersion": KUBELET_VERSION,
            "kubeProxyVersion": KUBELET_VERSION, "operatingSystem": "linux",
            "architecture": "amd64", "machineID": run.gpus[0].uuid[4:12] * 4 if run.gpus else "",
            "systemUUID": run.name, "bootID": f"{run.name}-{run.kernel}"}


def node_conditions(ready: bool, stamp: str) -> list[Obj]:
    def cond(kind: str, status: str, reason: str, message: str) -> Obj:
        return {"type": kind, "status": status, "reason": reason, "message": message,
                "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}

    return [cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            cond("Ready", "True" if ready else "False",
                 "KubeletReady" if ready else "KubeletNotReady",
                 "kubelet is posting ready status" if ready else "container runtime network not ready")]


def nfd_labels(run: NodeRun, os_id: str, os_version: str) -> dict[str, str]:
    """What nfd-worker publishes: PCI vendor presence, kernel and OS release (§1.4)."""
    parts = run.kernel.split("-")[0].split(".")
    return {
        K.NFD_PCI_NVIDIA: "true",
        "feature.node.kubernetes.io/pci-1af4.present": "true",
        "feature.node.kubernetes.io/cpu-cpuid.AVX512F": "true",
        "feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
        K.NFD_KERNEL_FULL: run.kernel,
        "feature.node.kubernetes.io/kernel-version.major": parts[0],
        "feature.node.kubernetes.io/kernel-version.minor": parts[1] if len(parts) > 1 else "0",
        "feature.node.kubernetes.io/kernel-version.revision": parts[2] if len(parts) > 2 else "0",
        K.NFD_OS_ID: os_id, K.NFD_OS_VERSION: os_version,
        "feature.node.kubernetes.io/system-os_release.VERSION_ID.major": os_version.split(".")[0],
        "feature.node.kubernetes.io/system-os_release.VERSION_ID.minor": (os_version.split(".") + ["0"])[1],
    }


def apply_operator_labels(labels: dict[str, str], annotations: dict[str, str],
                          policy_spec: Obj) -> None:
    """The NodeLabeling reconciler (§1.5), applied in place to a node's labels/annotations."""
    has_nfd_gpu = labels.get(K.NFD_PCI_NVIDIA) == "true"
    if has_nfd_gpu:
        labels[K.GPU_PRESENT] = "true"
    elif labels.get(K.GPU_PRESENT) == "true":
        labels[K.GPU_PRESENT] = "false"
    deploy_keys = [K.DEPLOY_PREFIX + o for o in K.CONTAINER_DEPLOY_OPERANDS] + \
        [K.DEPLOY_PREFIX + "mig-manager"]
    if labels.get(K.GPU_PRESENT) != "true" or labels.get(K.DEPLOY_OPERANDS) == "false":
        for key in deploy_keys:
            labels.pop(key, None)
        annotations.pop(K.UPGRADE_ENABLED_ANN, None)
        return
    for operand in K.CONTAINER_DEPLOY_OPERANDS:
        if not labels.get(K.DEPLOY_PREFIX + operand):
            labels[K.DEPLOY_PREFIX + operand] = "true"
    if _mig_capable(labels) and not labels.get(K.DEPLOY_PREFIX + "mig-manager"):
        labels[K.DEPLOY_PREFIX + "mig-manager"] = "true"
    mig_mgr = policy_spec.get("migManager") or {}
    default_cfg = (mig_mgr.get("config") or {}).get("default", "all-disabled")
    if mig_mgr.get("enabled", True) and _mig_capable(labels) and not labels.get(K.MIG_CONFIG) \
            and default_cfg == "all-disabled":
        labels[K.MIG_CONFIG] = "all-disabled"
    driver = policy_spec.get("driver") or {}
    auto = (driver.get("upgradePolicy") or {}).get("autoUpgrade", False)
    if driver.get("enabled", True) and auto:
        annotations[K.UPGRADE_ENABLED_ANN] = "true"
    else:
        annotations.pop(K.UPGRADE_ENABLED_ANN, None)


def _mig_capable(labels: dict[str, str]) -> bool:
    if K.MIG_CAPABLE in labels:
        return labels[K.MIG_CAPABLE] == "true"
    product = labels.get(K.GPU_PRODUCT, "").lower()
    return any(m in product for m in ("h100", "a100", "a30"))


def mig_profiles_in_use(run: NodeRun) -> dict[str, int]:
    """Total MIG instances per profile across the node's GPUs."""
    totals: dict[str, int] = {}
    for gpu in run.gpus:
        for profile, count in (gpu.mig or {}).items():
            totals[profile] = totals.get(profile, 0) + count
    return totals


def single_layout(run: NodeRun) -> str | None:
    """Under ``single``: the one profile if the layout is valid, ``"INVALID"`` otherwise."""
    enabled = [g.mig is not None for g in run.gpus]
    if not any(enabled):
        return None
    profiles = mig_profiles_in_use(run)
    if not all(enabled) or len(profiles) != 1 or any(not g.mig for g in run.gpus):
        return "INVALID"
    return next(iter(profiles))


def plugin_error(run: NodeRun, strategy: str) -> str:
    """Why the device plugin cannot start on this node's MIG layout, "" when it can.

    k8s-device-plugin ``internal/rm/device_map.go`` (``buildDeviceMapFromConfigResources``,
    ``assertAllMigDevicesAreValid``): under ``single`` a MIG-enabled GPU without instances,
    more than one MIG profile, or MIG on some GPUs only is an error and the plugin exits;
    under ``mixed`` an empty MIG GPU is only a warning (it advertises nothing for it).
    """
    if strategy != "single" or all(g.mig is None for g in run.gpus):
        return ""
    prefix = "invalid MIG configuration: "
    empty = next((i for i, g in enumerate(run.gpus) if g.mig is not None
                  and not any(g.mig.values())), None)
    if empty is not None:
        return (f"{prefix}at least one device with migEnabled=true was not configured "
                f"correctly: device {empty} has no MIG devices configured")
    if len(mig_profiles_in_use(run)) > 1:
        return prefix + "more than one MIG device type present on node"
    if any(g.mig is None for g in run.gpus):
        return "all devices on the node must be configured with the same migEnabled value"
    return ""


def _product(run: NodeRun, strategy: str) -> tuple[str, int, int, int | None, dict[str, str]]:
    """(product, count, memory, replicas override, MIG attribute labels) under the strategy."""
    model = run.model
    if strategy == "single" and (layout := single_layout(run)):
        if layout == "INVALID":
            return f"{model.product}-MIG-INVALID", 0, 0, 0, {}
        return (f"{model.product}-MIG-{layout}", sum(mig_profiles_in_use(run).values()),
                profile_memory_mib(model, layout), None,
                {"nvidia.com/gpu.slices.gi": layout.split("g")[0]})
    extra: dict[str, str] = {}
    if strategy == "mixed":
        for profile, total in mig_profiles_in_use(run).items():
            base = f"nvidia.com/mig-{profile}"
            extra.update({f"{base}.count": str(total), f"{base}.replicas": "1",
                          f"{base}.memory": str(profile_memory_mib(model, profile)),
                          f"{base}.product": f"{model.product}-MIG-{profile}",
                          f"{base}.sharing-strategy": "none",
                          f"{base}.slices.gi": profile.split("g")[0]})
    # MIG-enabled full GPUs are labelled without sharing: replicas 0 when no GPU of the model
    # is MIG-disabled (k8s-device-plugin internal/lm/mig-strategy.go, newGPULabelers)
    parents = strategy == "mixed" and bool(run.gpus) and all(g.mig is not None for g in run.gpus)
    return model.product, run.gpu_count, model.memory_mib, 0 if parents else None, extra


def _cuda_labels(driver_version: str) -> dict[str, str]:
    major, minor, rev = (driver_version.split(".") + ["0", "0"])[:3]
    cuda = cuda_runtime_for(driver_version)
    c_major, c_minor = cuda.split(".")
    return {
        "nvidia.com/cuda.driver-version.major": major, "nvidia.com/cuda.driver-version.minor": minor,
        "nvidia.com/cuda.driver-version.revision": rev,
        "nvidia.com/cuda.driver-version.full": driver_version,
        "nvidia.com/cuda.runtime-version.major": c_major,
        "nvidia.com/cuda.runtime-version.minor": c_minor,
        "nvidia.com/cuda.runtime-version.full": cuda,
        "nvidia.com/cuda.driver.major": major, "nvidia.com/cuda.driver.minor": minor,
        "nvidia.com/cuda.driver.rev": rev, "nvidia.com/cuda.runtime.major": c_major,
        "nvidia.com/cuda.runtime.minor": c_minor,
    }


def gfd_labels(run: NodeRun, strategy: str, sharing: Sharing, driver_version: str,
               now: float) -> dict[str, str]:
    """The labels GFD writes (§6.3) for the node's current hardware and sharing."""
    model = run.model
    product, count, memory, replicas, extra = _product(run, strategy)
    mig_enabled = any(gpu.mig is not None for gpu in run.gpus)
    if product == model.product and run.gpus and all(gpu.mig is not None for gpu in run.gpus):
        # k8s-device-plugin internal/lm/mig-strategy.go newGPULabelers: MIG-enabled parents
        # are labelled WithoutSharing (nil config: replicas 0, sharing-strategy none)
        sharing, replicas = NO_SHARING, 0
    if sharing.strategy != "none" and not sharing.rename and product == model.product:
        product += "-SHARED"
    labels = {
        K.GPU_PRODUCT: product, K.GPU_COUNT: str(count), K.GPU_MEMORY: str(memory),
        K.GPU_REPLICAS: str(sharing.replicas if replicas is None else replicas),
        K.GPU_SHARING: sharing.strategy,
        K.GPU_FAMILY: model.family, "nvidia.com/gpu.compute.major": str(model.compute[0]),
        "nvidia.com/gpu.compute.minor": str(model.compute[1]), K.GPU_MACHINE: model.machine,
        K.GPU_MODE: "compute", **_cuda_labels(driver_version),
        K.MIG_CAPABLE: "true" if model.mig_capable else "false",
        # internal/lm/nvml.go newSharingLabeler: false unless the config shares by MPS, then
        # isMPSCapable: no device may have MIG enabled
        "nvidia.com/mps.capable": str(sharing.strategy == "mps" and not mig_enabled).lower(),
        K.GFD_TIMESTAMP: str(int(now)), **extra,
    }
    if strategy in ("single", "mixed"):
        labels[K.MIG_STRATEGY] = strategy
    return labels


def device_resources(run: NodeRun, strategy: str, sharing: Sharing) -> tuple[dict[str, int], dict[str, int]]:
    """(capacity, allocatable) the device plugin advertises; unhealthy GPUs leave allocatable."""
    capacity: dict[str, int] = {}
    healthy: dict[str, int] = {}
    name = K.RESOURCE_GPU + (".shared" if sharing.rename else "")

    def add(resource: str, amount: int, ok: bool) -> None:
        capacity[resource] = capacity.get(resource, 0) + amount
        healthy[resource] = healthy.get(resource, 0) + (amount if ok else 0)

    single = single_layout(run) if strategy == "single" else None
    for gpu in run.gpus:
        ok = not gpu.fallen and not gpu.unhealthy
        if gpu.mig is None or strategy == "none":
            if single != "INVALID":
                add(name, sharing.replicas if gpu.mig is None or strategy == "none" else 0, ok)
        elif strategy == "single":
            add(K.RESOURCE_GPU, sum(gpu.mig.values()) if single != "INVALID" else 0, ok)
        else:
            for profile, count in gpu.mig.items():
                add(K.RESOURCE_MIG_PREFIX + profile, count, ok)
    if single == "INVALID":
        capacity[K.RESOURCE_GPU] = healthy[K.RESOURCE_GPU] = 0
    return capacity, healthy


def all_device_resources(resources: dict[str, Any]) -> list[str]:
    return [r for r in resources if r.startswith((K.RESOURCE_GPU, K.RESOURCE_MIG_PREFIX))]

