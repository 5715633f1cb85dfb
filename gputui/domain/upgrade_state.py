"""The driver upgrade states (``nvidia.com/gpu-driver-upgrade-state``, §4.1 to §4.5), once.

Every question gputui asks of a node's upgrade state is answered here: which lane it sits in
and in what order the lanes run, whether it holds one of the controller's slots, and its
class (idle, waiting for a slot, in a step, failed). Before this module six places sorted the
states into those classes by hand and two listed the lanes in different orders; a test
(``tests/domain/test_upgrade_state.py``) fails if a second list of state labels appears.

Upstream (k8s-operator-libs ``pkg/upgrade/common_manager.go``): the upgrades in progress are
the managed nodes in any state but ``""``, ``upgrade-done`` and ``upgrade-required``, so an
``upgrade-failed`` node keeps its slot until it is fixed (§4.5).

A label value this build does not know (a newer operator, a hand edit) parses to no member;
:func:`upgrade_class` calls it :attr:`UpgradeClass.FOREIGN`: it holds a slot (upstream counts
every state but the three idle ones), it is never read as fine, and it never explains GPUs
gone missing as a step of the upgrade would.
"""

from __future__ import annotations

from enum import Enum, StrEnum


class UpgradeClass(Enum):
    """What a state means for the node and for the upgrade's slots."""

    #: not evaluated yet, or done: nothing to do
    IDLE = "idle"
    #: ``upgrade-required``: queued for a slot, the node still serves
    WAITING = "waiting"
    #: a step of the upgrade (cordon ... uncordon): the controller has the node's GPUs
    ACTIVE = "active"
    #: ``upgrade-failed``: stays cordoned and holds its slot until fixed
    FAILED = "failed"
    #: a value this build does not know: holds a slot, never read as fine
    FOREIGN = "foreign"

    @property
    def holds_slot(self) -> bool:
        """Whether a node in this class counts against ``maxParallelUpgrades``."""
        return self in (UpgradeClass.ACTIVE, UpgradeClass.FAILED, UpgradeClass.FOREIGN)


class UpgradeState(StrEnum):
    """One value of the upgrade state label, declared in lane order: the order a node moves
    through them, done and failed after the steps, ``""`` (not yet evaluated) last.

    A member equals its label text (``UpgradeState.FAILED == "upgrade-failed"``), so a
    node's label is compared and looked up without converting it.
    """

    REQUIRED = "upgrade-required"
    CORDON = "cordon-required"
    WAIT_JOBS = "wait-for-jobs-required"
    POD_DELETION = "pod-deletion-required"
    DRAIN = "drain-required"
    POD_RESTART = "pod-restart-required"
    VALIDATION = "validation-required"
    UNCORDON = "uncordon-required"
    DONE = "upgrade-done"
    FAILED = "upgrade-failed"
    UNKNOWN = ""

    @classmethod
    def parse(cls, label: str) -> UpgradeState | None:
        """The member for a label value, None for a value this build does not know."""
        return _BY_LABEL.get(label)

    @property
    def kind(self) -> UpgradeClass:
        """The state's class."""
        if self in (UpgradeState.UNKNOWN, UpgradeState.DONE):
            return UpgradeClass.IDLE
        if self is UpgradeState.REQUIRED:
            return UpgradeClass.WAITING
        if self is UpgradeState.FAILED:
            return UpgradeClass.FAILED
        return UpgradeClass.ACTIVE

    @property
    def holds_slot(self) -> bool:
        """Whether a node in this state counts against ``maxParallelUpgrades`` (§4.5)."""
        return self.kind.holds_slot

    @property
    def lane(self) -> int:
        """The lane's place, 0 first (:data:`LANES`)."""
        return _LANE[self]


#: every state, in lane order (the lanes view, the summary's counts, the domain's lanes)
LANES: tuple[UpgradeState, ...] = tuple(UpgradeState)
_BY_LABEL: dict[str, UpgradeState] = {state.value: state for state in UpgradeState}
_LANE: dict[UpgradeState, int] = {state: index for index, state in enumerate(LANES)}


def upgrade_class(label: str) -> UpgradeClass:
    """The class of any label value; :attr:`UpgradeClass.FOREIGN` for one not known."""
    state = UpgradeState.parse(label)
    return state.kind if state is not None else UpgradeClass.FOREIGN


def holds_slot(label: str) -> bool:
    """Whether a node with this label value counts against ``maxParallelUpgrades``: every
    value but ``""``, ``upgrade-done`` and ``upgrade-required`` (an unknown value too)."""
    return upgrade_class(label).holds_slot


def in_step(label: str) -> bool:
    """The controller has taken the node's GPUs away on purpose (cordon ... uncordon): the
    state explains a cordon or GPUs gone; failed and unknown values explain nothing."""
    return upgrade_class(label) is UpgradeClass.ACTIVE


def mid_upgrade(label: str) -> bool:
    """The node is somewhere in the upgrade's steps and moves on by itself: a step, or a
    value not known (never read as settled); not idle, waiting or failed."""
    return upgrade_class(label) in (UpgradeClass.ACTIVE, UpgradeClass.FOREIGN)


def lane_index(label: str) -> int:
    """A label's lane place for sorting; a value not known sorts after every lane."""
    state = UpgradeState.parse(label)
    return state.lane if state is not None else len(LANES)
