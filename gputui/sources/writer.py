"""The writes actions send, over the real ``kubernetes`` client: :class:`KubeWriter`.

It implements :class:`gputui.actions.base.ClusterWriter` with the generated APIs
(``CoreV1Api.patch_node``, ``create_namespaced_pod_eviction``, ``CustomObjectsApi`` for the
GPU Operator's resources, ``AuthorizationV1Api`` for SelfSubjectAccessReview, a raw POST of a
SelfSubjectReview for :meth:`KubeWriter.who_am_i`), built from the
same :class:`~gputui.sources.kubeconfig.KubeTarget` the sources read with, so a write goes to
exactly the cluster, as exactly the user, the operator is looking at.

Rules every write follows:

* ``dry_run=True`` sends ``dryRun=All``: the server validates and admits, stores nothing.
* A :class:`~gputui.actions.base.Change` with ``resource_version`` carries it as a
  precondition (inside a merge patch, or a ``replace`` of ``/metadata/resourceVersion`` in a
  JSON patch); a stale plan answers 409, raised as ``WriteError(409, reason)``.
* Server refusals become one sentence quoting the server's own message (and, for a 429 from
  a PodDisruptionBudget, the budget's name in ``WriteError.budget``).
* ``read_only=True`` raises before any request: not even a SelfSubjectAccessReview (a POST)
  is sent, so a read-only gputui sends GETs only.

Answers are read raw (``_preload_content=False`` + json): typed models are slower and drop
fields the client does not know (the GPU Operator's custom resources).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any, Protocol

import urllib3
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from gputui.domain.sanitize import clean_tree
from gputui.sources.budget import bounded
from gputui.sources.errors import SourceError, WriteError
from gputui.sources.identity import PATH as SELF_SUBJECT_REVIEWS
from gputui.sources.identity import ServerIdentity, parse_self_subject_review
from gputui.sources.kubeconfig import KubeTarget

log = logging.getLogger(__name__)

JsonObj = dict[str, Any]


class Change(Protocol):
    """What the writer reads of an action's change (``gputui.actions.base.Change``; the
    sources may not import the actions, so the shape is declared here)."""

    @property
    def verb(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def body(self) -> Any: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def patch_type(self) -> str: ...
    @property
    def resource_version(self) -> str | None: ...


class Permission(Protocol):
    """What the writer reads of an action's permission (``gputui.actions.base.Permission``)."""

    @property
    def verb(self) -> str: ...
    @property
    def resource(self) -> str: ...
    @property
    def group(self) -> str: ...
    @property
    def subresource(self) -> str: ...

    def describe(self) -> str: ...

#: the field manager every write records (managedFields show who changed a label)
FIELD_MANAGER = "gputui"
#: seconds to connect, then to wait for an answer; a write answers quickly or not at all
#: (an action's guard cuts both to the time its deadline leaves: :mod:`gputui.sources.budget`)
REQUEST_TIMEOUT = (5.0, 30.0)

_CONTENT_TYPES = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
}
_BUDGET = re.compile(r"disruption budget (\S+?)(?: needs|\.|$)")


@dataclass(frozen=True)
class _Kind:
    """Where one object kind lives in the API."""

    group: str
    version: str
    plural: str
    namespaced: bool


_KINDS: dict[str, _Kind] = {
    "Node": _Kind("", "v1", "nodes", False),
    "Namespace": _Kind("", "v1", "namespaces", False),
    "Pod": _Kind("", "v1", "pods", True),
    "ConfigMap": _Kind("", "v1", "configmaps", True),
    "DaemonSet": _Kind("apps", "v1", "daemonsets", True),
    "PodDisruptionBudget": _Kind("policy", "v1", "poddisruptionbudgets", True),
    "ClusterPolicy": _Kind("nvidia.com", "v1", "clusterpolicies", False),
    "NVIDIADriver": _Kind("nvidia.com", "v1alpha1", "nvidiadrivers", False),
}


