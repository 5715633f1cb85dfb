"""Kubernetes label-selector strings (``app=trainer,tier!=batch,env in (a,b),!x``).

The upgrade policy's ``waitForCompletion.podSelector`` and ``drain.podSelector`` are selector
*strings* (k8s-operator-libs), so the domain matches them itself to say which pods a node is
waiting for; the node list's ``/`` filter uses the same grammar for its label terms
(:func:`filter_terms`, :func:`requirement`).

Lenient on purpose: a malformed term never raises (a policy written by hand or a half-typed
filter must not break a view). The emulated API server has the strict twin
(``gputui.sim.selectors``, 400 on a malformed selector); ``tests/domain/test_selector_grammar.py``
runs one table of cases through both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache

Requirement = Callable[[Mapping[str, str]], bool]

_SET = re.compile(r"^\s*([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


def _split(selector: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part.strip() for part in parts if part.strip()]


#: one filter term: a set requirement (``pool in (a, b)``, spaces allowed) or a run of text
_FILTER_TERM = re.compile(r"[^\s,()!=]+\s+(?:in|notin)\s*\([^)]*\)|[^\s,]+")


def filter_terms(text: str) -> list[str]:
    """Split a typed filter into terms on whitespace and commas, keeping ``k in (a, b)`` whole."""
    return _FILTER_TERM.findall(text)


def is_requirement(term: str) -> bool:
    """Whether ``term`` is selector syntax (an operator, a set, or ``!key``), not free text."""
    return bool(_SET.match(term)) or "=" in term or (term.startswith("!") and len(term) > 1)


def requirement(text: str) -> Requirement:
    """The predicate of one selector term (``k=v``, ``k!=v``, ``k in (a,b)``, ``!k``, ``k``)."""
    return _requirement(text)


def _requirement(text: str) -> Requirement:
    match = _SET.match(text)
    if match:
        key, op, raw = match.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    for op in ("!=", "==", "="):
        if op in text:
            key, value = (s.strip() for s in text.split(op, 1))
            if op == "!=":
                return lambda labels: labels.get(key) != value
            return lambda labels: labels.get(key) == value
    if text.startswith("!"):
        key = text[1:].strip()
        return lambda labels: key not in labels
    return lambda labels: text in labels


@lru_cache(maxsize=256)
def parse_selector(selector: str) -> Callable[[Mapping[str, str]], bool]:
    """A predicate for ``selector``; the empty selector matches everything.

    Cached: the same policy selector is matched for every node waiting on jobs, on every
    build, and parsing it (a regex per part) costs more than matching.
    """
    requirements = [_requirement(part) for part in _split(selector)]
    return lambda labels: all(req(labels) for req in requirements)


def matches(selector: str, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy ``selector``."""
    return parse_selector(selector)(labels)


def selector_from_label_selector(value: object) -> str:
    """A selector string from either a string or a ``{matchLabels: {...}}`` object."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, Mapping):
        match_labels = value.get("matchLabels")
        if isinstance(match_labels, Mapping):
            return ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))
    return ""
