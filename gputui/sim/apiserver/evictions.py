"""``pods/eviction``: delete a pod unless a PodDisruptionBudget forbids it (429).

The budget is computed from the pods that match the PDB's selector in its namespace at the
moment of the request (there is no PDB controller in the emulated cluster): healthy pods are
Running and Ready, and a pod that is not running can always be evicted, as on a real cluster.
"""

from __future__ import annotations

import math
from typing import Any

from gputui.sim.apiserver.common import ApiContext, success_status
from gputui.sim.errors import ApiError, bad_request
from gputui.sim.selectors import parse_label_selector
from gputui.sim.store import Obj

_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


def _selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A LabelSelector object (matchLabels + matchExpressions); empty matches nothing."""
    if not selector:
        return False
    terms = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        values = ",".join(expr.get("values") or [])
        terms.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})",
                      "Exists": key, "DoesNotExist": f"!{key}"}.get(op, key))
    if not terms:
        return True
    return parse_label_selector(",".join(terms))(labels)


def healthy(pod: Obj) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in status.get("conditions") or [])


def _resolve(value: Any, total: int) -> int:
    """An IntOrString budget: ``2`` or ``"50%"`` of ``total`` (rounded up)."""
    if isinstance(value, str) and value.endswith("%"):
        try:
            return math.ceil(total * int(value[:-1]) / 100)
        except ValueError:
            raise bad_request(f"invalid budget value {value!r}") from None
    return int(value)


def disruptions_allowed(pdb: Obj, pods: list[Obj]) -> tuple[int, int, int]:
    """(allowed disruptions, healthy needed, healthy now) for a budget over ``pods``."""
    spec = pdb.get("spec") or {}
    expected = len(pods)
    current = sum(1 for pod in pods if healthy(pod))
    if spec.get("maxUnavailable") is not None:
        max_unavailable = _resolve(spec["maxUnavailable"], expected)
        needed = max(expected - max_unavailable, 0)
    else:
        needed = _resolve(spec.get("minAvailable", 0), expected)
    return current - needed, needed, current


def _budget_refusal(pdb: Obj, needed: int, current: int) -> ApiError:
    name = (pdb.get("metadata") or {}).get("name", "")
    return ApiError(429, "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    {"causes": [{"reason": "DisruptionBudget",
                                 "message": f"The disruption budget {name} needs {needed} "
                                            f"healthy pods and has {current} currently"}]})


def check_budgets(ctx: ApiContext, pod: Obj) -> None:
    """Raise 429 when a matching budget has no disruption left, 500 with several budgets."""
    metadata = pod.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    labels = metadata.get("labels") or {}
    budgets, _ = ctx.store.list("poddisruptionbudgets.policy", namespace)
    matching = [b for b in budgets if _selector_matches((b.get("spec") or {}).get("selector"),
                                                        labels)]
    if not matching or not healthy(pod):
        return
    if len(matching) > 1:
        raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, "
                       "which the eviction subresource does not support.")
    pdb = matching[0]
    pods, _ = ctx.store.list("pods", namespace)
    selector = (pdb.get("spec") or {}).get("selector")
    covered = [p for p in pods
               if _selector_matches(selector, (p.get("metadata") or {}).get("labels") or {})]
    allowed, needed, current = disruptions_allowed(pdb, covered)
    if allowed <= 0:
        raise _budget_refusal(pdb, needed, current)


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
    pod = ctx.store.require("pods", name, namespace)
    check_budgets(ctx, pod)
    options = body.get("deleteOptions") or {}
    dry_run = dry_run or "All" in (options.get("dryRun") or [])
    ctx.store.delete("pods", name, namespace, dry_run=dry_run)
    if not dry_run:
        ctx.nodeside.forget_pod(namespace, name)
    return success_status(201)
