"""Label, annotation and name constants of the real GPU Operator stack.

Kept here, not imported from ``gputui.domain``, so the emulator stays an independent oracle:
if gputui's reading of the domain reference drifts, tests on the emulated cluster catch it.
Section numbers refer to ``shared/domain/gpu-operator.md``.
"""

from __future__ import annotations

# §1.4 NFD
NFD_PCI_NVIDIA = "feature.node.kubernetes.io/pci-10de.present"
NFD_KERNEL_FULL = "feature.node.kubernetes.io/kernel-version.full"
NFD_OS_ID = "feature.node.kubernetes.io/system-os_release.ID"
NFD_OS_VERSION = "feature.node.kubernetes.io/system-os_release.VERSION_ID"

# §1.4/§1.5 operator labels
GPU_PRESENT = "nvidia.com/gpu.present"
DEPLOY_PREFIX = "nvidia.com/gpu.deploy."
DEPLOY_OPERANDS = "nvidia.com/gpu.deploy.operands"
DEPLOY_DRIVER = "nvidia.com/gpu.deploy.driver"
CONTAINER_DEPLOY_OPERANDS = (
    "driver", "gpu-feature-discovery", "container-toolkit", "device-plugin", "dcgm",
    "dcgm-exporter", "node-status-exporter", "operator-validator", "client",
)
UPGRADE_ENABLED_ANN = "nvidia.com/gpu-driver-upgrade-enabled"
PAUSED_DRIVER_UPGRADE = "paused-for-driver-upgrade"
PAUSED_MIG_CHANGE = "paused-for-mig-change"

# §5 MIG
MIG_CONFIG = "nvidia.com/mig.config"
MIG_CONFIG_STATE = "nvidia.com/mig.config.state"
MIG_CAPABLE = "nvidia.com/mig.capable"
MIG_STRATEGY = "nvidia.com/mig.strategy"
MIG_PAUSED_OPERANDS = ("device-plugin", "gpu-feature-discovery", "dcgm-exporter", "dcgm",
                       "nvsm", "client")

# §6 sharing and GFD
DEVICE_PLUGIN_CONFIG = "nvidia.com/device-plugin.config"
GPU_PRODUCT = "nvidia.com/gpu.product"
GPU_COUNT = "nvidia.com/gpu.count"
GPU_MEMORY = "nvidia.com/gpu.memory"
GPU_REPLICAS = "nvidia.com/gpu.replicas"
GPU_SHARING = "nvidia.com/gpu.sharing-strategy"
GPU_FAMILY = "nvidia.com/gpu.family"
GPU_MACHINE = "nvidia.com/gpu.machine"
GPU_MODE = "nvidia.com/gpu.mode"
GFD_TIMESTAMP = "nvidia.com/gfd.timestamp"
RESOURCE_GPU = "nvidia.com/gpu"
RESOURCE_MIG_PREFIX = "nvidia.com/mig-"

# §4 upgrades
UPGRADE_STATE = "nvidia.com/gpu-driver-upgrade-state"
UPGRADE_SKIP = "nvidia.com/gpu-driver-upgrade.skip"
UPGRADE_DRAIN_SKIP = "nvidia.com/gpu-driver-upgrade-drain.skip"
UPGRADE_REQUESTED_ANN = "nvidia.com/gpu-driver-upgrade-requested"
INITIAL_UNSCHEDULABLE_ANN = "nvidia.com/gpu-driver-upgrade.node-initial-state.unschedulable"
WAIT_START_ANN = "nvidia.com/gpu-driver-upgrade-wait-for-pod-completion-start-time"
VALIDATION_START_ANN = "nvidia.com/gpu-driver-upgrade-validation-start-time"
UPGRADE_EVENT_REASON = "GPUDriverUpgrade"
VALIDATION_TIMEOUT_S = 600
RESTART_LIMIT = 10

S_UNKNOWN = ""
S_REQUIRED = "upgrade-required"
S_CORDON = "cordon-required"
S_WAIT_JOBS = "wait-for-jobs-required"
S_POD_DELETION = "pod-deletion-required"
S_DRAIN = "drain-required"
S_POD_RESTART = "pod-restart-required"
S_VALIDATION = "validation-required"
S_UNCORDON = "uncordon-required"
S_DONE = "upgrade-done"
S_FAILED = "upgrade-failed"
UPGRADE_STATES = (S_UNKNOWN, S_REQUIRED, S_CORDON, S_WAIT_JOBS, S_POD_DELETION, S_DRAIN,
                  S_POD_RESTART, S_VALIDATION, S_UNCORDON, S_DONE, S_FAILED)

# Pod / DaemonSet plumbing
REVISION_HASH = "controller-revision-hash"
TEMPLATE_GENERATION = "pod-template-generation"
CLUSTER_POLICY_NAME = "cluster-policy"
TOLERATION_GPU = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

# Field managers (who writes what on a real cluster)
M_OPERATOR = "gpu-operator"
M_MIG = "nvidia-mig-manager"
M_DRIVER_MANAGER = "k8s-driver-manager"
M_KUBELET = "kubelet"
M_NFD = "nfd-worker"
M_GFD = "gpu-feature-discovery"
M_PLUGIN = "nvidia-device-plugin"
M_SCHEDULER = "kube-scheduler"
M_KCM = "kube-controller-manager"
M_VALIDATOR = "nvidia-operator-validator"
