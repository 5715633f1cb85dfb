"""The operand DaemonSets of §1.2: names, ``app=`` labels, selectors, images, container order.

Only the states a container-workload cluster runs are modelled (driver, toolkit, validator,
device plugin, MPS daemon, dcgm-exporter, GFD, MIG manager); the standalone DCGM hostengine
and node-status-exporter are Helm-default disabled and are not created.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

REPO = "nvcr.io/nvidia"
IMAGES = {
    "k8s-driver-manager": f"{REPO}/cloud-native/k8s-driver-manager:v0.12.0",
    "validator": f"{REPO}/cloud-native/gpu-operator-validator:v26.7.0",
    "toolkit": f"{REPO}/k8s/container-toolkit:v1.18.0",
    "device-plugin": f"{REPO}/k8s-device-plugin:v0.20.0",
    "dcgm-exporter": f"{REPO}/k8s/dcgm-exporter:4.6.0-4.8.3-distroless",
    "mig-manager": f"{REPO}/cloud-native/k8s-mig-manager:v0.15.0",
}


@dataclass(frozen=True)
class Operand:
    """One operand state as the operator renders it."""

    key: str
    state: str
    ds: str
    deploy: str
    init: tuple[str, ...]
    main: tuple[str, ...]
    extra_selector: dict[str, str] = field(default_factory=dict)
    extra_labels: dict[str, str] = field(default_factory=dict)
    on_delete: bool = False
    policy_key: str = ""

    @property
    def app(self) -> str:
        return self.ds

    @functools.cached_property
    def node_selector(self) -> dict[str, str]:
        """The DaemonSet's node selector (kept: asked for every node at every status pass;
        read-only, like the operand)."""
        return {f"nvidia.com/gpu.deploy.{self.deploy}": "true", **self.extra_selector}


OPERANDS: tuple[Operand, ...] = (
    Operand("driver", "state-driver", "nvidia-driver-daemonset", "driver",
            ("k8s-driver-manager",), ("nvidia-driver-ctr",),
            extra_labels={"app.kubernetes.io/component": "nvidia-driver"}, on_delete=True,
            policy_key="driver"),
    Operand("toolkit", "state-container-toolkit", "nvidia-container-toolkit-daemonset",
            "container-toolkit", ("driver-validation",), ("nvidia-container-toolkit-ctr",),
            policy_key="toolkit"),
    Operand("validator", "state-operator-validation", "nvidia-operator-validator",
            "operator-validator",
            ("driver-validation", "toolkit-validation", "cuda-validation", "plugin-validation"),
            ("nvidia-operator-validator",),
            extra_labels={"app.kubernetes.io/part-of": "gpu-operator"}, policy_key="validator"),
    Operand("device-plugin", "state-device-plugin", "nvidia-device-plugin-daemonset",
            "device-plugin", ("toolkit-validation", "config-manager-init"),
            ("nvidia-device-plugin", "config-manager"), policy_key="devicePlugin"),
    Operand("mps", "state-mps-control-daemon", "nvidia-device-plugin-mps-control-daemon",
            "device-plugin", ("toolkit-validation", "mps-control-daemon-mounts",
                              "config-manager-init"),
            ("mps-control-daemon-ctr", "config-manager"),
            extra_selector={"nvidia.com/mps.capable": "true"}, policy_key="devicePlugin"),
    Operand("dcgm-exporter", "state-dcgm-exporter", "nvidia-dcgm-exporter", "dcgm-exporter",
            ("toolkit-validation",), ("nvidia-dcgm-exporter",), policy_key="dcgmExporter"),
    Operand("gfd", "gpu-feature-discovery", "gpu-feature-discovery", "gpu-feature-discovery",
            ("toolkit-validation", "config-manager-init"),
            ("gpu-feature-discovery", "config-manager"),
            extra_labels={"app.kubernetes.io/part-of": "nvidia-gpu"}, policy_key="gfd"),
    Operand("mig-manager", "state-mig-manager", "nvidia-mig-manager", "mig-manager",
            ("toolkit-validation",), ("nvidia-mig-manager",), policy_key="migManager"),
)
BY_KEY = {o.key: o for o in OPERANDS}
BY_DS = {o.ds: o for o in OPERANDS}
ALL_STATES = ("pre-requisites", "state-operator-metrics", "state-driver",
              "state-container-toolkit", "state-operator-validation", "state-device-plugin",
              "state-mps-control-daemon", "state-dcgm-exporter", "gpu-feature-discovery",
              "state-mig-manager")


def image_for(operand: Operand, container: str, driver_image: str) -> str:
    """The image a container of an operand runs (validator init containers run the validator)."""
    if container == "k8s-driver-manager":
        return IMAGES["k8s-driver-manager"]
    if container == "nvidia-driver-ctr":
        return driver_image
    if container.endswith("-validation"):
        return IMAGES["validator"]
    if operand.key in ("device-plugin", "mps", "gfd"):
        return IMAGES["device-plugin"]
    return IMAGES.get(operand.key, IMAGES["validator"] if operand.key == "validator"
                      else IMAGES["toolkit"])
