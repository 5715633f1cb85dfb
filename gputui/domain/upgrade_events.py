"""Reading a node's ``GPUDriverUpgrade`` events: the latest one and the step that failed.

The upgrade controller announces every state change with an event "Successfully updated
node state label to <state>", and some failures with a ``Warning`` event ("Failed to drain
the node, ..."). A node's state label alone says ``upgrade-failed``; the events before it
say *which step* failed and why, which is what the operator needs to decide on a retry.
Events are not durable: the API server deletes them an hour after their last write
(``--event-ttl``), and the controller keeps no other history. So an event only adds *why*:
the state and since-when come from the node's label and its managedFields time, and when
the events are gone the failed step is simply not named (never guessed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain import labels as L
from gputui.domain.kube import parse_time, sub
from gputui.domain.upgrade_state import UpgradeState
from gputui.domain.views import UpgradeEvent

_STATE_PREFIX = "node state label to "
#: said instead of the failed step when no GPUDriverUpgrade event of the node is left
NO_EVENTS = ("(step unknown: no GPUDriverUpgrade event left; the API server keeps events "
             "1 h after their last write)")
#: said when only the move to upgrade-failed is left: the step's own events have expired
STEP_EXPIRED = ("(step unknown: the events of the step that failed have expired; the API "
                "server keeps events 1 h after their last write)")

#: What failing in each step usually means when no Warning event says more (§4.4).
STEP_FAILURES: Mapping[str, str] = {
    UpgradeState.POD_DELETION: "GPU pods could not all be deleted (unmanaged pod without "
                               "force, emptyDir without deleteEmptyDir, a GPU pod owned by a "
                               "DaemonSet, or the timeout)",
    UpgradeState.DRAIN: "the node could not be drained",
    UpgradeState.POD_RESTART: "the new driver pod kept failing (a container restarted "
                              "more than 10 times)",
    UpgradeState.VALIDATION: "the validator was not ready within 600 s",
    UpgradeState.CORDON: "the node could not be cordoned",
}


def state_named(message: str) -> str | None:
    """The state in "Successfully updated node state label to <state>", else None."""
    at = message.find(_STATE_PREFIX)
    return message[at + len(_STATE_PREFIX):].strip().rstrip(".") if at >= 0 else None


def _when(event: Mapping[str, object]) -> float:
    return (parse_time(event.get("lastTimestamp")) or parse_time(event.get("eventTime"))
            or parse_time(event.get("firstTimestamp"))
            or parse_time(sub(event, "metadata").get("creationTimestamp")) or 0.0)


def _summarise(history: list[tuple[float, Mapping[str, object]]]) -> UpgradeEvent:
    """The newest event of one node, with the state before the latest change and its cause."""
    history.sort(key=lambda item: item[0])
    states = [(i, state_named(str(e.get("message", "")))) for i, (_, e) in enumerate(history)]
    changes = [(i, s) for i, s in states if s]
    previous, entered_at = "", 0
    if len(changes) >= 2:
        entered_at, previous = changes[-2][0], changes[-2][1] or ""
    cause = ""
    for _, event in history[entered_at:]:
        if event.get("type") == "Warning":
            cause = str(event.get("message", ""))
    when, newest = history[-1]
    return UpgradeEvent(str(newest.get("message", "")), when or None,
                        str(newest.get("type", "Normal")), previous, cause)


def last_events(events: Sequence[Mapping[str, object]]) -> dict[str, UpgradeEvent]:
    """The newest ``GPUDriverUpgrade`` event per node name, with the failed step and cause."""
    per_node: dict[str, list[tuple[float, Mapping[str, object]]]] = {}
    for event in events:
        if event.get("reason") != L.UPGRADE_EVENT_REASON:
            continue
        node = str(sub(event, "involvedObject").get("name", ""))
        per_node.setdefault(node, []).append((_when(event), event))
    return {node: _summarise(history) for node, history in per_node.items()}


def failure_summary(event: UpgradeEvent | None) -> str:
    """E.g. "in pod-restart-required: the new driver pod kept failing (...)", or ""."""
    if event is None:
        return ""
    step = event.previous_state if event.previous_state != UpgradeState.FAILED else ""
    why = event.cause or STEP_FAILURES.get(step, "")
    if step and why:
        return f"in {step}: {why}"
    if step:
        return f"in {step}"
    # no Warning says why and the step's own events are gone: what is left ("Successfully
    # updated node state label to upgrade-failed", or the annotation removal that follows a
    # validation timeout) says nothing the state label does not, and would hide that the
    # step is unknown
    return why or STEP_EXPIRED


#: a driver container not ready after more restarts than this fails pod-restart-required
#: (k8s-operator-libs ``pkg/upgrade/common_manager.go``, ``RestartCount > 10``)
POD_RESTART_LIMIT = 10


def inferred_step(restarts: int) -> str:
    """The step a failed node most likely failed in, told by its driver pod when the events
    are gone: a driver container not ready with more than 10 restarts is what fails
    ``pod-restart-required``; "" when the pod says nothing."""
    if restarts <= POD_RESTART_LIMIT:
        return ""
    return (f"(events expired; the driver pod has restarted {restarts} times, over the "
            f"{POD_RESTART_LIMIT} that fail pod-restart-required: most likely that step)")
