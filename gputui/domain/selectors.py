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


#: one requirement of a ``LabelSelector`` object: (key, operator, values), the operator one of
#: ``In``, ``NotIn``, ``Exists``, ``DoesNotExist`` (``matchLabels`` entries become ``In``)
SelectorTerm = tuple[str, str, tuple[str, ...]]


def selector_terms(value: object) -> tuple[SelectorTerm, ...] | None:
    """The requirements of a ``LabelSelector`` object (``{matchLabels, matchExpressions}``),
    None for a null selector.

    Why apart from the string grammar above: a PodDisruptionBudget's ``spec.selector`` is the
    object, and policy/v1 gives null and empty different meanings (a null selector selects no
    pod, ``{}`` every pod in the namespace): None and ``()`` keep them apart. Lenient, like
    the rest of this module: an entry of the wrong shape is dropped, and an operator the API
    server would not have accepted is kept, so that it matches no pod (:func:`terms_match`).
    """
    if not isinstance(value, Mapping):
        return None
    terms: list[SelectorTerm] = []
    match_labels = value.get("matchLabels")
    if isinstance(match_labels, Mapping):
        terms += [(str(k), "In", (str(v),)) for k, v in sorted(match_labels.items())]
    expressions = value.get("matchExpressions")
    for expr in expressions if isinstance(expressions, list) else ():
        if isinstance(expr, Mapping) and isinstance(expr.get("key"), str):
            values = expr.get("values")
            terms.append((expr["key"], str(expr.get("operator") or ""), tuple(
                str(v) for v in (values if isinstance(values, list) else ()))))
    return tuple(terms)


def _term_holds(term: SelectorTerm, labels: Mapping[str, str]) -> bool:
    key, op, values = term
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":  # as the API server's: a pod without the label is not in the set
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    return False


def terms_match(terms: tuple[SelectorTerm, ...] | None, labels: Mapping[str, str]) -> bool:
    """Whether ``labels`` satisfy a ``LabelSelector`` read by :func:`selector_terms`: a null
    one (None) matches nothing, an empty one everything."""
    return terms is not None and all(_term_holds(term, labels) for term in terms)


def terms_text(terms: tuple[SelectorTerm, ...] | None) -> str:
    """A ``LabelSelector`` in the string grammar (``app=trainer,tier in (a,b),!spot``), for
    a message: "" for the empty one, ``(none)`` for the null one."""
    if terms is None:
        return "(none)"
    words = {"Exists": "{k}", "DoesNotExist": "!{k}", "In": "{k} in ({v})",
             "NotIn": "{k} notin ({v})"}
    return ",".join(
        f"{key}={values[0]}" if op == "In" and len(values) == 1
        else words.get(op, "{k} " + op + " ({v})").format(k=key, v=",".join(values))
        for key, op, values in terms)
