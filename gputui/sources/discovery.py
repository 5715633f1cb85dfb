"""First contact with a cluster: is the server there, and where does the GPU Operator run.

The operator namespace is never hard-coded (``gpu-operator``, ``nvidia-gpu-operator`` and
the old ``gpu-operator-resources`` all exist in the wild): the active ClusterPolicy's
``status.namespace`` says it, else the namespace of the ``app=gpu-operator`` pod.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from gputui.sources.errors import ApiStatusError, SourceError
from gputui.sources.http import KubeHttp

CLUSTER_POLICIES = "/apis/nvidia.com/v1/clusterpolicies"
OPERATOR_POD_SELECTOR = "app=gpu-operator"


def probe(http: KubeHttp) -> None:
    """Fail fast with one line when the server is unreachable or refuses our credentials.

    Raises:
        SourceError: unreachable, TLS failure, 401 (credentials) — the caller exits 2.
    """
    try:
        http.get("/version")
    except ApiStatusError as error:
        if error.code == 401:
            raise SourceError(f"the API server at {http.host} rejected the credentials "
                              f"(401 Unauthorized): {error.detail}") from None
        if error.code in (403, 404):
            return  # /version hidden by policy: the server is there, carry on
        raise


def active_policy(policies: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The ClusterPolicy the operator acts on: the oldest, name as tie-break."""
    ordered = sorted(policies, key=lambda p: (
        str((p.get("metadata") or {}).get("creationTimestamp") or ""),
        str((p.get("metadata") or {}).get("name") or "")))
    return ordered[0] if ordered else None


def namespace_from_policies(policies: Iterable[Mapping[str, Any]]) -> str | None:
    """``status.namespace`` of the active ClusterPolicy (or of any that reports one)."""
    items = list(policies)
    first = active_policy(items)
    for policy in ([first] if first else []) + items:
        namespace = (policy.get("status") or {}).get("namespace")
        if namespace:
            return str(namespace)
    return None


def discover_namespace(http: KubeHttp, override: str | None = None) -> str | None:
    """The GPU Operator's namespace, or ``None`` when neither clue exists (no operator).

    403/404 answers (no rights, no CRD) just skip that clue.
    """
    if override:
        return override
    try:
        policies = http.get(CLUSTER_POLICIES).get("items") or []
        found = namespace_from_policies(policies)
        if found:
            return found
    except ApiStatusError as error:
        if error.code not in (403, 404):
            raise
    try:
        pods = http.get("/api/v1/pods", {"labelSelector": OPERATOR_POD_SELECTOR, "limit": 1})
    except ApiStatusError as error:
        if error.code not in (403, 404):
            raise
        return None
    for pod in pods.get("items") or []:
        namespace = (pod.get("metadata") or {}).get("namespace")
        if namespace:
            return str(namespace)
    return None
