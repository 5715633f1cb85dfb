"""What this user may do, asked once up front with SelfSubjectAccessReview.

Why up front: an operator should see a greyed "Drain (denied: create pods/eviction)" in the
palette, not discover RBAC halfway through a drain. Each distinct permission the registered
actions declare is asked once; an action is available when all of its permissions are.
Read-only mode asks nothing (a review is a POST) and greys everything.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from gputui.actions.base import Action, ClusterWriter, Permission, WriteError

READ_ONLY_REASON = "read-only mode (--read-only): gputui sends no writes"


@dataclass(frozen=True)
class Permissions:
    """The answers: permission -> (allowed, reason), plus read-only mode."""

    answers: Mapping[Permission, tuple[bool, str]] = field(default_factory=dict)
    read_only: bool = False
    #: True until the reviews have been asked (actions wait, they are not denied)
    pending: bool = False

    def blocked(self, action: Action) -> str | None:
        """Why ``action`` cannot run now (read-only, denied, unknown), or None."""
        if self.read_only:
            return READ_ONLY_REASON
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
