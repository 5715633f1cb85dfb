"""Write validation: what the real API server rejects with 400 or 422 before storing.

Label keys and values and annotation keys are checked on every write (create, update, every
patch type, status writes), because a bad label is exactly the kind of mistake an operator's
tool must see refused rather than silently stored.
"""

from __future__ import annotations

import re
from typing import Any

from gputui.sim.errors import ApiError, bad_request, invalid
from gputui.sim.resources import ResourceType

_NAME_RE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_RE = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
_ANNOTATIONS_LIMIT = 256 * 1024


def _key_errors(key: str) -> str | None:
    """Why ``key`` is not a qualified name, ``None`` when it is."""
    prefix, _, name = key.rpartition("/")
    if "/" in prefix:
        return "a qualified name must consist of an optional DNS subdomain prefix and a name"
    if key.endswith("/") or key.startswith("/"):
        return "prefix part and name part must be non-empty"
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN_RE.match(prefix)):
        return "prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _NAME_RE.match(name):
        return ("name part must be at most 63 characters of alphanumerics, '-', '_' or '.', "
                "and must start and end with an alphanumeric character")
    return None


def label_value_ok(value: Any) -> bool:
    return isinstance(value, str) and (value == "" or (len(value) <= 63
                                                       and bool(_NAME_RE.match(value))))


def _check_labels(labels: Any, problems: list[str]) -> None:
    if labels is None:
        return
    if not isinstance(labels, dict):
        problems.append("metadata.labels: Invalid value: must be a map of strings")
        return
    for key, value in labels.items():
        why = _key_errors(key)
        if why:
            problems.append(f"metadata.labels: Invalid value: {key!r}: {why}")
        if not label_value_ok(value):
            problems.append(f"metadata.labels: Invalid value: {value!r}: a valid label value "
                            "must be an empty string or at most 63 characters of alphanumerics,"
                            " '-', '_' or '.', starting and ending with an alphanumeric")


def _check_annotations(annotations: Any, problems: list[str]) -> None:
    if annotations is None:
        return
    if not isinstance(annotations, dict):
        problems.append("metadata.annotations: Invalid value: must be a map of strings")
        return
    total = 0
    for key, value in annotations.items():
        why = _key_errors(key)
        if why:
            problems.append(f"metadata.annotations: Invalid value: {key!r}: {why}")
        if not isinstance(value, str):
            problems.append(f"metadata.annotations: Invalid value: {key!r}: must be a string")
            continue
        total += len(key) + len(value)
    if total > _ANNOTATIONS_LIMIT:
        problems.append("metadata.annotations: Too long: must have at most 262144 bytes")


def validate_object(rtype: ResourceType, obj: Any) -> None:
    """Raise 400 for a body that is not an object of this type, 422 for invalid metadata."""
    if not isinstance(obj, dict):
        raise bad_request("the body of the request must be a JSON object")
    kind = obj.get("kind")
    if kind and kind != rtype.kind:
        raise bad_request(f"the kind of the provided object ({kind}) does not match the "
                          f"resource ({rtype.kind})")
    api_version = obj.get("apiVersion")
    if api_version and api_version != rtype.api_version:
        raise bad_request(f"the API version in the data ({api_version}) does not match the "
                          f"expected API version ({rtype.api_version})")
    metadata = obj.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise bad_request("metadata must be an object")
    metadata = metadata or {}
    problems: list[str] = []
    name = metadata.get("name")
    if name and (not isinstance(name, str) or len(name) > 253
                 or not _DNS_SUBDOMAIN_RE.match(name)):
        problems.append(f"metadata.name: Invalid value: {name!r}: a lowercase RFC 1123 "
                        "subdomain must consist of lower case alphanumeric characters, '-' or "
                        "'.', and must start and end with an alphanumeric character")
    _check_labels(metadata.get("labels"), problems)
    _check_annotations(metadata.get("annotations"), problems)
    if problems:
        raise invalid_with_causes(rtype, str(name or ""), problems)


def invalid_with_causes(rtype: ResourceType, name: str, problems: list[str]) -> ApiError:
    """A 422 ``Invalid`` whose details list each problem as a cause, like the real server."""
    error = invalid(f"{rtype.kind}", name, ", ".join(problems))
    error.details = {"name": name, "group": rtype.group, "kind": rtype.kind,
                     "causes": [{"reason": "FieldValueInvalid", "message": p,
                                 "field": p.split(":", 1)[0]} for p in problems]}
    return error


def check_target_matches(obj: dict[str, Any], name: str | None, namespace: str | None) -> None:
    """The name and namespace in a body must agree with the URL (400 otherwise)."""
    metadata = obj.get("metadata") or {}
    body_ns = metadata.get("namespace")
    if namespace is not None and body_ns and body_ns != namespace:
        raise bad_request("the namespace of the provided object does not match the "
                          "namespace sent on the request")
    if name is not None and metadata.get("name") and metadata["name"] != name:
        raise bad_request("the name of the object does not match the name on the URL")