class KubeWriter:
    """A :class:`~gputui.actions.base.ClusterWriter` for one kubeconfig context.

    Args:
        target: the loaded connection (the same one the live source uses).
        read_only: refuse every write (and every SelfSubjectAccessReview) before sending.
    """

    def __init__(self, target: KubeTarget, *, read_only: bool = False):
        self.context = target.context
        self.user = target.user
        self.read_only = read_only
        self.server = target.server
        self._api = k8s.ApiClient(target.configuration)
        self._api.user_agent = "gputui"
        self._core = k8s.CoreV1Api(self._api)
        self._custom = k8s.CustomObjectsApi(self._api)
        self._authz = k8s.AuthorizationV1Api(self._api)

    # ------------------------------------------------------------------ writes
    def patch(self, change: Change, *, dry_run: bool = False) -> JsonObj:
        """Send one ``patch`` change; returns the object as the server answered it."""
        self._refuse_if_read_only(f"patch {change.kind} {change.name}")
        if change.verb != "patch":
            raise WriteError(0, f"gputui cannot send a {change.verb!r} change with patch")
        kind = _kind(change.kind)
        content_type = _CONTENT_TYPES.get(change.patch_type)
        if content_type is None:
            raise WriteError(0, f"unknown patch type {change.patch_type!r}")
        body = _with_precondition(change.body, change.patch_type, change.resource_version)
        options: dict[str, Any] = {
            "dry_run": "All" if dry_run else None, "field_manager": FIELD_MANAGER,
            "_content_type": content_type, "_preload_content": False,
            "_request_timeout": bounded(REQUEST_TIMEOUT)}
        return self._call(lambda: self._send_patch(kind, change, body, options))

    def _send_patch(self, kind: _Kind, change: Change, body: Any,
                    options: dict[str, Any]) -> Any:
        if kind.group:
            if kind.namespaced:
                return self._custom.patch_namespaced_custom_object(
                    kind.group, kind.version, change.namespace or "", kind.plural,
                    change.name, body, **options)
            return self._custom.patch_cluster_custom_object(
                kind.group, kind.version, kind.plural, change.name, body, **options)
        if kind.plural == "nodes":
            return self._core.patch_node(change.name, body, **options)
        if kind.plural == "pods":
            return self._core.patch_namespaced_pod(change.name, change.namespace or "", body,
                                                   **options)
        if kind.plural == "configmaps":
            return self._core.patch_namespaced_config_map(change.name, change.namespace or "",
                                                          body, **options)
        raise WriteError(0, f"gputui does not patch {change.kind} objects")

    def evict(self, namespace: str, pod: str, *, dry_run: bool = False) -> None:
        """POST a policy/v1 Eviction; a PodDisruptionBudget refusal raises ``WriteError(429)``."""
        self._refuse_if_read_only(f"evict pod {namespace}/{pod}")
        body = k8s.V1Eviction(api_version="policy/v1", kind="Eviction",
                              metadata=k8s.V1ObjectMeta(name=pod, namespace=namespace))
        self._call(lambda: self._core.create_namespaced_pod_eviction(
            pod, namespace, body, dry_run="All" if dry_run else None,
            field_manager=FIELD_MANAGER, _preload_content=False,
            _request_timeout=bounded(REQUEST_TIMEOUT)))

    # ------------------------------------------------------------------- reads
    def get(self, kind: str, name: str, namespace: str | None = None) -> JsonObj:
        """One object fresh from the server (a GET: allowed in read-only mode too)."""
        spec = _kind(kind)
        if spec.namespaced and not namespace:
            raise WriteError(0, f"{kind} {name}: a namespace is needed")
        path = "/api/v1" if not spec.group else f"/apis/{spec.group}/{spec.version}"
        if spec.namespaced:
            path += f"/namespaces/{namespace}"
        path += f"/{spec.plural}/{name}"
        return self._call(lambda: self._raw_get(path))

    def list_pods_on_node(self, node: str, label_selector: str = "") -> list[JsonObj]:
        """Every pod bound to ``node``, in every namespace (``spec.nodeName`` selector), and
        matching ``label_selector`` when one is given (the server filters, as kubectl's)."""
        answer = self._call(lambda: self._core.list_pod_for_all_namespaces(
            field_selector=f"spec.nodeName={node}", label_selector=label_selector or None,
            _preload_content=False, _request_timeout=bounded(REQUEST_TIMEOUT)))
        return [item for item in answer.get("items") or [] if isinstance(item, dict)]

    def read_log(self, namespace: str, pod: str, container: str | None = None,
                 tail_lines: int = 200) -> list[str]:
        """The last ``tail_lines`` lines of a container's log (a GET; the MIG safe path
        quotes the MIG manager's when a change fails)."""
        try:
            text = self._core.read_namespaced_pod_log(
                pod, namespace, container=container, tail_lines=tail_lines,
                _request_timeout=bounded(REQUEST_TIMEOUT))
        except ApiException as error:
            raise api_error(error.status or 0, error.body, error.headers) from None
        except urllib3.exceptions.HTTPError as error:
            raise WriteError(0, f"cannot reach the API server at {self.server}: "
                                f"{_first_line(error)}") from None
        return str(text or "").splitlines()

    def can_i(self, permission: Permission) -> tuple[bool, str]:
        """Ask the server (SelfSubjectAccessReview) whether this user may do ``permission``.

        In read-only mode nothing is asked (the review is a POST) and the answer is no.
        """
        if self.read_only:
            return False, "read-only mode"
        review = k8s.V1SelfSubjectAccessReview(
            api_version="authorization.k8s.io/v1", kind="SelfSubjectAccessReview",
            spec=k8s.V1SelfSubjectAccessReviewSpec(resource_attributes=k8s.V1ResourceAttributes(
                verb=permission.verb, resource=permission.resource,
                group=permission.group or None, subresource=permission.subresource or None)))
        answer = self._call(lambda: self._authz.create_self_subject_access_review(
            review, _preload_content=False, _request_timeout=bounded(REQUEST_TIMEOUT)))
        return read_access_review(answer, permission.describe())

    def who_am_i(self) -> ServerIdentity | None:
        """Ask the server who we are (SelfSubjectReview, as ``kubectl auth whoami``).

        None when the answer holds no usable username; a refusal (403, 404 on a server
        older than 1.28) raises WriteError. Not asked in read-only mode (it is a POST).
        """
        self._refuse_if_read_only("SelfSubjectReview")
        body = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        answer = self._call(lambda: self._api.call_api(
            *self._api.param_serialize("POST", SELF_SUBJECT_REVIEWS, body=body, header_params={
                "Accept": "application/json", "Content-Type": "application/json"},
                auth_settings=["BearerToken"]),
            _request_timeout=bounded(REQUEST_TIMEOUT)).response)
        return parse_self_subject_review(answer)

    def close(self) -> None:
        """Drop pooled connections."""
        api: Any = self._api  # the client's close() is untyped
        api.close()

    # --------------------------------------------------------------- internals
    def _raw_get(self, path: str) -> Any:
        return self._api.call_api(
            *self._api.param_serialize("GET", path, header_params={
                "Accept": "application/json"}, auth_settings=["BearerToken"]),
            _request_timeout=bounded(REQUEST_TIMEOUT)).response

    def _refuse_if_read_only(self, what: str) -> None:
        if self.read_only:
            raise WriteError(0, f"read-only mode: {what} was not sent")

    def _call(self, send: Any) -> JsonObj:
        """Run one request; decode its JSON answer; turn every failure into WriteError."""
        try:
            response = send()
        except ApiException as error:
            raise api_error(error.status or 0, error.body, error.headers) from None
        except urllib3.exceptions.HTTPError as error:
            raise WriteError(0, f"cannot reach the API server at {self.server}: "
                                f"{_first_line(error)}") from None
        except SourceError as error:  # the credential could not be had (token file, plugin)
            raise WriteError(0, str(error)) from None
        data = response.data if hasattr(response, "data") else response.read()
        if response.status >= 300:
            raise api_error(response.status, data, response.headers)
        try:
            decoded = clean_tree(json.loads(data)) if data else {}
        except ValueError:
            raise WriteError(0, f"the API server at {self.server} answered something "
                                "that is not JSON") from None
        return decoded if isinstance(decoded, dict) else {}


