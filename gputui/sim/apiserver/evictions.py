"""``pods/eviction``: delete a pod unless a PodDisruptionBudget forbids it (429).

The budget rule itself lives in :mod:`gputui.sim.budgets`, shared with the emulated upgrade
controller's pod deletion and drain, so both refuse exactly the same evictions. This module
validates the Eviction body and answers in the API server's terms.
"""

from __future__ import annotations

from typing import Any

from gputui.sim import budgets
from gputui.sim.apiserver.common import ApiContext, success_status
from gputui.sim.budgets import DISRUPTION_MEMORY_S, disruptions_allowed, healthy
from gputui.sim.errors import bad_request
from gputui.sim.store import Obj

__all__ = ["DISRUPTION_MEMORY_S", "check_budgets", "disruptions_allowed", "evict", "healthy"]
_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


def check_budgets(ctx: ApiContext, pod: Obj) -> Obj | None:
    """The budget that covers ``pod`` (see :func:`gputui.sim.budgets.check_budgets`)."""
    return budgets.check_budgets(ctx.store, pod)


def evict(ctx: ApiContext, namespace: str, name: str, body: Any,
          dry_run: bool) -> dict[str, Any]:
    """Validate the Eviction, honour budgets, delete the pod; returns the success Status."""
    if not isinstance(body, dict):
        raise bad_request("the body of an eviction must be an Eviction object")
    if body.get("kind") not in (None, "Eviction") or \
            body.get("apiVersion") not in (None, *_EVICTION_VERSIONS):
        raise bad_request(f"unsupported eviction body {body.get('apiVersion')}/"
                          f"{body.get('kind')}")
    body_name = (body.get("metadata") or {}).get("name")
    if body_name and body_name != name:
        raise bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    dry_run = dry_run or "All" in (options.get("dryRun") or [])
    budgets.evict_pod(ctx.store, namespace, name, dry_run=dry_run,
                      forget=ctx.nodeside.forget_pod)
    return success_status(201)
