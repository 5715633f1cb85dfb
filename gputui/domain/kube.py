"""Small readers for Kubernetes JSON: metadata, timestamps, quantities, conditions.

Objects arrive as untyped dicts; these helpers are the only place that tolerates missing or
oddly-typed fields, so the rest of the domain can be written against clean values.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

from gputui.domain.jsondict import JsonDict


def sub(obj: Mapping[str, Any] | None, *keys: str) -> JsonDict:
    """``obj[k1][k2]...`` as a dict, ``{}`` when any step is missing or not a dict.

    The returned dict is the object's own (no copy, for speed at 5,000 nodes): read only.
    """
    current: Any = obj
    for key in keys:
        if type(current) is not dict and not isinstance(current, Mapping):
            return {}
        current = current.get(key)
    if type(current) is dict:
        return current
    return dict(current) if isinstance(current, Mapping) else {}


def items(obj: Mapping[str, Any] | None, *keys: str) -> list[JsonDict]:
    """``obj[k1]...[kn]`` as a list of dicts (non-dict entries dropped)."""
    current: Any = obj
    for key in keys[:-1]:
        if not isinstance(current, Mapping):
            return []
        current = current.get(key)
    value = current.get(keys[-1]) if isinstance(current, Mapping) and keys else None
    return [entry for entry in value if isinstance(entry, dict)] if isinstance(value, list) else []


def name_of(obj: Mapping[str, Any]) -> str:
    """``metadata.name`` or ""."""
    return str(sub(obj, "metadata").get("name", ""))


def namespace_of(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace`` or ""."""
    return str(sub(obj, "metadata").get("namespace", ""))


_ONLY_STR = frozenset({str})


def str_map(raw: Mapping[Any, Any]) -> dict[str, str]:
    """A copy of ``raw`` with keys and values as strings.

    The type check runs in C (``map(type, ...)``): JSON labels are already strings, and a node
    carries ~80 of them, so a per-item ``str()`` at 5,000 nodes costs more than the rest of
    reading the node.
    """
    if {*map(type, raw), *map(type, raw.values())} <= _ONLY_STR:
        return dict(raw)
    return {str(k): str(v) for k, v in raw.items()}


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """``metadata.labels`` with values as strings."""
    return str_map(sub(obj, "metadata", "labels"))


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """``metadata.annotations`` with values as strings."""
    return str_map(sub(obj, "metadata", "annotations"))


def parse_time(value: Any) -> float | None:
    """An RFC 3339 timestamp (``2026-11-29T10:00:00Z``) as epoch seconds, None if absent."""
    if not isinstance(value, str) or not value:
        return None
    return _parse_time(value)


@lru_cache(maxsize=65536)
def _parse_time(value: str) -> float | None:
    """Cached: thousands of pods share creation and start timestamps at scale."""
    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def parse_epoch(value: Any) -> float | None:
    """A unix-seconds annotation value (``"1764410400"``) as float, None if unreadable."""
    try:
        return float(str(value).strip())
    except (TypeError, ValueError):
        return None


#: quantity suffixes :func:`to_int` reads
_MULTIPLIERS = {"k": 1000, "Ki": 1024, "M": 1000**2, "Mi": 1024**2}


def to_int(value: Any, default: int = 0) -> int:
    """An integer-ish value or quantity (``8``, ``"8"``, ``"1k"``) as int; ``default`` else."""
    if type(value) is str and len(value) < 16 and value.isascii() and value.isdigit():
        # a plain count ("8", 25,000 of them per 5,000-node build): exactly what the float
        # route below gives for fewer than 16 digits (a double holds those exactly)
        return int(value)
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    text = str(value).strip() if value is not None else ""
    for suffix, factor in _MULTIPLIERS.items():
        if text.endswith(suffix) and text[: -len(suffix)].isdigit():
            return int(text[: -len(suffix)]) * factor
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # "eight", or "inf" / "1e999" (no integer)
        return default


def condition(obj: Mapping[str, Any], kind: str) -> JsonDict:
    """The ``status.conditions`` entry of type ``kind``, ``{}`` when absent."""
    for entry in items(obj, "status", "conditions"):
        if entry.get("type") == kind:
            return entry
    return {}


def as_bool(value: Any, default: bool) -> bool:
    """A JSON bool that may arrive as a string; ``default`` when absent."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"
