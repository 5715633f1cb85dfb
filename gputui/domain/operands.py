"""The operand catalogue (§1.2): contract name, ``app`` label, deploy label, DaemonSet name.

Order is the ClusterPolicy state order, which is also the order the readiness chain runs on a
node (driver → toolkit → validator → plugin → the rest), so the pipeline is drawn in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gputui.domain.labels import DEPLOY_PREFIX

COMPONENT_LABEL = "app.kubernetes.io/component"


@dataclass(frozen=True, slots=True)
class Operand:
    """One operand.

    Attributes:
        name: contract name in ``check --json`` (``driver``, ``container-toolkit``...).
        app: the pod ``app`` label (and DaemonSet name) of the ClusterPolicy rendering.
        deploy: the ``nvidia.com/gpu.deploy.<x>`` key gating it.
        state: the ClusterPolicy state name (``state-driver``), for notReady messages.
        policy_key: the ClusterPolicy spec key with ``enabled``, "" when none.
        core: expected on every container-workload GPU node when the policy enables it.
        component: ``app.kubernetes.io/component`` value that also identifies its pods.
        app_prefix: the ``app`` label may carry a suffix (precompiled/NVIDIADriver names).
    """

    name: str
    app: str
    deploy: str
    state: str
    policy_key: str = ""
    core: bool = False
    component: str = ""
    app_prefix: bool = False


OPERANDS: tuple[Operand, ...] = (
    Operand("driver", "nvidia-driver-daemonset", DEPLOY_PREFIX + "driver", "state-driver",
            "driver", core=True, component="nvidia-driver", app_prefix=True),
    Operand("container-toolkit", "nvidia-container-toolkit-daemonset",
            DEPLOY_PREFIX + "container-toolkit", "state-container-toolkit", "toolkit",
            core=True),
    Operand("operator-validator", "nvidia-operator-validator",
            DEPLOY_PREFIX + "operator-validator", "state-operator-validation", "validator",
            core=True),
    Operand("device-plugin", "nvidia-device-plugin-daemonset", DEPLOY_PREFIX + "device-plugin",
            "state-device-plugin", "devicePlugin", core=True),
    Operand("mps-control-daemon", "nvidia-device-plugin-mps-control-daemon",
            DEPLOY_PREFIX + "device-plugin", "state-mps-control-daemon"),
    Operand("dcgm", "nvidia-dcgm", DEPLOY_PREFIX + "dcgm", "state-dcgm", "dcgm"),
    Operand("dcgm-exporter", "nvidia-dcgm-exporter", DEPLOY_PREFIX + "dcgm-exporter",
            "state-dcgm-exporter", "dcgmExporter", core=True),
    Operand("gpu-feature-discovery", "gpu-feature-discovery",
            DEPLOY_PREFIX + "gpu-feature-discovery", "gpu-feature-discovery", "gfd", core=True),
    Operand("mig-manager", "nvidia-mig-manager", DEPLOY_PREFIX + "mig-manager",
            "state-mig-manager", "migManager"),
    Operand("node-status-exporter", "nvidia-node-status-exporter",
            DEPLOY_PREFIX + "node-status-exporter", "state-node-status-exporter",
            "nodeStatusExporter"),
    Operand("vgpu-manager", "nvidia-vgpu-manager-daemonset", DEPLOY_PREFIX + "vgpu-manager",
            "state-vgpu-manager", "vgpuManager", component="nvidia-vgpu-host-manager",
            app_prefix=True),
    Operand("vgpu-device-manager", "nvidia-vgpu-device-manager",
            DEPLOY_PREFIX + "vgpu-device-manager", "state-vgpu-device-manager",
            "vgpuDeviceManager"),
    Operand("sandbox-validator", "nvidia-sandbox-validator", DEPLOY_PREFIX + "sandbox-validator",
            "state-sandbox-validation"),
    Operand("vfio-manager", "nvidia-vfio-manager", DEPLOY_PREFIX + "vfio-manager",
            "state-vfio-manager", "vfioManager"),
    Operand("sandbox-device-plugin", "nvidia-sandbox-device-plugin-daemonset",
            DEPLOY_PREFIX + "sandbox-device-plugin", "state-sandbox-device-plugin",
            "sandboxDevicePlugin"),
    Operand("kata-sandbox-device-plugin", "nvidia-kata-sandbox-device-plugin-daemonset",
            DEPLOY_PREFIX + "kata-sandbox-device-plugin", "state-kata-device-plugin",
            "kataSandboxDevicePlugin"),
    Operand("kata-manager", "nvidia-kata-manager", DEPLOY_PREFIX + "kata-manager",
            "state-kata-manager"),
    Operand("cc-manager", "nvidia-cc-manager", DEPLOY_PREFIX + "cc-manager", "state-cc-manager",
            "ccManager"),
)

BY_NAME: Mapping[str, Operand] = {operand.name: operand for operand in OPERANDS}
_BY_APP: Mapping[str, Operand] = {operand.app: operand for operand in OPERANDS}
_BY_COMPONENT: Mapping[str, Operand] = {op.component: op for op in OPERANDS if op.component}
#: the operands whose ``app`` label may carry a suffix, in catalogue order
_BY_APP_PREFIX: tuple[Operand, ...] = tuple(op for op in OPERANDS if op.app_prefix)

#: the validator's init containers in the order they run (§1.2 row 5)
VALIDATOR_CHAIN = ("driver-validation", "toolkit-validation", "cuda-validation",
                   "plugin-validation")


def operand_for_labels(labels: Mapping[str, str]) -> Operand | None:
    """Which operand a pod or DaemonSet with these labels belongs to, or None.

    Driver pods are recognised by component label or ``app`` prefix because precompiled and
    NVIDIADriver renderings suffix the ``app`` value (§1.2).
    """
    app = labels.get("app", "")
    if app in _BY_APP:
        return _BY_APP[app]
    component = labels.get(COMPONENT_LABEL, "")
    if component in _BY_COMPONENT:
        return _BY_COMPONENT[component]
    for operand in _BY_APP_PREFIX:
        if app.startswith(operand.app):
            return operand
    if app.startswith(("nvidia-gpu-driver-", "nvidia-vgpu-driver-")):
        return BY_NAME["driver"]
    return None


def operand_for_daemonset(name: str, labels: Mapping[str, str]) -> Operand | None:
    """Which operand a DaemonSet (by labels, else by name) runs."""
    return operand_for_labels(labels) or operand_for_labels({"app": name})
