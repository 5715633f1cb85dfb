"""Kubernetes protobuf bodies: the ``k8s\\0`` envelope and the kinds clients send that way.

kubectl 1.35 sends some writes as ``application/vnd.kubernetes.protobuf`` (``auth can-i``'s
SelfSubjectAccessReview, ``auth whoami``'s SelfSubjectReview, ``create configmap``/``namespace``/``poddisruptionbudget``, the pod of
``debug node/NAME``). Such a body is the 4 bytes ``k8s\\0`` and a ``runtime.Unknown``
message: ``typeMeta`` (apiVersion, kind), ``raw`` (the object's own protobuf encoding),
``contentEncoding`` and ``contentType``.

The object is turned into the dict its JSON form would give, so every handler keeps working
on one shape. Field numbers and JSON names follow the upstream ``generated.proto`` files for
the kinds below; a kind not listed is refused with 415 as a server refuses a media type it
cannot read. A field outside a schema is skipped when it holds only zero values (Go writes
every non-pointer field, set or not) and refused with 415 when it holds data, so nothing a
client sent is ever stored without it.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from gputui.sim.apiserver.kubeproto_pods import POD_MESSAGES
from gputui.sim.apiserver.protowire import (
    LENGTH,
    VARINT,
    ProtoError,
    fields,
    length_field,
    signed64,
    varint_field,
)
from gputui.sim.errors import ApiError, bad_request

PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"

# Field types: "string", "bytes", "int"/"bool" (omitted when zero, as omitempty does),
# "int*"/"bool*" (Go pointers: kept even when zero), "map" (string to string), "bytesmap",
# "quantitymap" (string to Quantity), "Time", "IntOrString", "Quantity", a message name,
# "inline:<message>" (merged into the parent, Go's json inline) and "[]" before any of these
# for repeated fields.
Schema = dict[int, tuple[str, str]]
MESSAGES: dict[str, Schema] = {
    "ObjectMeta": {
        1: ("name", "string"), 2: ("generateName", "string"), 3: ("namespace", "string"),
        4: ("selfLink", "string"), 5: ("uid", "string"), 6: ("resourceVersion", "string"),
        7: ("generation", "int"), 8: ("creationTimestamp", "Time"),
        9: ("deletionTimestamp", "Time"), 10: ("deletionGracePeriodSeconds", "int*"),
        11: ("labels", "map"), 12: ("annotations", "map"),
        13: ("ownerReferences", "[]OwnerReference"), 14: ("finalizers", "[]string"),
    },
    "OwnerReference": {
        1: ("kind", "string"), 3: ("name", "string"), 4: ("uid", "string"),
        5: ("apiVersion", "string"), 6: ("controller", "bool*"),
        7: ("blockOwnerDeletion", "bool*"),
    },
    "LabelSelector": {1: ("matchLabels", "map"),
                      2: ("matchExpressions", "[]LabelSelectorRequirement")},
    "LabelSelectorRequirement": {1: ("key", "string"), 2: ("operator", "string"),
                                 3: ("values", "[]string")},
    "DeleteOptions": {
        1: ("gracePeriodSeconds", "int*"), 2: ("preconditions", "Preconditions"),
        3: ("orphanDependents", "bool*"), 4: ("propagationPolicy", "string"),
        5: ("dryRun", "[]string"),
        6: ("ignoreStoreReadErrorWithClusterBreakingPotential", "bool*"),
    },
    "Preconditions": {1: ("uid", "string"), 2: ("resourceVersion", "string")},
    # authorization.k8s.io/v1
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"),
                                2: ("spec", "SelfSubjectAccessReviewSpec"),
                                3: ("status", "SubjectAccessReviewStatus")},
    "SelfSubjectAccessReviewSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                                    2: ("nonResourceAttributes", "NonResourceAttributes")},
    "ResourceAttributes": {
        1: ("namespace", "string"), 2: ("verb", "string"), 3: ("group", "string"),
        4: ("version", "string"), 5: ("resource", "string"), 6: ("subresource", "string"),
        7: ("name", "string"), 8: ("fieldSelector", "SelectorAttributes"),
        9: ("labelSelector", "SelectorAttributes"),
    },
    "SelectorAttributes": {1: ("rawSelector", "string"),
                           2: ("requirements", "[]LabelSelectorRequirement")},
    "NonResourceAttributes": {1: ("path", "string"), 2: ("verb", "string")},
    "SubjectAccessReviewStatus": {1: ("allowed", "bool"), 2: ("reason", "string"),
                                  3: ("evaluationError", "string"), 4: ("denied", "bool")},
    # authentication.k8s.io/v1 (``extra``, field 4, is never sent by a client)
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta"), 2: ("status", "SelfSubjectReviewStatus")},
    "SelfSubjectReviewStatus": {1: ("userInfo", "UserInfo")},
    "UserInfo": {1: ("username", "string"), 2: ("uid", "string"), 3: ("groups", "[]string")},
    # core/v1
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map"),
                  3: ("binaryData", "bytesmap"), 4: ("immutable", "bool*")},
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec"),
                  3: ("status", "NamespaceStatus")},
    "NamespaceSpec": {1: ("finalizers", "[]string")},
    "NamespaceStatus": {1: ("phase", "string")},
    # policy/v1
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    "PodDisruptionBudget": {1: ("metadata", "ObjectMeta"),
                            2: ("spec", "PodDisruptionBudgetSpec")},
    "PodDisruptionBudgetSpec": {1: ("minAvailable", "IntOrString"),
                                2: ("selector", "LabelSelector"),
                                3: ("maxUnavailable", "IntOrString"),
                                4: ("unhealthyPodEvictionPolicy", "string")},
    **POD_MESSAGES,
}

# (apiVersion, kind) a client may send as protobuf -> message; "*" = any group version
# (DeleteOptions is registered in every one).
KINDS: dict[tuple[str, str], str] = {
    ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
    ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
    ("v1", "ConfigMap"): "ConfigMap",
    ("v1", "Namespace"): "Namespace",
    ("v1", "Pod"): "Pod",
    ("policy/v1", "Eviction"): "Eviction",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
    ("*", "DeleteOptions"): "DeleteOptions",
}


def is_protobuf(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == PROTOBUF_TYPE


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise ProtoError("a string field is not length-delimited")
    try:
        return value.decode()
    except UnicodeDecodeError:
        raise ProtoError("a string field is not UTF-8") from None


def _time(value: int | bytes) -> str | None:
    """``metav1.Time`` (seconds, nanos) as RFC 3339 at second precision, as JSON has it."""
    if not isinstance(value, bytes):
        raise ProtoError("a Time field is not length-delimited")
    seconds = next((signed64(v) for n, _, v in fields(value) if n == 1 and isinstance(v, int)),
                   0)
    if seconds == 0:
        return None  # the zero time: JSON writes null, which we leave out
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _int_or_string(value: int | bytes) -> int | str:
    if not isinstance(value, bytes):
        raise ProtoError("an IntOrString field is not length-delimited")
    parts = {n: v for n, _, v in fields(value)}
    if parts.get(1, 0) == 1:
        return _text(parts.get(3, b""))
    raw = parts.get(2, 0)
    return signed64(raw) if isinstance(raw, int) else 0


def _quantity(value: int | bytes) -> str:
    """``resource.Quantity``: a message whose field 1 is the canonical text ("1", "500Mi")."""
    if not isinstance(value, bytes):
        raise ProtoError("a Quantity field is not length-delimited")
    return next((_text(v) for n, _, v in fields(value) if n == 1), "")


def _map_entry(value: int | bytes, kind: str) -> tuple[str, str]:
    """One entry of a ``map`` (string values), ``bytesmap`` or ``quantitymap`` field."""
    if not isinstance(value, bytes):
        raise ProtoError("a map entry is not length-delimited")
    parts = {n: v for n, _, v in fields(value)}
    key = _text(parts.get(1, b""))
    raw = parts.get(2, b"")
    if kind == "quantitymap":
        return key, _quantity(raw)
    if kind == "bytesmap":
        if not isinstance(raw, bytes):
            raise ProtoError("a bytes map value is not length-delimited")
        return key, base64.b64encode(raw).decode()
    return key, _text(raw)


def _scalar(kind: str, wire: int, value: int | bytes) -> Any:
    """One value of a non-repeated, non-map field, as JSON would carry it."""
    if kind == "string":
        return _text(value)
    if kind == "bytes":
        if not isinstance(value, bytes):
            raise ProtoError("a bytes field is not length-delimited")
        return base64.b64encode(value).decode()
    if kind in ("int", "int*", "bool", "bool*"):
        if wire != VARINT or not isinstance(value, int):
            raise ProtoError(f"a {kind.rstrip('*')} field is not a varint")
        return bool(value) if kind.startswith("bool") else signed64(value)
    if kind == "Time":
        return _time(value)
    if kind == "IntOrString":
        return _int_or_string(value)
    if kind == "Quantity":
        return _quantity(value) or None
    if not isinstance(value, bytes):
        raise ProtoError(f"a {kind} field is not length-delimited")
    return decode_message(kind, value)


def _omitted(kind: str, value: Any) -> bool:
    """Whether JSON's omitempty would leave this value out."""
    if value is None:
        return True
    if kind in ("string", "bytes"):
        return bool(value == "")
    return kind in ("int", "bool") and not bool(value)


