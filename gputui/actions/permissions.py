"""What this user may do, asked once up front with SelfSubjectAccessReview.

Why up front: an operator should see a greyed "Drain (denied: create pods/eviction)" in the
palette, not discover RBAC halfway through a drain. Each distinct permission the registered
actions declare is asked once; an action is available when all of its permissions are.
Read-only mode asks nothing (a review is a POST) and greys everything.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gputui.actions.audit import FROM_KUBECONFIG, FROM_SERVER, Identity
from gputui.actions.base import Action, ClusterWriter, Permission, WriteError

_log = logging.getLogger(__name__)
READ_ONLY_REASON = "read-only mode (--read-only): gputui sends no writes"


@dataclass(frozen=True)
class Permissions:
    """The answers: permission -> (allowed, reason), plus read-only mode."""

    answers: Mapping[Permission, tuple[bool, str]] = field(default_factory=dict)
    read_only: bool = False
    #: True until the reviews have been asked (actions wait, they are not denied)
    pending: bool = False
    #: what a greyed action says in read-only mode (the flag, or a read-only context)
    read_only_reason: str = READ_ONLY_REASON

    def blocked(self, action: Action) -> str | None:
        """Why ``action`` cannot run now (read-only, denied, unknown), or None."""
        if self.read_only:
            return self.read_only_reason
        if self.pending:
            return None
        for permission in action.permissions:
            allowed, reason = self.answers.get(permission, (False, "not checked"))
            if not allowed:
                why = f": {reason}" if reason else ""
                return f"denied: {permission.describe()}{why}"
        return None


def check_permissions(writer: ClusterWriter, permissions: Iterable[Permission]) -> Permissions:
    """Ask the server about each permission; a failed review denies with its reason."""
    if writer.read_only:
        return Permissions(read_only=True)
    answers: dict[Permission, tuple[bool, str]] = {}
    for permission in permissions:
        if permission in answers:
            continue
        try:
            answers[permission] = writer.can_i(permission)
        except WriteError as error:
            # fail closed: a review that failed or could not be read greys the action
            answers[permission] = (False, f"could not read permission: {error.reason}")
    return Permissions(answers)


def ask_identity(writer: ClusterWriter) -> Identity:
    """Who the audit log names: the server's answer to a SelfSubjectReview, else the
    kubeconfig entry's name marked ``kubeconfig`` (read-only mode asks nothing: a POST)."""
    fallback = Identity(writer.user, FROM_KUBECONFIG)
    if writer.read_only:
        return fallback
    try:
        identity = writer.who_am_i()
    except WriteError as error:
        _log.info("SelfSubjectReview failed (%s); the audit log names the kubeconfig user %r",
                  error.reason, writer.user)
        return fallback
    if identity is None:
        _log.info("SelfSubjectReview answered no usable username; the audit log names the "
                  "kubeconfig user %r", writer.user)
        return fallback
    return Identity(identity.username, FROM_SERVER)
