"""``DP_DISABLE_HEALTHCHECKS=all`` on the device plugin is shown: unhealthy GPUs stay in.

k8s-device-plugin ``internal/rm/health.go``: ``checkHealth`` returns at once when
``IsAllDisabled()``, whatever ``DP_ENABLE_HEALTHCHECKS`` lists unless it is ``all``; the GPU
Operator passes ClusterPolicy ``devicePlugin.env`` to the plugin container. Was: not shown.
"""

from __future__ import annotations

from typing import Any

from gputui.domain.findings_healthchecks import health_checks_off
from gputui.domain.model import Finding, NodeView, Severity
from gputui.domain.snapshot import SnapshotBuilder
from tests.domain import factory as f


def _plugin_ds(**env: str) -> dict[str, Any]:
    ds = f.daemonset("nvidia-device-plugin-daemonset", desired=1, current=1)
    ds["spec"]["template"]["spec"]["containers"] = [
        {"name": "nvidia-device-plugin", "env": [{"name": k, "value": v} for k, v in env.items()]}]
    return ds


def _found(ds: dict[str, Any], nodes: dict[str, NodeView] | None = None) -> list[Finding]:
    return health_checks_off({ds["metadata"]["name"]: ds}, [], nodes or {})


def test_all_disabled_is_info_through_the_snapshot() -> None:
    ds = _plugin_ds(DP_DISABLE_HEALTHCHECKS="all")
    snap = SnapshotBuilder().build(f.objects([f.node()], f.healthy_pods(), daemonsets=[ds]), f.T0)
    (x,) = [x for x in snap.findings if x.code == "gpu-health-checks-off"]
    assert x.severity is Severity.INFO and x.node is None
    assert "will not be taken out" in x.message and "DP_DISABLE_HEALTHCHECKS=all" in x.message


def test_an_enabled_list_does_not_switch_them_back_on_but_all_does() -> None:
    assert _found(_plugin_ds(DP_DISABLE_HEALTHCHECKS="xids", DP_ENABLE_HEALTHCHECKS="79"))
    assert not _found(_plugin_ds(DP_DISABLE_HEALTHCHECKS="all", DP_ENABLE_HEALTHCHECKS="all"))
    assert not _found(_plugin_ds(DP_DISABLE_HEALTHCHECKS="48,79"))
    assert not _found(_plugin_ds())


def test_a_critical_xid_while_checks_are_off_is_a_warning() -> None:
    xid = Finding("xid-error", Severity.CRITICAL, "n1", "XID 79 on GPU 3", "drain", "metrics")
    (x,) = _found(_plugin_ds(DP_DISABLE_HEALTHCHECKS="all"), {"n1": NodeView("n1", findings=(xid,))})
    assert x.severity is Severity.WARNING and "n1" in x.message


def test_read_from_the_cluster_policy_when_no_plugin_daemonset_is_seen() -> None:
    policy = f.cluster_policy(spec={"devicePlugin": {"env": [
        {"name": "DP_DISABLE_HEALTHCHECKS", "value": "all"}]}})
    (x,) = health_checks_off({}, [policy], {})
    assert "ClusterPolicy" in x.message
