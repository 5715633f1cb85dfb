"""Label and field selectors, parsed the way the Kubernetes API server parses them.

Label selectors: ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``, ``k``, ``!k``.
Field selectors: ``path=v``, ``path==v``, ``path!=v`` on dotted paths such as
``spec.nodeName``. A malformed selector raises :class:`ApiError` 400, as the real server does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from gputui.sim.errors import bad_request

Predicate = Callable[[dict[str, Any]], bool]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(([^)]*)\)\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")
_CMP_RE = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)\s*$")


def _split_terms(selector: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms: list[str] = []
    depth = 0
    current: list[str] = []
    for char in selector:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(char)
    terms.append("".join(current))
    return [t for t in (term.strip() for term in terms) if t]


LabelTerm = Callable[[Mapping[str, str]], bool]


def _label_term(term: str) -> LabelTerm:
    match = _SET_RE.match(term)
    if match:
        key, op = match.group(1), match.group(3)
        values = {v.strip() for v in match.group(4).split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    match = _CMP_RE.match(term)
    if match:
        key, op, value = match.group(1), match.group(3), match.group(4)
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    match = _EXISTS_RE.match(term)
    if match:
        negate, key = match.group(1) == "!", match.group(2)
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise bad_request(f"unable to parse requirement: {term!r}")


def parse_label_selector(selector: str | None) -> Callable[[Mapping[str, str]], bool]:
    """A predicate over a label map; an empty selector matches everything."""
    if not selector:
        return lambda labels: True
    terms = [_label_term(term) for term in _split_terms(selector)]
    return lambda labels: all(term(labels) for term in terms)


def label_predicate(selector: str | None) -> Predicate:
    """A predicate over an object, reading ``metadata.labels``."""
    matches = parse_label_selector(selector)
    return lambda obj: matches((obj.get("metadata") or {}).get("labels") or {})


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value at a dotted path, ``""`` when absent (as the API server compares)."""
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return ""
        current = current.get(part)
        if current is None:
            return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


_FIELD_RE = re.compile(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$")


def _field_check(path: str, value: str, negate: bool) -> Predicate:
    """One ``path=value`` (or ``!=``) requirement."""
    if negate:
        return lambda obj: field_value(obj, path) != value
    return lambda obj: field_value(obj, path) == value


def field_predicate(selector: str | None, allowed: frozenset[str] | None = None) -> Predicate:
    """A predicate over an object for a field selector.

    Args:
        selector: the ``fieldSelector`` query value.
        allowed: field paths the resource supports; others are a 400, like the real server.
    """
    if not selector:
        return lambda obj: True
    checks: list[Predicate] = []
    for term in _split_terms(selector):
        match = _FIELD_RE.match(term)
        if not match:
            raise bad_request(f"invalid field selector: {term!r}")
        path, op, value = match.group(1), match.group(2), match.group(3)
        if allowed is not None and path not in allowed:
            raise bad_request(f'field label not supported: {path}')
        checks.append(_field_check(path, value, negate=op == "!="))
    return lambda obj: all(check(obj) for check in checks)