def _holds_data(wire: int, value: int | bytes, depth: int = 0) -> bool:
    """Whether a field carries anything but zero values (then skipping it would lose data).

    Bytes are read as a nested message when they parse as one; its fields decide.
    """
    if wire != LENGTH or not isinstance(value, bytes):
        return value != 0
    if not value:
        return False
    try:
        nested = list(fields(value))
    except ProtoError:
        return True
    return depth > 16 or any(_holds_data(w, v, depth + 1) for _, w, v in nested)


class UnreadField(ProtoError):
    """A field this server does not read, holding data: the body is refused, not trimmed."""


def decode_message(name: str, data: bytes) -> dict[str, Any]:
    """The message ``name`` as the dict its JSON form gives.

    Fields outside the schema are skipped when they hold only zero values, and raise
    :class:`UnreadField` when they hold data.
    """
    schema = MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in fields(data):
        if number not in schema:
            if _holds_data(wire, value):
                raise UnreadField(f"field {number} of {name} is not read as protobuf here")
            continue
        key, kind = schema[number]
        if kind.endswith("map"):
            entry_key, entry_value = _map_entry(value, kind)
            out.setdefault(key, {})[entry_key] = entry_value
        elif kind.startswith("inline:"):
            if not isinstance(value, bytes):
                raise ProtoError(f"an inline {kind[7:]} is not length-delimited")
            out.update(decode_message(kind[7:], value))
        elif kind.startswith("[]"):
            out.setdefault(key, []).append(_scalar(kind[2:], wire, value))
        else:
            decoded = _scalar(kind, wire, value)
            if _omitted(kind, decoded):
                out.pop(key, None)
            else:
                out[key] = decoded
    return out


