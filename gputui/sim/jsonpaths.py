"""The store's JSON helpers: a fast deep copy, and which managedFields paths a write changed.

Kept apart from :mod:`gputui.sim.store` and :mod:`gputui.sim.managedfields` (which record
managedFields with them) so those modules hold their one job alone.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def copy_json(value: Any) -> Any:
    """Deep copy of JSON-shaped data (dicts, lists, scalars): several times faster than
    ``copy.deepcopy``, which matters when controllers mutate thousands of nodes."""
    kind = type(value)
    if kind is dict:
        return {k: copy_json(v) for k, v in value.items()}
    if kind is list:
        return [copy_json(v) for v in value]
    return value


def copy_for_write(obj: Obj) -> Obj:
    """:func:`copy_json` of a stored object but for its ``metadata.managedFields``, which
    the copy shares: a write never edits them (the store works out new ones), and a node's
    are a tree of ~60 dicts that every controller's write copied for nothing."""
    copied: Obj = {}
    for key, value in obj.items():
        if key == "metadata" and type(value) is dict:
            copied[key] = {k: v if k == "managedFields" else copy_json(v)
                           for k, v in value.items()}
        else:
            copied[key] = copy_json(value)
    return copied


def changed_fields(old: Obj | None, new: Obj) -> list[tuple[str, ...]]:
    """Paths (fieldsV1 style) of labels, annotations and top-level spec/status keys changed."""
    paths: list[tuple[str, ...]] = []
    old_meta = (old or {}).get("metadata") or {}
    new_meta = new.get("metadata") or {}
    for section in ("labels", "annotations"):
        before = old_meta.get(section) or {}
        after = new_meta.get(section) or {}
        for key in set(before) | set(after):
            if key in after and before.get(key) != after.get(key):
                paths.append(("f:metadata", f"f:{section}", f"f:{key}"))
    for section in ("spec", "status", "data"):
        before = (old or {}).get(section)
        after = new.get(section)
        if not isinstance(after, dict):
            continue
        before = before if isinstance(before, dict) else {}
        for key in after:
            if before.get(key) != after.get(key):
                paths.append((f"f:{section}", f"f:{key}"))
    return paths


def drop_paths(fields: dict[str, Any], paths: list[tuple[str, ...]]) -> None:
    for path in paths:
        node = fields
        parents: list[tuple[dict[str, Any], str]] = []
        for part in path[:-1]:
            if part not in node:
                break
            parents.append((node, part))
            node = node[part]
        else:
            node.pop(path[-1], None)
            for parent, part in reversed(parents):
                if not parent[part]:
                    del parent[part]
