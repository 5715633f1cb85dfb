"""First contact with a cluster: is the server there, and where does the GPU Operator run.

The operator namespace is never hard-coded (``gpu-operator``, ``nvidia-gpu-operator`` and
the old ``gpu-operator-resources`` all exist in the wild): the active ClusterPolicy's
``status.namespace`` says it, else the namespace of the ``app=gpu-operator`` pod.

Whether an API is served at all is asked of discovery (:func:`served`), never guessed from a
list's answer: on a real kube-apiserver, authorization runs before routing, so a viewer
refused a resource gets 403 whether or not its CRD is installed; discovery documents are
readable by every authenticated user (``system:discovery``) and say which it is.
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


def _split_collection(path: str) -> tuple[str, str] | None:
    """``/apis/nvidia.com/v1alpha1/nvidiadrivers`` -> (``/apis/nvidia.com/v1alpha1``,
    ``nvidiadrivers``); namespaced paths too; None for a path that names no collection."""
    parts = [part for part in path.split("?")[0].split("/") if part]
    if parts[:1] == ["api"] and len(parts) >= 2:
        version, rest = f"/api/{parts[1]}", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        version, rest = f"/apis/{parts[1]}/{parts[2]}", parts[3:]
    else:
        return None
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    return (version, rest[0]) if rest else None


def served(http: KubeHttp, path: str) -> bool | None:
    """Whether the server serves the collection at ``path``, from its group version's
    discovery document: False when the group version is not served (404) or does not list
    the resource (no such CRD), True when it lists it, None when discovery cannot tell
    (refused, failing, or an answer that is not a resource list)."""
    found = _split_collection(path)
    if found is None:
        return None
    version, resource = found
    try:
        document = http.get(version)
    except ApiStatusError as error:
        return False if error.code == 404 else None
    except SourceError:
        return None
    resources = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(resources, list):
        return None
    return any(isinstance(entry, dict) and entry.get("name") == resource
               for entry in resources)