def _envelope(body: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw object bytes) of a ``k8s\\0`` + runtime.Unknown body."""
    if not body.startswith(MAGIC):
        raise ProtoError("the body does not start with the k8s\\0 protobuf prefix")
    api_version = kind = ""
    raw = b""
    for number, _, value in fields(body[len(MAGIC):]):
        if number == 1 and isinstance(value, bytes):
            for sub, _, text in fields(value):
                if sub == 1:
                    api_version = _text(text)
                elif sub == 2:
                    kind = _text(text)
        elif number == 2 and isinstance(value, bytes):
            raw = value
        elif number == 3 and value:
            raise ProtoError(f"unsupported contentEncoding {_text(value)!r}")
    return api_version, kind, raw


def unsupported_media_type(accepted: str = "application/json") -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types "
                    f"include: {accepted}")


def decode_body(body: bytes) -> dict[str, Any]:
    """A protobuf request body as the dict the same object's JSON body would give.

    Raises 400 for malformed bytes and 415 for a kind this server does not read as protobuf.
    """
    try:
        api_version, kind, raw = _envelope(body)
        message = KINDS.get((api_version, kind)) or KINDS.get(("*", kind))
        if message is None:
            raise unsupported_media_type()
        obj = decode_message(message, raw)
    except UnreadField as error:
        raise unsupported_media_type(f"application/json ({error})") from None
    except ProtoError as error:
        raise bad_request(f"the body of the request could not be decoded: {error}") from None
    return {"kind": kind, "apiVersion": api_version, **obj}


def _encode_value(kind: str, value: Any) -> tuple[int, bytes | int]:
    """(wire type, payload) of one value; the inverse of :func:`_scalar`."""
    if kind == "string":
        return LENGTH, str(value).encode()
    if kind == "bytes":
        return LENGTH, base64.b64decode(value)
    if kind in ("int", "int*", "bool", "bool*"):
        return VARINT, int(value)
    if kind == "Time":
        stamp = datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        return LENGTH, varint_field(1, int(stamp.timestamp()))
    if kind == "Quantity":
        return LENGTH, length_field(1, str(value).encode())
    if kind == "IntOrString":
        if isinstance(value, str):
            return LENGTH, varint_field(1, 1) + length_field(3, value.encode())
        return LENGTH, varint_field(1, 0) + varint_field(2, int(value))
    return LENGTH, encode_message(kind, value)


def _field(number: int, kind: str, value: Any) -> bytes:
    wire, payload = _encode_value(kind, value)
    if wire == VARINT:
        assert isinstance(payload, int)
        return varint_field(number, payload)
    assert isinstance(payload, bytes)
    return length_field(number, payload)


def encode_message(name: str, obj: dict[str, Any]) -> bytes:
    """``obj`` (its JSON form) as the protobuf message ``name``; keys not in the schema drop."""
    out = bytearray()
    for number, (key, kind) in sorted(MESSAGES[name].items()):
        if kind.startswith("inline:"):
            out += length_field(number, encode_message(kind[7:], obj))
            continue
        if key not in obj or obj[key] is None:
            continue
        value = obj[key]
        if kind.endswith("map"):
            inner = {"bytesmap": "bytes", "quantitymap": "Quantity"}.get(kind, "string")
            for entry_key, entry_value in value.items():
                entry = _field(1, "string", entry_key) + _field(2, inner, entry_value)
                out += length_field(number, entry)
        elif kind.startswith("[]"):
            for item in value:
                out += _field(number, kind[2:], item)
        else:
            out += _field(number, kind, value)
    return bytes(out)


def encode_body(obj: dict[str, Any]) -> bytes:
    """``obj`` in the ``k8s\\0`` envelope, as client-go writes a protobuf request body."""
    api_version, kind = obj.get("apiVersion", ""), obj.get("kind", "")
    message = KINDS.get((api_version, kind)) or KINDS.get(("*", kind))
    if message is None:
        raise KeyError(f"no protobuf schema for {api_version} {kind}")
    type_meta = length_field(1, api_version.encode()) + length_field(2, kind.encode())
    unknown = length_field(1, type_meta) + length_field(2, encode_message(message, obj))
    return MAGIC + unknown
