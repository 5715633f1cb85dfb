"""The device plugin's XID health check switched off (``gpu-health-checks-off``).

k8s-device-plugin ``internal/rm/health.go``: ``DP_DISABLE_HEALTHCHECKS=all`` (or ``xids``)
makes ``checkHealth`` return before it listens for a single XID (``IsAllDisabled``), unless
``DP_ENABLE_HEALTHCHECKS=all`` clears it; a listed ``DP_ENABLE_HEALTHCHECKS`` XID does not.
A GPU that fails then stays allocatable and keeps getting pods. The GPU Operator passes
ClusterPolicy ``devicePlugin.env`` to the plugin container, so the running DaemonSet's
template is read first, the ClusterPolicy when no device-plugin DaemonSet is seen. ``info``
as a setting; a ``warning`` while a GPU reports a critical XID it therefore keeps serving.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain import catalogue as C
from gputui.domain import kube
from gputui.domain.inputs import JsonDict
from gputui.domain.model import Finding, NodeView, Severity
from gputui.domain.operands import operand_for_daemonset

DISABLE, ENABLE = "DP_DISABLE_HEALTHCHECKS", "DP_ENABLE_HEALTHCHECKS"
_PLUGIN = "device-plugin"
_NAMED = 5


def _env(entries: object) -> dict[str, str]:
    """Plain ``name: value`` pairs of a container's (or ``devicePlugin.env``'s) env list."""
    found: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and entry.get("name") and "value" in entry:
            found[str(entry["name"])] = str(entry.get("value") or "")
    return found


def plugin_env(daemonsets: Mapping[str, JsonDict],
               policies: Sequence[JsonDict]) -> tuple[dict[str, str], str] | None:
    """(the device plugin's env, where it was read), or None when neither is seen."""
    for name in sorted(daemonsets):
        ds = daemonsets[name]
        operand = operand_for_daemonset(name, kube.labels_of(ds))
        if operand is None or operand.name != _PLUGIN:
            continue
        env: dict[str, str] = {}
        for container in kube.sub(ds, "spec", "template", "spec").get("containers") or []:
            if isinstance(container, Mapping):
                env.update(_env(container.get("env")))
        return env, f"DaemonSet {name}"
    if not policies:
        return None
    active = min(policies, key=lambda p: (  # the operator uses the oldest ClusterPolicy
        str(kube.sub(p, "metadata").get("creationTimestamp") or ""), kube.name_of(p)))
    return _env(kube.sub(active, "spec", "devicePlugin").get("env")), "ClusterPolicy"


def _all(value: str) -> bool:
    return any(part.strip().lower() in ("all", "xids") for part in value.split(","))


def health_checks_off(daemonsets: Mapping[str, JsonDict], policies: Sequence[JsonDict],
                      nodes: Mapping[str, NodeView]) -> list[Finding]:
    """``gpu-health-checks-off`` when the device plugin ignores every XID."""
    read = plugin_env(daemonsets, policies)
    if read is None:
        return []
    env, where = read
    if not _all(env.get(DISABLE, "")) or _all(env.get(ENABLE, "")):
        return []
    told = f"{DISABLE}={env[DISABLE]} ({where}, from ClusterPolicy devicePlugin.env)"
    hint = (f"Remove {DISABLE} from devicePlugin.env (or list only the XIDs to ignore) so the "
            "plugin takes failing GPUs out; until then drain a node whose GPU fails by hand.")
    failing = sorted(n.name for n in nodes.values() if any(
        f.code == C.XID_ERROR and f.severity is Severity.CRITICAL for f in n.findings))
    if failing:
        shown = ", ".join(failing[:_NAMED]) + (" ..." if len(failing) > _NAMED else "")
        return [C.finding(C.GPU_HEALTH_CHECKS_OFF, None,
                          f"{told}: the device plugin takes no GPU out, and critical XIDs on "
                          f"{shown} leave those GPUs allocatable", hint)]
    return [C.finding(C.GPU_HEALTH_CHECKS_OFF, None,
                      f"{told}: the device plugin's XID health check is off, so unhealthy GPUs "
                      "will not be taken out of allocatable", hint, severity=Severity.INFO)]
