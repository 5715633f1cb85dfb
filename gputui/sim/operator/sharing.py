"""Device-plugin sharing (§6): which named config a node uses and what it does to capacity.

config-manager (k8s-device-plugin ``cmd/config-manager/main.go``) picks the node label's
config, else ``DEFAULT_CONFIG``; a name the ConfigMap lacks is an error ("specified config X
does not exist"): ``config-manager-init`` exits 1 and crash-loops, and a running pod's
``config-manager`` sidecar fails while the plugin keeps the config it started with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from gputui.sim.operator import keys as K


@dataclass(frozen=True)
class Sharing:
    """The sharing in effect on a node: ``none``, ``time-slicing`` or ``mps``."""

    strategy: str = "none"
    replicas: int = 1
    rename: bool = False


NO_SHARING = Sharing()


def parse_config(text: str) -> Sharing:
    """Read a device-plugin ``version: v1`` config's sharing section (MPS wins over slicing)."""
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError:
        return NO_SHARING
    sharing = (data.get("sharing") or {}) if isinstance(data, dict) else {}
    for strategy, key in (("mps", "mps"), ("time-slicing", "timeSlicing")):
        block = sharing.get(key)
        if not block:
            continue
        resources = block.get("resources") or []
        replicas = max([int(r.get("replicas", 1)) for r in resources
                        if str(r.get("name", "")) == K.RESOURCE_GPU] or [1])
        if replicas >= 2:
            return Sharing(strategy, replicas, bool(block.get("renameByDefault", False)))
    return NO_SHARING


def node_sharing(labels: dict[str, str], configmap: dict[str, Any] | None,
                 default_key: str | None) -> Sharing:
    """The config-manager's choice: the node label, else the ClusterPolicy default (§6.1)."""
    if not configmap:
        return NO_SHARING
    data = configmap.get("data") or {}
    key = labels.get(K.DEVICE_PLUGIN_CONFIG) or default_key
    if not key or key not in data:
        return NO_SHARING  # FALLBACK_STRATEGIES=empty
    return parse_config(data[key])


def selected_config(labels: dict[str, str], default_key: str | None) -> str:
    """The config name config-manager selects: the node label, else the default."""
    return labels.get(K.DEVICE_PLUGIN_CONFIG) or default_key or ""


def missing_config(labels: dict[str, str], configmap: dict[str, Any] | None,
                   default_key: str | None) -> str | None:
    """The selected config name when the ConfigMap lacks it (config-manager fails), else None."""
    if not configmap:
        return None
    key = selected_config(labels, default_key)
    return key if key and key not in (configmap.get("data") or {}) else None
