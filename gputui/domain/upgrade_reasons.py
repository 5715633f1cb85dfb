"""Why a node in an active upgrade state is not moving on (node-local facts only).

Reasons that need cluster-wide slot math (``upgrade-required``) live in
:mod:`gputui.domain.upgrade`; these need only the node, its pods and the policy, so findings
such as ``upgrade-stalled`` can use them without waiting for the whole cluster.
"""

from __future__ import annotations

from gputui.domain import labels as L
from gputui.domain.kube import parse_epoch
from gputui.domain.model import NodeView, StageStatus, UpgradeEvent, UpgradePolicy
from gputui.domain.timefmt import duration
from gputui.domain.upgrade_state import UpgradeState


def state_since(node: NodeView, event: UpgradeEvent | None) -> float | None:
    """When the node entered its upgrade state: the label's managedFields time, else the
    last ``GPUDriverUpgrade`` event if it names that state ("...label to <state>")."""
    if node.upgrade_since is not None:
        return node.upgrade_since
    if event is not None and node.upgrade_state and node.upgrade_state in event.message:
        return event.time
    return None


def _timeout(start: float | None, limit: int, now: float) -> str:
    if limit <= 0:
        return "timeout: never"
    if start is None:
        return f"timeout: {limit} s (not started)"
    left = start + limit - now
    return f"timeout: in {duration(left)}" if left > 0 else "timeout: expired"


def wait_for_jobs_reason(node: NodeView, policy: UpgradePolicy, now: float) -> str:
    """E.g. "2 pods app=trainer still running (oldest 31 h), timeout: never".

    Counts every pod on the node that the selector matches, GPU or not, Running or Pending
    by phase, terminating ones too, as the controller does (``node.wait_pods``;
    k8s-operator-libs ``pkg/upgrade/pod_manager.go``): "(1 terminating, oldest 2 h)".
    """
    selector = policy.wait_for_completion_selector
    if not selector:
        return "no waitForCompletion selector: moves to pod deletion next cycle"
    running = node.wait_pods
    start = parse_epoch(node.upgrade_annotations.get(L.UPGRADE_WAIT_START))
    timeout = _timeout(start, policy.wait_for_completion_timeout, now)
    if not running:
        return f"no pod {selector} running: moves on next cycle"
    starts = [p.start_time for p in running if p.start_time is not None]
    ending = sum(1 for p in running if p.deleting)
    notes = ([("terminating" if len(running) == 1 else f"{ending} terminating")] if ending
             else []) + ([f"oldest {duration(now - min(starts))}"] if starts else [])
    told = f" ({', '.join(notes)})" if notes else ""
    noun = "pod" if len(running) == 1 else "pods"
    return f"{len(running)} {noun} {selector} still running{told}, {timeout}"


def expected_wait(node: NodeView, policy: UpgradePolicy, now: float) -> bool:
    """The node waits in ``wait-for-jobs-required`` exactly as ``waitForCompletion`` says:
    selected pods still run and no timeout has run out (timeout 0 = wait for the job).
    (``k8s-operator-libs: pkg/upgrade/upgrade_state.go``, ``ProcessWaitForJobsRequiredNodes``.)"""
    if node.upgrade_state != UpgradeState.WAIT_JOBS or not policy.wait_for_completion_selector:
        return False
    if not node.wait_pods:
        return False
    start = parse_epoch(node.upgrade_annotations.get(L.UPGRADE_WAIT_START))
    timeout = policy.wait_for_completion_timeout
    return timeout <= 0 or start is None or now <= start + timeout  # upstream: now > start + t


def pod_restart_reason(node: NodeView) -> str:
    """Driver pod progress against the restartCount > 10 failure rule."""
    stage = node.pipeline.stage("driver")
    if stage is None or stage.pod is None:
        return "waiting for the driver DaemonSet to recreate the driver pod"
    if stage.status is StageStatus.READY:
        return f"driver pod {stage.pod} ready: moves to validation next cycle"
    init_restarts = [s.restarts for s in stage.substages]
    # the >10 rule is per container: init containers are known, the rest is the main one
    worst = max(init_restarts + [stage.restarts - sum(init_restarts)], default=0)
    rule = f"{worst} restarts, fails after {L.POD_RESTART_FAIL_LIMIT}"
    return f"driver pod {stage.pod}: {stage.detail or stage.reason} ({rule})"


def validation_reason(node: NodeView, now: float) -> str:
    """Validator progress and time left of the 600 s limit."""
    stage = node.pipeline.stage("operator-validator")
    detail = "no validator pod" if stage is None or stage.pod is None else (
        stage.detail or stage.reason or "ready")
    start = parse_epoch(node.upgrade_annotations.get(L.UPGRADE_VALIDATION_START))
    if start is None:
        return f"validator: {detail}"
    left = start + L.VALIDATION_TIMEOUT_SECONDS - now
    timing = (f"{duration(left)} left of {L.VALIDATION_TIMEOUT_SECONDS} s" if left > 0
              else "600 s limit passed: fails next cycle")
    return f"validator: {detail}; {timing}"


def active_wait_reason(node: NodeView, policy: UpgradePolicy, now: float) -> str:
    """The reason for every state except ``upgrade-required`` and ``upgrade-failed``."""
    state = node.upgrade_state
    if state == UpgradeState.WAIT_JOBS:
        return wait_for_jobs_reason(node, policy, now)
    if state == UpgradeState.POD_RESTART:
        return pod_restart_reason(node)
    if state == UpgradeState.VALIDATION:
        return validation_reason(node, now)
    if state == UpgradeState.POD_DELETION:
        count = len(node.gpu_pods)
        return (f"deleting {count} GPU pod(s) (timeout {policy.pod_deletion_timeout or 'none'} s"
                f"{', force' if policy.pod_deletion_force else ''})" if count
                else "no GPU pods left: moves to driver restart next cycle")
    if state == UpgradeState.DRAIN:
        return f"draining (timeout {policy.drain_timeout or 'none'} s)"
    if state in (UpgradeState.DONE, UpgradeState.UNKNOWN) and node.driver_outdated:
        return "driver pod out of date: the controller will mark it upgrade-required"
    simple: dict[str, str] = {
        UpgradeState.CORDON: "cordoning", UpgradeState.UNCORDON: "uncordoning",
        UpgradeState.DONE: "", UpgradeState.UNKNOWN: "not yet evaluated by the upgrade controller"}
    return simple.get(state, f"unknown state {state!r}")
