"""The device plugin's XID health check: which XIDs take a GPU out of allocatable.

As k8s-device-plugin ``internal/rm/health.go`` (``getDisabledHealthCheckXids``): every
critical XID marks the GPU unhealthy except the application errors 13, 31, 43, 45, 68 and
109. ``DP_DISABLE_HEALTHCHECKS`` (on the plugin container) adds XIDs to ignore, or ignores all
with ``all``/``xids``; ``DP_ENABLE_HEALTHCHECKS`` re-enables XIDs and wins over a list, but
not over ``all``: then ``IsAllDisabled`` holds and ``checkHealth`` returns before reading any
XID, unless ``DP_ENABLE_HEALTHCHECKS`` is ``all`` too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: application errors: the GPU is still healthy (health.go ``ignoredXids``)
IGNORED_XIDS = frozenset({13, 31, 43, 45, 68, 109})
DISABLE_ENV = "DP_DISABLE_HEALTHCHECKS"
ENABLE_ENV = "DP_ENABLE_HEALTHCHECKS"
PLUGIN_CONTAINER = "nvidia-device-plugin"


def _xids(value: str) -> tuple[bool, set[int]]:
    """(all, codes) from a comma-separated list; malformed entries are ignored as upstream."""
    codes: set[int] = set()
    for part in value.lower().split(","):
        item = part.strip()
        if item in ("all", "xids"):
            return True, set()
        if item.isdigit():
            codes.add(int(item))
    return False, codes


def marks_unhealthy(xid: int, env: Mapping[str, str]) -> bool:
    """Whether the device plugin marks the GPU unhealthy on critical XID ``xid``."""
    if xid <= 0:
        return False
    enable_all, enabled = _xids(env.get(ENABLE_ENV, ""))
    disable_all, disabled = _xids(env.get(DISABLE_ENV, ""))
    if disable_all and not enable_all:
        return False  # IsAllDisabled: checkHealth returns at once, enabled XIDs unread
    if enable_all or xid in enabled:
        return True
    return not (xid in disabled or xid in IGNORED_XIDS)


def plugin_env(daemonset: Mapping[str, Any] | None) -> dict[str, str]:
    """The device-plugin container's env from its DaemonSet (plain values only)."""
    spec = ((daemonset or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    for container in spec.get("containers") or []:
        if container.get("name") == PLUGIN_CONTAINER:
            return {str(e.get("name")): str(e.get("value", "")) for e in container.get("env") or []
                    if isinstance(e, dict) and "value" in e}
    return {}
