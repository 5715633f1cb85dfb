"""The events the driver upgrade library really records, and nothing else.

k8s-operator-libs ``pkg/upgrade`` records Events (reason ``GetEventReason()``, i.e.
``GPUDriverUpgrade`` for the GPU driver, ``util.go``) only through ``logEvent``/``logEventf``
at these call sites: ``node_upgrade_state_provider.go`` (label and annotation changes: every
successful ``ChangeNodeUpgradeAnnotation`` records "Successfully updated node annotation to
K=V", V being ``null`` for a removal), ``upgrade_inplace.go`` ("..., will retry"),
``drain_manager.go`` (drain scheduled, drained, cordon or drain failed), ``pod_manager.go``
(workload pods deleted or not, the drain fallback, driver pod restart (recorded on the
Pod), job-completion timeouts) and ``validation_manager.go`` (a failure to handle the validation timeout). Every
other outcome (a validation timeout itself, ``GetPodsForDeletion`` refusing pods) is only
logged by the controller. An emulator that invents events teaches operators to look for
something a real cluster never shows, so :func:`known` guards every event the emulator writes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from gputui.sim.operator import keys as K

NORMAL, WARNING = "Normal", "Warning"

# node_upgrade_state_provider.go ChangeNodeUpgradeState / ChangeNodeUpgradeAnnotation
STATE_LABEL_UPDATED = "Successfully updated node state label to {state}"
STATE_LABEL_FAILED = "Failed to update node state label to {state}, {error}"
ANNOTATION_UPDATED = "Successfully updated node annotation to {key}={value}"
ANNOTATION_FAILED = "Failed to update node annotation to {key}={value}: {error}"
#: the patch itself failed (the message has no "to" there, as upstream writes it)
ANNOTATION_PATCH_FAILED = "Failed to update node annotation {key}={value}: {error}"
# upgrade_inplace.go ProcessUpgradeRequiredNodes: the next state could not be decided (the
# restart-only check); the node stays in upgrade-required
RETRY = "{error}, will retry"
# drain_manager.go ScheduleNodesDrain
DRAIN_SCHEDULED = "Scheduling drain of the node"
DRAINED = "Successfully drained the node"
CORDON_FAILED = "Failed to cordon the node, {error}"
DRAIN_FAILED = "Failed to drain the node, {error}"
# pod_manager.go SchedulePodEviction / updateNodeToDrainOrFailed / SchedulePodsRestart /
# HandleTimeoutOnPodCompletions
PODS_DELETED = "Deleted workload pods on the node for the driver upgrade"
PODS_DELETE_FAILED = "Failed to delete workload pods on the node for the driver upgrade, {error}"
DRAIN_FALLBACK = "Pod deletion failed but drain is enabled in spec. Will attempt a node drain"
DRIVER_RESTART_FAILED = "Failed to restart driver pod {error}"
JOB_TIMEOUT_FAILED = "Failed to handle timeout for job completions, {error}"
JOB_ANNOTATION_FAILED = "Failed to remove annotation used to track job completions: {error}"
# validation_manager.go Validate: logEventf with the error as an argument but no verb for it,
# so Go's fmt appends it as "%!(EXTRA string=<error>)", which is what the Event says
VALIDATION_TIMEOUT_FAILED = "Failed to handle timeout for validation state%!(EXTRA string={error})"

#: Every (message template, event type) upstream records, all with reason GPUDriverUpgrade.
UPSTREAM: Mapping[str, str] = {
    STATE_LABEL_UPDATED: NORMAL, STATE_LABEL_FAILED: WARNING,
    ANNOTATION_UPDATED: NORMAL, ANNOTATION_FAILED: WARNING,
    DRAIN_SCHEDULED: NORMAL, DRAINED: NORMAL, CORDON_FAILED: WARNING, DRAIN_FAILED: WARNING,
    PODS_DELETED: NORMAL, PODS_DELETE_FAILED: WARNING, DRAIN_FALLBACK: WARNING,
    DRIVER_RESTART_FAILED: WARNING, JOB_TIMEOUT_FAILED: WARNING,
    JOB_ANNOTATION_FAILED: WARNING, VALIDATION_TIMEOUT_FAILED: WARNING,
    ANNOTATION_PATCH_FAILED: WARNING, RETRY: WARNING,
}
#: The templates upstream records on the driver Pod, not on its Node (``pod_manager.go``
#: ``SchedulePodsRestart``: ``logEventf(m.eventRecorder, pod, ...)``).
ON_POD = frozenset({DRIVER_RESTART_FAILED})


def _pattern(template: str) -> re.Pattern[str]:
    """A template as a full-match regex: each ``{field}`` stands for any text."""
    parts = re.split(r"\{[a-z]+\}", template)
    return re.compile("(?s)" + ".+".join(re.escape(p) for p in parts))


_PATTERNS = tuple((_pattern(t), etype) for t, etype in UPSTREAM.items())


_ON_POD = tuple(_pattern(t) for t in ON_POD)


def known(reason: str, etype: str, message: str, kind: str = "Node") -> bool:
    """Whether upstream records an event with this reason, type and message on an object
    of this ``kind`` (``Node``, or ``Pod`` for :data:`ON_POD`)."""
    if reason != K.UPGRADE_EVENT_REASON:
        return False
    on_pod = any(pattern.fullmatch(message) for pattern in _ON_POD)
    if on_pod != (kind == "Pod"):
        return False
    return any(etype == want and pattern.fullmatch(message) for pattern, want in _PATTERNS)
