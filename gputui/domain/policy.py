"""Reading ClusterPolicy and NVIDIADriver objects into views (§2, §3).

Only one ClusterPolicy is active: the oldest by ``creationTimestamp`` (name breaks ties); the
others are ``ignored``. The not-ready operand states are parsed from the ``Error`` condition
message ("ClusterPolicy is not ready; states not ready: [state-driver ...]") because the CR
has no structured field for them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from gputui.domain import kube
from gputui.domain.inputs import JsonDict
from gputui.domain.model import ClusterPolicyView, Condition, UpgradePolicy
from gputui.domain.operands import OPERANDS
from gputui.domain.selectors import selector_from_label_selector

_BRACKETS = re.compile(r"\[([^\]]*)\]")
_STATE_NAME = re.compile(r"(state-[a-z0-9-]+|gpu-feature-discovery|pre-requisites)")


def parse_not_ready_states(conditions: Sequence[Condition]) -> tuple[str, ...]:
    """State names listed as not ready in the ``Error``/``Ready`` condition messages."""
    found: list[str] = []
    for condition in conditions:
        if "not ready" not in condition.message and "Failed to reconcile" not in condition.message:
            continue
        groups = _BRACKETS.findall(condition.message) or [condition.message]
        for group in groups:
            for name in _STATE_NAME.findall(group):
                if name not in found:
                    found.append(name)
    return tuple(found)


def _conditions(obj: Mapping[str, Any]) -> tuple[Condition, ...]:
    return tuple(Condition(type=str(c.get("type", "")), status=str(c.get("status", "")),
                           reason=str(c.get("reason", "")), message=str(c.get("message", "")))
                 for c in kube.items(obj, "status", "conditions"))


def read_upgrade_policy(spec: Mapping[str, Any], source: str,
                        default_auto: bool = False) -> UpgradePolicy:
    """``upgradePolicy`` with CRD defaults (§2.2); accepts the Helm ``gpuPodDeletion`` key."""
    wait = kube.sub(spec, "waitForCompletion")
    deletion = kube.sub(spec, "podDeletion") or kube.sub(spec, "gpuPodDeletion")
    drain = kube.sub(spec, "drain")
    raw_unavailable = spec.get("maxUnavailable", "25%")
    # an IntOrString: a string must be a percentage, "2" in quotes is rejected upstream
    # (k8s.io/apimachinery intstr.GetScaledValueFromIntOrPercent, called by k8s-operator-libs)
    bad = (isinstance(raw_unavailable, str) and not raw_unavailable.strip().endswith("%")) or (
        isinstance(raw_unavailable, str) and not _percent_ok(raw_unavailable))
    error = (f"maxUnavailable {raw_unavailable!r} is neither an integer nor a percentage: the "
             "upgrade controller stops with an error every cycle" if bad else "")
    return UpgradePolicy(
        auto_upgrade=kube.as_bool(spec.get("autoUpgrade"), default_auto),
        max_parallel_upgrades=kube.to_int(spec.get("maxParallelUpgrades", 1), 1),
        max_unavailable=str(raw_unavailable if raw_unavailable is not None else "25%"),
        wait_for_completion_selector=selector_from_label_selector(wait.get("podSelector")),
        wait_for_completion_timeout=kube.to_int(wait.get("timeoutSeconds", 0)),
        pod_deletion_force=kube.as_bool(deletion.get("force"), False),
        pod_deletion_timeout=kube.to_int(deletion.get("timeoutSeconds", 300), 300),
        pod_deletion_delete_empty_dir=kube.as_bool(deletion.get("deleteEmptyDir"), False),
        drain_enable=kube.as_bool(drain.get("enable"), False),
        drain_force=kube.as_bool(drain.get("force"), False),
        drain_selector=selector_from_label_selector(drain.get("podSelector")),
        drain_timeout=kube.to_int(drain.get("timeoutSeconds", 300), 300),
        drain_delete_empty_dir=kube.as_bool(drain.get("deleteEmptyDir"), False),
        source=source, max_unavailable_error=error)


def _percent_ok(raw: str) -> bool:
    """``"25%"``-style: digits then a percent sign."""
    text = raw.strip()
    return text.endswith("%") and text[:-1].isdigit()


def _disabled_operands(spec: Mapping[str, Any]) -> tuple[str, ...]:
    disabled = []
    for operand in OPERANDS:
        if (operand.policy_key and spec.get(operand.policy_key) is not None
                and not kube.as_bool(kube.sub(spec, operand.policy_key).get("enabled"), True)):
            disabled.append(operand.name)
    return tuple(disabled)


def _active_first(policies: Sequence[JsonDict]) -> list[JsonDict]:
    def key(policy: JsonDict) -> tuple[float, str]:
        created = kube.parse_time(kube.sub(policy, "metadata").get("creationTimestamp"))
        return (created if created is not None else float("inf"), kube.name_of(policy))
    return sorted(policies, key=key)


def read_cluster_policy(policies: Sequence[JsonDict]) -> ClusterPolicyView:
    """The view of the active ClusterPolicy; ``state="missing"`` when there is none."""
    if not policies:
        return ClusterPolicyView()
    ordered = _active_first(policies)
    active = next((p for p in ordered
                   if kube.sub(p, "status").get("state") != "ignored"), ordered[0])
    ignored = tuple(kube.name_of(p) for p in ordered if p is not active)
    spec = kube.sub(active, "spec")
    status = kube.sub(active, "status")
    driver = kube.sub(spec, "driver")
    conditions = _conditions(active)
    # the contract knows ready|notReady|ignored; no status yet (or Go's "disabled") is notReady
    state = str(status.get("state") or "notReady")
    state = state if state in ("ready", "notReady", "ignored") else "notReady"
    name = kube.name_of(active)
    return ClusterPolicyView(
        name=name, state=state,
        not_ready_states=parse_not_ready_states(conditions) if state == "notReady" else (),
        conditions=conditions, namespace=status.get("namespace") or None,
        driver_enabled=kube.as_bool(driver.get("enabled"), True),
        driver_version=str(driver.get("version") or ""),
        use_nvidia_driver_crd=kube.as_bool(driver.get("useNvidiaDriverCRD"), False),
        upgrade_policy=read_upgrade_policy(kube.sub(driver, "upgradePolicy"),
                                           f"ClusterPolicy {name}"),
        mig_strategy=str(kube.sub(spec, "mig").get("strategy") or "") or None,
        mig_manager_enabled=kube.as_bool(kube.sub(spec, "migManager").get("enabled"), True),
        mig_config_name=str(kube.sub(spec, "migManager", "config").get("name") or "") or None,
        device_plugin_config=str(kube.sub(spec, "devicePlugin", "config").get("name") or "")
        or None,
        sandbox_workloads=kube.as_bool(kube.sub(spec, "sandboxWorkloads").get("enabled"), False),
        disabled_operands=_disabled_operands(spec), ignored=ignored,
        resource_version=str(kube.sub(active, "metadata").get("resourceVersion") or ""))


def driver_policy(view: ClusterPolicyView, drivers: Sequence[JsonDict]) -> UpgradePolicy | None:
    """The upgrade policy in force: the NVIDIADriver's when the CRD drives the driver.

    With several NVIDIADriver CRs each has its own policy; the default (or first) CR's is
    returned, which is right for the common single-CR install.
    """
    if view.use_nvidia_driver_crd or (view.state == "missing" and drivers):
        if not drivers:
            return None
        chosen = next((d for d in drivers if kube.as_bool(kube.sub(d, "spec").get("default"),
                                                          False)), drivers[0])
        return read_upgrade_policy(kube.sub(chosen, "spec", "upgradePolicy"),
                                   f"NVIDIADriver {kube.name_of(chosen)}", default_auto=True)
    if view.state == "missing" or not view.driver_enabled:
        return None
    return view.upgrade_policy


def driver_policies(view: ClusterPolicyView,
                    drivers: Sequence[JsonDict]) -> dict[str, tuple[UpgradePolicy, JsonDict]]:
    """NVIDIADriver name -> (its upgrade policy, its node selector) when the CRD drives the
    driver and there are several CRs: each runs its own upgrade with its own slots (§3,
    §4.3). Empty otherwise (one policy, :func:`driver_policy`, governs every node)."""
    if not (view.use_nvidia_driver_crd or (view.state == "missing" and drivers)):
        return {}
    if len(drivers) < 2:
        return {}
    result: dict[str, tuple[UpgradePolicy, JsonDict]] = {}
    for driver in drivers:
        name = kube.name_of(driver)
        spec = kube.sub(driver, "spec")
        selector = {str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()}
        result[name] = (read_upgrade_policy(kube.sub(spec, "upgradePolicy"),
                                            f"NVIDIADriver {name}", default_auto=True),
                        {"default": kube.as_bool(spec.get("default"), False),
                         "selector": selector})
    return result