def read_access_review(answer: Any, what: str) -> tuple[bool, str]:
    """``(allowed, reason)`` from a SelfSubjectAccessReview answer.

    Fails closed: only ``status.allowed`` that is the JSON ``true`` allows; an answer of
    another shape (no status, ``allowed: "true"``, a list) raises ``WriteError(0, ...)``,
    which :func:`~gputui.actions.permissions.check_permissions` turns into a greyed action
    ("could not read permission: ..."), never an allowed one and never a crash.
    """
    status = answer.get("status") if isinstance(answer, dict) else None
    allowed = status.get("allowed") if isinstance(status, dict) else None
    if not isinstance(status, dict) or not isinstance(allowed, bool):
        found = "no status" if not isinstance(status, dict) else "no allowed boolean"
        log.warning("SelfSubjectAccessReview for %s: unexpected answer (%s)", what, found)
        raise WriteError(0, f"the access review answer has {found} (the API server or a "
                            "proxy answered oddly)")
    if allowed:
        return True, ""
    reason = next((text for key in ("reason", "evaluationError")
                   if isinstance(text := status.get(key), str) and text), "")
    return False, reason or f"the server does not allow {what}"


def writer_for_source(source: object, read_only: bool) -> KubeWriter | None:
    """A writer to the cluster a live source reads (None for sources without one)."""
    target = getattr(source, "target", None)
    return KubeWriter(target, read_only=read_only) if isinstance(target, KubeTarget) else None


