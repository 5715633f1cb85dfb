"""``DP_DISABLE_HEALTHCHECKS=all`` switches the device plugin's XID health check off whatever
``DP_ENABLE_HEALTHCHECKS`` lists: k8s-device-plugin ``internal/rm/health.go``, ``checkHealth``
returns at once when ``IsAllDisabled()`` (the ``all`` key is still true), and only
``DP_ENABLE_HEALTHCHECKS=all`` clears that key. Was: an enabled XID still marked the GPU
unhealthy under ``all``."""

from __future__ import annotations

from gputui.sim.operator.health import marks_unhealthy


def test_all_disabled_ignores_an_enabled_list() -> None:
    env = {"DP_DISABLE_HEALTHCHECKS": "all", "DP_ENABLE_HEALTHCHECKS": "79,48"}
    assert not marks_unhealthy(79, env) and not marks_unhealthy(48, env)


def test_all_enabled_overrides_all_disabled_even_for_application_xids() -> None:
    env = {"DP_DISABLE_HEALTHCHECKS": "all", "DP_ENABLE_HEALTHCHECKS": "all"}
    assert marks_unhealthy(79, env) and marks_unhealthy(13, env)


def test_an_enabled_xid_still_wins_over_a_disabled_list() -> None:
    env = {"DP_DISABLE_HEALTHCHECKS": "48,79", "DP_ENABLE_HEALTHCHECKS": "79"}
    assert marks_unhealthy(79, env) and not marks_unhealthy(48, env)
