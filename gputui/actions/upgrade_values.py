"""The value rules the upgrade and MIG actions check before anything is planned.

Upstream's own rules, so that gputui never sends what the operator would then choke on:
``maxUnavailable`` is parsed by apimachinery's ``intstr.GetScaledValueFromIntOrPercent`` (an
integer, or a string of an integer followed by ``%``; the string "2" is an error that stops
the upgrade controller), counts and timeouts have the CRD minimum 0
(k8s-operator-libs ``api/upgrade/v1alpha1/upgrade_spec.go``), selectors and label values
follow the Kubernetes label syntax.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[a-f0-9]{64}$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$")
_DNS_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?)$")


def check_version(text: str) -> str | None:
    """A driver version is an image tag (``580.82.07``; a branch such as ``570`` with
    precompiled drivers) or a ``sha256:`` digest."""
    value = text.strip()
    if not value:
        return "the driver version is empty"
    if _TAG.match(value) or _DIGEST.match(value):
        return None
    return f"{value!r} is not an image tag or sha256 digest"


def check_count(text: str) -> str | None:
    """A non-negative integer (``maxParallelUpgrades``, ``timeoutSeconds``: CRD minimum 0)."""
    value = text.strip()
    if not value.isdigit():
        return f"{value!r} is not a whole number of 0 or more"
    return None


def parse_max_unavailable(text: str) -> int | str | None:
    """``maxUnavailable`` as sent: an int, or a ``N%`` string; None when invalid.

    Upstream parses it with ``intstr.GetScaledValueFromIntOrPercent``: a string must end in
    ``%`` with an integer before it ("2" as a string is an error that stops the upgrade
    controller), so a plain number is sent as a JSON integer.
    """
    value = text.strip()
    if value.isdigit():
        return int(value)
    if value.endswith("%") and value[:-1].isdigit() and int(value[:-1]) <= 100:
        return f"{int(value[:-1])}%"
    return None


def check_max_unavailable(text: str) -> str | None:
    if parse_max_unavailable(text) is None:
        return f"{text.strip()!r} is neither a whole number nor a percentage such as 25%"
    return None


def check_bool(text: str) -> str | None:
    if text.strip().lower() not in ("true", "false"):
        return f"{text.strip()!r} is not true or false"
    return None


def check_selector(text: str) -> str | None:
    """A label selector string (``app=trainer,tier!=batch,env in (a,b),!x``); "" is allowed."""
    for part in _split_selector(text):
        error = _check_requirement(part)
        if error:
            return error
    return None


def _split_selector(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    parts.append(current.strip())
    return [p for p in parts if p] if text.strip() else []


def _check_requirement(part: str) -> str | None:
    """One ``key op value`` (or ``key in (a,b)``, ``key``, ``!key``) requirement."""
    match = re.match(r"^(\S+)\s+(in|notin)\s+\(([^)]*)\)$", part)
    if match:
        key, values = match.group(1), [v.strip() for v in match.group(3).split(",")]
    elif (op := re.search(r"==|!=|=", part)) is not None:
        key, values = part[:op.start()].strip(), [part[op.end():].strip()]
    else:
        key, values = part[1:].strip() if part.startswith("!") else part, []
    if not label_key_ok(key):
        return f"{key!r} in {part!r} is not a valid label key"
    bad = [v for v in values if not label_value_ok(v)]
    return f"{bad[0]!r} in {part!r} is not a valid label value" if bad else None


def label_key_ok(key: str) -> bool:
    """``[prefix/]name`` per the Kubernetes label key rules."""
    prefix, _, name = key.rpartition("/")
    return bool(_LABEL_NAME.match(name)) and (not prefix or bool(_DNS_PREFIX.match(prefix)))


def label_value_ok(value: str) -> bool:
    return bool(_LABEL_VALUE.match(value))


__all__ = ["check_bool", "check_count", "check_max_unavailable", "check_selector",
           "check_version", "label_key_ok", "label_value_ok", "parse_max_unavailable"]
