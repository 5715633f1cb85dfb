"""Who the API server says we are: the answer to a SelfSubjectReview (``kubectl auth whoami``).

Why ask: the kubeconfig entry's name (``gke_proj_zone_cluster``, ``admin``) is a local label,
not an identity; the server's username (``alice@example.com``,
``system:serviceaccount:ops:gputui``) is what its own audit log records, so gputui's audit log
can be matched against it. The answer is parsed as hostile input: any shape gives either a
:class:`ServerIdentity` or ``None`` (the caller then falls back to the kubeconfig name and
says so), never an exception.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any

#: POST here with ``{"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}``
PATH = "/apis/authentication.k8s.io/v1/selfsubjectreviews"
#: longer names are not a username a real authenticator produces
MAX_NAME = 512
MAX_GROUPS = 256


@dataclass(frozen=True)
class ServerIdentity:
    """``status.userInfo`` of a SelfSubjectReview: username, uid and groups."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()


def _clean(value: Any) -> str | None:
    """A printable string of sensible length, or None (control characters, wrong type)."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME:
        return None
    if any(unicodedata.category(ch).startswith("C") for ch in value):
        return None
    return value


def parse_self_subject_review(document: Any) -> ServerIdentity | None:
    """The identity in a SelfSubjectReview answer, or None when it holds no usable username.

    Groups and uid are optional and dropped when odd; the username alone decides.
    """
    if not isinstance(document, dict):
        return None
    status = document.get("status")
    info = status.get("userInfo") if isinstance(status, dict) else None
    if not isinstance(info, dict):
        return None
    username = _clean(info.get("username"))
    if username is None:
        return None
    raw_groups = info.get("groups")
    groups = tuple(g for g in (_clean(item) for item in raw_groups[:MAX_GROUPS])
                   if g is not None) if isinstance(raw_groups, list) else ()
    return ServerIdentity(username, _clean(info.get("uid")) or "", groups)
