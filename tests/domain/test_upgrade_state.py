"""The upgrade states' one home (``gputui/domain/upgrade_state.py``): lane order, classes and
slots as upstream counts them (k8s-operator-libs ``GetUpgradesInProgress``: every managed
node but those in ``""``, ``upgrade-done`` and ``upgrade-required``)."""

from __future__ import annotations

from gputui.domain.upgrade_slots import compute_slots
from gputui.domain.upgrade_state import (
    LANES,
    UpgradeClass,
    UpgradeState,
    holds_slot,
    in_step,
    lane_index,
    mid_upgrade,
    upgrade_class,
)

STEPS = (UpgradeState.CORDON, UpgradeState.WAIT_JOBS, UpgradeState.POD_DELETION,
         UpgradeState.DRAIN, UpgradeState.POD_RESTART, UpgradeState.VALIDATION,
         UpgradeState.UNCORDON)


def test_the_eleven_label_values_and_their_lane_order() -> None:
    """The lanes run the way a node moves, done and failed after the steps, unevaluated
    last; a member is its label text."""
    assert [s.value for s in LANES] == [
        "upgrade-required", "cordon-required", "wait-for-jobs-required",
        "pod-deletion-required", "drain-required", "pod-restart-required",
        "validation-required", "uncordon-required", "upgrade-done", "upgrade-failed", ""]
    assert [s.lane for s in LANES] == list(range(11))
    assert UpgradeState.FAILED == "upgrade-failed" and f"{UpgradeState.DRAIN}" == "drain-required"
    assert lane_index("upgrade-done") == UpgradeState.DONE.lane
    assert lane_index("something-newer") == len(LANES)


def test_classes_and_slots_follow_upstream() -> None:
    assert {s for s in UpgradeState if not s.holds_slot} == {
        UpgradeState.UNKNOWN, UpgradeState.DONE, UpgradeState.REQUIRED}
    assert UpgradeState.FAILED.holds_slot  # a failed node keeps its slot until fixed
    assert [s.kind for s in STEPS] == [UpgradeClass.ACTIVE] * len(STEPS)
    assert UpgradeState.REQUIRED.kind is UpgradeClass.WAITING
    assert UpgradeState.FAILED.kind is UpgradeClass.FAILED
    assert UpgradeState.DONE.kind is UpgradeState.UNKNOWN.kind is UpgradeClass.IDLE


def test_a_value_this_build_does_not_know_holds_a_slot_and_explains_nothing() -> None:
    assert UpgradeState.parse("upgrade-paused") is None
    assert upgrade_class("upgrade-paused") is UpgradeClass.FOREIGN
    assert holds_slot("upgrade-paused") and mid_upgrade("upgrade-paused")
    assert not in_step("upgrade-paused")


def test_the_predicates_on_labels_agree_with_the_members() -> None:
    for state in UpgradeState:
        assert holds_slot(state.value) == state.holds_slot
        assert in_step(state.value) == (state in STEPS)
        assert mid_upgrade(state.value) == (state in STEPS)


def test_slots_count_every_holder_an_unknown_value_included() -> None:
    states = {"a": "", "b": "upgrade-done", "c": "upgrade-required", "d": "upgrade-failed",
              "e": "drain-required", "f": "upgrade-paused"}
    assert compute_slots(states, [], 4, "100%").in_progress == 3
