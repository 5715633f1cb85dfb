"""Label, annotation and value vocabulary of the GPU Operator stack (§1.5, §4.1, §5, §6).

All keys live here so a typo is a NameError, not a silent miss. ``gputui.sim`` may import
these for shared vocabulary.
"""

from __future__ import annotations

from collections.abc import Mapping

PREFIX = "nvidia.com/"

# --- presence and deploy labels (§1.4, §1.5) ---
GPU_PRESENT = "nvidia.com/gpu.present"
#: what the DaemonSet controller labels each pod with: its template's revision hash (the
#: ControllerRevision is ``<daemonset>-<hash>``) and the template generation it came from
REVISION_HASH = "controller-revision-hash"
TEMPLATE_GENERATION = "pod-template-generation"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
DEPLOY_OPERANDS = "nvidia.com/gpu.deploy.operands"
DEPLOY_DRIVER = "nvidia.com/gpu.deploy.driver"
DRIVER_OWNER = "nvidia.com/gpu-operator.driver.owner"
WORKLOAD_CONFIG = "nvidia.com/gpu.workload.config"
PAUSED_FOR_DRIVER_UPGRADE = "paused-for-driver-upgrade"
PAUSED_FOR_MIG_CHANGE = "paused-for-mig-change"
PAUSED_VALUES = (PAUSED_FOR_DRIVER_UPGRADE, PAUSED_FOR_MIG_CHANGE)
NFD_GPU_LABELS = (
    "feature.node.kubernetes.io/pci-10de.present",
    "feature.node.kubernetes.io/pci-0302_10de.present",
    "feature.node.kubernetes.io/pci-0300_10de.present",
)
NFD_KERNEL = "feature.node.kubernetes.io/kernel-version.full"

# --- GFD labels (§6.3) ---
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
GPU_MEMORY = "nvidia.com/gpu.memory"
GPU_REPLICAS = "nvidia.com/gpu.replicas"
GPU_SHARING_STRATEGY = "nvidia.com/gpu.sharing-strategy"
GPU_FAMILY = "nvidia.com/gpu.family"
DRIVER_VERSION_FULL = "nvidia.com/cuda.driver-version.full"
DRIVER_VERSION_PARTS = ("nvidia.com/cuda.driver-version.major",
                        "nvidia.com/cuda.driver-version.minor",
                        "nvidia.com/cuda.driver-version.revision")
DRIVER_VERSION_OLD_PARTS = ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor",
                            "nvidia.com/cuda.driver.rev")
MPS_CAPABLE = "nvidia.com/mps.capable"
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
VGPU_HOST_DRIVER_VERSION = "nvidia.com/vgpu.host-driver-version"

# --- MIG (§5.1) ---
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
MIG_CAPABLE = "nvidia.com/mig.capable"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_STATE_PENDING = "pending"
MIG_STATE_REBOOTING = "rebooting"
MIG_STATE_SUCCESS = "success"
MIG_STATE_FAILED = "failed"
#: the values the MIG manager writes to ``mig.config.state`` (NVIDIA/mig-parted)
MIG_STATES = (MIG_STATE_PENDING, MIG_STATE_REBOOTING, MIG_STATE_SUCCESS, MIG_STATE_FAILED)
MIG_PARTED_DEFAULT_CONFIGMAP = "default-mig-parted-config"
MIG_CONFIGMAP_SUFFIX = "-mig-config"
MIG_CONFIG_KEY = "config.yaml"

# --- driver upgrade (§4.1, §4.2) ---
UPGRADE_STATE = "nvidia.com/gpu-driver-upgrade-state"
UPGRADE_SKIP = "nvidia.com/gpu-driver-upgrade.skip"
UPGRADE_DRAIN_SKIP = "nvidia.com/gpu-driver-upgrade-drain.skip"
UPGRADE_REQUESTED = "nvidia.com/gpu-driver-upgrade-requested"
UPGRADE_INITIAL_UNSCHEDULABLE = "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable"
UPGRADE_WAIT_START = "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time"
UPGRADE_VALIDATION_START = "nvidia.com/gpu-driver-upgrade-validation-start-time"
UPGRADE_SAFE_LOAD = "nvidia.com/gpu-driver-upgrade.driver-wait-for-safe-load"
UPGRADE_ENABLED = "nvidia.com/gpu-driver-upgrade-enabled"
UPGRADE_EVENT_REASON = "GPUDriverUpgrade"
UPGRADE_ANNOTATION_PREFIX = "nvidia.com/gpu-driver-upgrade"
VALIDATION_TIMEOUT_SECONDS = 600
POD_RESTART_FAIL_LIMIT = 10

#: the values of ``UPGRADE_STATE``, their lane order, classes and slots:
#: :class:`gputui.domain.upgrade_state.UpgradeState`

# --- pools: the first of these labels a node carries names its pool ---
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "karpenter.sh/nodepool",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/pool",
    "nodepool",
    "node.kubernetes.io/instance-type",
)

# --- pod labels ---
APP = "app"
CUDA_VALIDATOR_APP = "nvidia-cuda-validator"
PLUGIN_VALIDATOR_APP = "nvidia-device-plugin-validator"

# --- resources (§5.4, §6.2) ---
RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_GPU_SHARED = "nvidia.com/gpu.shared"
RESOURCE_MIG_PREFIX = "nvidia.com/mig-"


def is_gpu_resource(name: str) -> bool:
    """True for ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` and ``nvidia.com/mig-*``.

    Mirrors the upgrade controller's GPU-pod filter (any resource starting ``nvidia.com/gpu``
    or ``nvidia.com/mig-``), minus label-like keys that are not resources.
    """
    return name.startswith((RESOURCE_GPU, RESOURCE_MIG_PREFIX))


def is_paused(value: str) -> bool:
    """A deploy-label value at a paused value (also ``X_paused-for-driver-upgrade``)."""
    return value.endswith(PAUSED_VALUES)


def label_true(labels: Mapping[str, str], key: str) -> bool:
    """``labels[key] == "true"`` (case-insensitive), the way the operator reads booleans."""
    return labels.get(key, "").strip().lower() == "true"
