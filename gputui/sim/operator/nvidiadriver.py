"""NVIDIADriver CRs (§3) as far as the driver upgrade needs them: version and upgrade policy.

When the active ClusterPolicy delegates the driver (``driver.useNvidiaDriverCRD: true``), the
driver's version and ``upgradePolicy`` come from the NVIDIADriver instead: the default one
(``spec.default: true``), else the first by name. Its policy defaults are the NVIDIADriver
CRD's (``autoUpgrade`` on). Emulation shortcut, said plainly: the driver keeps running as the
one ``nvidia-driver-daemonset`` (upstream renders ``nvidia-<type>-driver-<os>-<hash>`` per CR
and routes nodes with the owner label), so one NVIDIADriver drives every GPU node.
"""

from __future__ import annotations

import copy
from typing import Any

from gputui.sim.store import Store

Obj = dict[str, Any]
RESOURCE = "nvidiadrivers.nvidia.com"
#: ``upgradePolicy`` defaults of the NVIDIADriver CRD (autoUpgrade true, unlike ClusterPolicy)
DEFAULT_UPGRADE_POLICY: Obj = {
    "autoUpgrade": True, "maxParallelUpgrades": 1, "maxUnavailable": "25%",
    "waitForCompletion": {"timeoutSeconds": 0, "podSelector": ""},
    "podDeletion": {"force": False, "timeoutSeconds": 300, "deleteEmptyDir": False},
    "drain": {"enable": False, "force": False, "podSelector": "", "timeoutSeconds": 300,
              "deleteEmptyDir": False}}


def _merge(base: Obj, extra: Obj) -> Obj:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(
            out.get(key), dict) else copy.deepcopy(value)
    return out


def overlay(store: Store, spec: Obj) -> Obj:
    """``spec`` (a merged ClusterPolicy spec) with the NVIDIADriver's driver settings."""
    driver = spec.get("driver") or {}
    if not driver.get("useNvidiaDriverCRD"):
        return spec
    items, _ = store.list(RESOURCE)
    if not items:
        return spec
    chosen = next((d for d in sorted(items, key=lambda d: d["metadata"]["name"])
                   if (d.get("spec") or {}).get("default")),
                  min(items, key=lambda d: d["metadata"]["name"]))
    own = chosen.get("spec") or {}
    merged = copy.deepcopy(spec)
    merged["driver"].update({k: own[k] for k in ("version", "repository", "image") if k in own})
    merged["driver"]["upgradePolicy"] = _merge(DEFAULT_UPGRADE_POLICY,
                                               own.get("upgradePolicy") or {})
    return merged
