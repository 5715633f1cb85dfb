"""The three patch formats of the Kubernetes API: JSON merge, strategic merge and JSON patch.

Strategic merge is reduced to what GPU-cluster objects need: lists merge by the key the real
API types declare (taints by ``key``, conditions by ``type``, containers by ``name`` ...),
other lists are replaced, and the ``$patch``, ``$retainKeys``, ``$setElementOrder`` and
``$deleteFromPrimitiveList`` directives are understood.
"""

from __future__ import annotations

import copy
from typing import Any

from gputui.domain.merge_patch import merge_patch
from gputui.sim.errors import ApiError, bad_request

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"

# Field name -> merge key, as the Kubernetes API types declare them.
MERGE_KEYS: dict[str, str] = {
    "taints": "key", "conditions": "type", "addresses": "type",
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "volumes": "name", "imagePullSecrets": "name",
    "ports": "containerPort", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "ownerReferences": "uid", "hostAliases": "ip", "containerStatuses": "name",
    "initContainerStatuses": "name", "topologySpreadConstraints": "topologyKey",
}
# Lists of scalars that merge as sets.
SET_LISTS = frozenset({"finalizers"})


def patch_failed(message: str) -> ApiError:
    """A patch that parsed but cannot apply: 422 like the real server."""
    return ApiError(422, "Invalid", f"the server rejected our request due to an error in our "
                                    f"request: {message}", {"causes": [{"message": message}]})


def unsupported_media(content_type: str) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format ({content_type}) - "
                    "accepted media types include: application/json-patch+json, "
                    "application/merge-patch+json, application/apply-patch+yaml")


# ----------------------------------------------------- strategic merge patch
def strategic_merge(target: Any, patch: Any) -> Any:
    """Apply a strategic merge patch to a map."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    base = dict(target) if isinstance(target, dict) and directive != "replace" else {}
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$patch", "$retainKeys"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            base[field] = [v for v in base.get(field) or [] if v not in value]
            continue
        if value is None:
            base.pop(key, None)
        elif isinstance(value, list):
            base[key] = _merge_list(key, base.get(key), value)
        elif isinstance(value, dict):
            merged = strategic_merge(base.get(key), value)
            if merged is None:
                base.pop(key, None)
            else:
                base[key] = merged
        else:
            base[key] = value
    return base


def _merge_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    current_list = list(current) if isinstance(current, list) else []
    if field in SET_LISTS:
        return current_list + [v for v in patch if v not in current_list]
    merge_key = MERGE_KEYS.get(field)
    if merge_key is None or not all(isinstance(item, dict) for item in patch):
        if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
            return [i for i in patch if not (isinstance(i, dict) and "$patch" in i)]
        return copy.deepcopy(patch)
    result = [item for item in current_list]
    for item in patch:
        if item.get("$patch") == "replace":
            return [copy.deepcopy(i) for i in patch if "$patch" not in i]
        index = next((i for i, old in enumerate(result) if isinstance(old, dict)
                      and merge_key in item and old.get(merge_key) == item.get(merge_key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                result.pop(index)
            continue
        if index is None:
            result.append(strategic_merge({}, item))
        else:
            result[index] = strategic_merge(result[index], item)
    return result


# ---------------------------------------------------------------- JSON patch
def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise patch_failed(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        node = _child(node, part, path)
    return node


def _child(node: Any, part: str, path: str) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise patch_failed(f"path {path!r} does not exist")


def _get(doc: Any, path: str) -> Any:
    node = doc
    for part in _pointer(path):
        node = _child(node, part, path)
    return node


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        raise patch_failed("cannot remove the whole document")
    parent = _parent(doc, parts, path)
    value = _child(parent, parts[-1], path)
    if isinstance(parent, dict):
        del parent[parts[-1]]
    else:
        del parent[int(parts[-1])]
    return value


def _add(doc: Any, path: str, value: Any, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent = _parent(doc, parts, path)
    last = parts[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise patch_failed(f"path {path!r} does not exist")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise patch_failed(f"index {last!r} out of range in {path!r}")
    else:
        raise patch_failed(f"path {path!r} does not exist")
    return doc


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902: add, remove, replace, move, copy and test, applied in order."""
    if not isinstance(operations, list):
        raise bad_request("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise bad_request(f"invalid JSON patch operation: {op!r}")
        doc = _apply_op(doc, op)
    return doc


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    kind, path = op["op"], op["path"]
    if kind in ("add", "replace", "test") and "value" not in op:
        raise bad_request(f"JSON patch {kind} needs a value")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind == "replace":
        return _add(doc, path, copy.deepcopy(op["value"]), replace=True)
    if kind == "remove":
        _remove(doc, path)
        return doc
    if kind == "test":
        if _get(doc, path) != op["value"]:
            raise patch_failed(f"testing value {path} failed")
        return doc
    if kind in ("move", "copy"):
        source = op.get("from")
        if not isinstance(source, str):
            raise bad_request(f"JSON patch {kind} needs from")
        value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
        return _add(doc, path, value)
    raise bad_request(f"unknown JSON patch operation {kind!r}")


def apply_patch(content_type: str, target: dict[str, Any], patch: Any,
                is_custom: bool) -> dict[str, Any]:
    """Patch ``target`` (not modified) by ``Content-Type``; 415 for an unsupported type."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media == MERGE:
        if not isinstance(patch, dict):
            raise bad_request("a merge patch must be a JSON object")
        # the request body is the caller's: the result must not share its values
        result = merge_patch(target, copy.deepcopy(patch))
    elif media == STRATEGIC and not is_custom:
        if not isinstance(patch, dict):
            raise bad_request("a strategic merge patch must be a JSON object")
        result = strategic_merge(copy.deepcopy(target), patch)
    elif media == JSON_PATCH:
        result = json_patch(target, patch)
    else:
        raise unsupported_media(media)
    if not isinstance(result, dict):
        raise patch_failed("the patched object is not a JSON object")
    return result
