"""Which upgrade step failed, read from a node's GPUDriverUpgrade events (§4.1, §4.4)."""

from __future__ import annotations

from typing import Any

from gputui.domain.upgrade_events import failure_summary, last_events


def _event(node: str, message: str, at: str, kind: str = "Normal") -> dict[str, Any]:
    return {"kind": "Event", "reason": "GPUDriverUpgrade", "type": kind, "message": message,
            "involvedObject": {"kind": "Node", "name": node}, "lastTimestamp": at,
            "metadata": {"namespace": "default", "name": f"{node}.{at}"}}


def _moved(node: str, state: str, at: str) -> dict[str, Any]:
    return _event(node, f"Successfully updated node state label to {state}", at)


def test_the_step_before_upgrade_failed_is_the_step_that_failed() -> None:
    events = [_moved("n1", "cordon-required", "2026-01-01T10:00:00Z"),
              _moved("n1", "upgrade-failed", "2026-01-01T10:30:00Z"),
              _moved("n1", "pod-restart-required", "2026-01-01T10:05:00Z")]
    latest = last_events(events)["n1"]
    assert latest.message.endswith("upgrade-failed")
    assert latest.previous_state == "pod-restart-required"
    summary = failure_summary(latest)
    assert summary.startswith("in pod-restart-required:")
    assert "more than 10 times" in summary


def test_a_warning_event_since_the_failed_step_is_the_cause() -> None:
    events = [_moved("n1", "drain-required", "2026-01-01T10:00:00Z"),
              _event("n1", "Failed to drain the node, timed out waiting", "2026-01-01T10:20:00Z",
                     "Warning"),
              _moved("n1", "upgrade-failed", "2026-01-01T10:20:01Z"),
              _event("n2", "Failed to drain the node, older", "2026-01-01T09:00:00Z",
                     "Warning")]
    latest = last_events(events)["n1"]
    assert failure_summary(latest) == "in drain-required: Failed to drain the node, timed out waiting"


def test_with_only_the_move_to_failed_left_the_step_is_unknown() -> None:
    """Only "Successfully updated node state label to upgrade-failed" is left once the step's
    events expired (the API server keeps events 1 h): quoting it named no step and read as
    a cause. k8s-operator-libs ``pkg/upgrade/node_upgrade_state_provider.go`` writes that
    message for every state change, failed included. (Was: the message quoted as is.)"""
    latest = last_events([_moved("n1", "upgrade-failed", "2026-01-01T10:00:00Z")])["n1"]
    assert latest.previous_state == ""
    summary = failure_summary(latest)
    assert summary.startswith("(step unknown") and "expired" in summary
    assert "Successfully updated" not in summary
    assert failure_summary(None) == ""


def test_a_lone_warning_event_is_still_the_cause() -> None:
    latest = last_events([_event("n1", "Failed to drain the node, timed out", "2026-01-01T10:00:00Z",
                                 "Warning")])["n1"]
    assert failure_summary(latest) == "Failed to drain the node, timed out"


def test_the_annotation_removal_after_a_validation_timeout_is_not_the_cause() -> None:
    """k8s-operator-libs ``pkg/upgrade/validation_manager.go`` ``handleTimeout`` moves the node
    to upgrade-failed, then removes its validation-start-time annotation, which records
    "Successfully updated node annotation to ...=null": the newest event, never a cause."""
    key = "nvidia.com/gpu-driver-upgrade-validation-start-time"
    events = [_moved("n1", "validation-required", "2026-01-01T10:00:00Z"),
              _moved("n1", "upgrade-failed", "2026-01-01T10:10:01Z"),
              _event("n1", f"Successfully updated node annotation to {key}=null",
                     "2026-01-01T10:10:02Z")]
    latest = last_events(events)["n1"]
    assert latest.previous_state == "validation-required"
    assert failure_summary(latest).startswith("in validation-required: the validator")
    alone = last_events(events[1:])["n1"]
    assert failure_summary(alone).startswith("(step unknown")
