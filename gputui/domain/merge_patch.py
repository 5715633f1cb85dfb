"""RFC 7386 JSON merge patch, written once: applying one and finding the one between two objects.

Two parts of gputui speak it: the simulator's API server applies the merge patches a client
sends (``application/merge-patch+json``), and a recording stores a node's heartbeat as the
merge patch of its previous version rather than the whole object. Both use these pure
functions, so the two cannot drift apart on what ``null`` or a list means.
"""

from __future__ import annotations

from typing import Any


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: ``patch`` applied to ``target`` (not modified): objects merge recursively,
    ``null`` deletes the key, anything else replaces. Subtrees the patch leaves alone, and
    the patch's own values, are shared with the result, not copied: a caller whose patch
    may change later copies it first."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


class _NoPatch(Exception):
    """The change cannot be said as a merge patch (a null value): record the object whole."""


def merge_diff(old: Any, new: Any) -> Any:
    """An RFC 7386 merge patch turning ``old`` into ``new``, or None when there is none.

    Lists are replaced whole (as RFC 7386 does). None means "send ``new`` whole": a merge
    patch cannot set a value to null (null removes the key), and a non-object cannot be
    patched. An empty dict means "no change".
    """
    if not isinstance(old, dict) or not isinstance(new, dict):
        return None
    try:
        return _diff(old, new)
    except _NoPatch:
        return None


def _diff(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    patch: dict[str, Any] = {}
    for key, value in new.items():
        if key not in old:
            if _has_null(value):
                raise _NoPatch
            patch[key] = value
            continue
        before = old[key]
        if before is value:
            continue
        if isinstance(before, dict) and isinstance(value, dict):
            inner = _diff(before, value)
            if inner:
                patch[key] = inner
        elif before != value or type(before) is not type(value):
            if _has_null(value):
                raise _NoPatch
            patch[key] = value  # a dict replacing a scalar merges into {}: exact too
    for key in old:
        if key not in new:
            patch[key] = None
    return patch


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(item) for item in value.values())
    return False  # inside lists null is kept: a list is replaced whole
