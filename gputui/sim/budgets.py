"""PodDisruptionBudget arithmetic and the eviction rule, shared by every evicting party.

The API server's ``pods/eviction`` subresource and the emulated upgrade controller's pod
deletion and drain (which, like ``kubectl drain``, go through evictions) must refuse and
allow exactly the same evictions, so the rule lives here, over the store, once.

The budget is computed from the pods that match the PDB's selector in its namespace at the
moment of the request (there is no PDB controller in the emulated cluster): healthy pods are
Running and Ready, and a pod that is not running can always be evicted, as on a real cluster.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from gputui.sim.errors import ApiError, bad_request
from gputui.sim.selectors import parse_label_selector
from gputui.sim.store import Obj, Store

DISRUPTION_MEMORY_S = 120.0


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A LabelSelector object (matchLabels + matchExpressions), as policy/v1 reads a budget's:
    a null selector matches no pod, an empty one (``{}``) every pod of the namespace."""
    if not isinstance(selector, dict):
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


def _recent_disruptions(pdb: Obj, now: float) -> set[str]:
    """Pods this budget recently let go (``status.disruptedPods``), younger than 2 minutes.

    Like the real server, an eviction records the pod there; until its workload controller
    replaces it, the pod still counts as expected but not healthy, so the budget stays spent.
    """
    recent: set[str] = set()
    for name, stamp in ((pdb.get("status") or {}).get("disruptedPods") or {}).items():
        moment = _parse(stamp)
        if moment is None or now - moment < DISRUPTION_MEMORY_S:
            recent.add(name)
    return recent


def _parse(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(stamp)).timestamp()
    except ValueError:
        return None


def disruptions_allowed(pdb: Obj, pods: list[Obj], now: float) -> tuple[int, int, int]:
    """(allowed disruptions, healthy needed, healthy now) for a budget over ``pods``."""
    spec = pdb.get("spec") or {}
    disrupted = _recent_disruptions(pdb, now)
    names = {(p.get("metadata") or {}).get("name") for p in pods}
    expected = len(pods) + len(disrupted - names)
    current = sum(1 for pod in pods if healthy(pod)
                  and (pod.get("metadata") or {}).get("name") not in disrupted)
    needed = needed_healthy(spec, expected)
    return current - needed, needed, current


def needed_healthy(spec: dict[str, Any], expected: int) -> int:
    """The healthy pods a budget's ``spec`` requires of ``expected`` pods (400 when a
    value is not a number or a percentage)."""
    if spec.get("maxUnavailable") is not None:
        return max(expected - _resolve(spec["maxUnavailable"], expected), 0)
    return _resolve(spec.get("minAvailable", 0), expected)


def _budget_refusal(pdb: Obj, needed: int, current: int) -> ApiError:
    name = (pdb.get("metadata") or {}).get("name", "")
    return ApiError(429, "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    {"causes": [{"reason": "DisruptionBudget",
                                 "message": f"The disruption budget {name} needs {needed} "
                                            f"healthy pods and has {current} currently"}]})


def check_budgets(store: Store, pod: Obj) -> Obj | None:
    """The budget that covers ``pod`` (``None`` if none applies).

    Raises 429 when that budget has no disruption left, 500 when several budgets match.
    """
    metadata = pod.get("metadata") or {}
    namespace = metadata.get("namespace") or ""
    labels = metadata.get("labels") or {}
    budgets, _ = store.list("poddisruptionbudgets.policy", namespace)
    matching = [b for b in budgets if selector_matches((b.get("spec") or {}).get("selector"),
                                                       labels)]
    if not matching or not healthy(pod):
        return None
    if len(matching) > 1:
        raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, "
                       "which the eviction subresource does not support.")
    pdb = matching[0]
    pods, _ = store.list("pods", namespace)
    selector = (pdb.get("spec") or {}).get("selector")
    covered = [p for p in pods
               if selector_matches(selector, (p.get("metadata") or {}).get("labels") or {})]
    allowed, needed, current = disruptions_allowed(pdb, covered, store.clock.now())
    if allowed <= 0:
        raise _budget_refusal(pdb, needed, current)
    return pdb


def record_disruption(store: Store, pdb: Obj, pod_name: str) -> None:
    """Note the evicted pod in the budget's status, as the real eviction handler does."""
    metadata = pdb.get("metadata") or {}

    def change(obj: Obj) -> None:
        status = obj.setdefault("status", {})
        status.setdefault("disruptedPods", {})[pod_name] = store.clock.rfc3339()
        status["disruptionsAllowed"] = max(int(status.get("disruptionsAllowed") or 1) - 1, 0)

    store.mutate("poddisruptionbudgets.policy", metadata.get("name", ""),
                 metadata.get("namespace"), change, manager="kube-apiserver")


def evict_pod(store: Store, namespace: str, name: str, *, dry_run: bool = False,
              forget: Callable[[str, str], None] | None = None) -> None:
    """Evict one pod: honour its budget, delete it, record the disruption.

    Raises the API server's errors: 404 when the pod is gone, 429 when its budget has no
    disruption left (the caller may retry), 500 when several budgets cover it.
    """
    pod = store.require("pods", name, namespace)
    budget = check_budgets(store, pod)
    store.delete("pods", name, namespace, dry_run=dry_run)
    if dry_run:
        return
    if forget is not None:
        forget(namespace, name)
    if budget is not None:
        record_disruption(store, budget, name)