def api_error(status: int, body: Any, headers: Any = None) -> WriteError:
    """A server refusal as one sentence quoting the server (plus the budget of a 429)."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or "")
    message, causes = text.strip()[:300], []
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    if isinstance(document, dict):
        message = str(document.get("message") or document.get("reason") or message)
        details = document.get("details")
        found = details.get("causes") if isinstance(details, dict) else None
        causes = [str(c.get("message")) for c in found if isinstance(c, dict)
                  and c.get("message")] if isinstance(found, list) else []
    budget = next((m.group(1) for c in causes for m in [_BUDGET.search(c)] if m), None)
    sentence = message.strip().rstrip(".") or f"HTTP {status}"
    if causes:
        sentence += " (" + "; ".join(c.rstrip(".") for c in causes) + ")"
    retry = _retry_after(headers)
    return WriteError(status, f"the server refused: {sentence}.", retry, budget)


def _retry_after(headers: Any) -> float | None:
    raw = headers.get("Retry-After") if headers is not None else None
    try:
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _with_precondition(body: Any, patch_type: str, resource_version: str | None) -> Any:
    """The patch body carrying ``resource_version`` so the server refuses a stale plan (409)."""
    if not resource_version:
        return body
    if patch_type == "json":
        return [*list(body), {"op": "replace", "path": "/metadata/resourceVersion",
                              "value": resource_version}]
    merged = dict(body)
    merged["metadata"] = {**dict(merged.get("metadata") or {}),
                          "resourceVersion": resource_version}
    return merged


def _kind(kind: str) -> _Kind:
    try:
        return _KINDS[kind]
    except KeyError:
        raise WriteError(0, f"gputui does not know the kind {kind!r}") from None


def _first_line(error: BaseException) -> str:
    text = str(getattr(error, "reason", None) or error)
    return text.splitlines()[0] if text else type(error).__name__
