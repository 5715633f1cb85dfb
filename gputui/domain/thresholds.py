"""Grace periods: how long a normal stage may last before it becomes a finding.

This module is the ONE place these numbers live. Each default is derived from a timeout or a
probe that upstream itself uses, named beside it, so a finding can quote where its limit comes
from ("normal up to 21 min: the driver container's startup probe"). ``gputui.settings`` takes
its ``Thresholds`` from here (users may override each field); the domain never imports
settings and accepts any object with these attributes (:class:`ThresholdsLike`).

Upstream sources (read at the commits the project's domain reference lists, gpu-operator.md §0):

* ``gpu-operator: assets/state-driver/0500_daemonset.yaml``: ``nvidia-driver-ctr``
  startupProbe ``initialDelaySeconds: 60``, ``periodSeconds: 10``, ``failureThreshold: 120``:
  the kubelet gives the driver 60 + 120 x 10 = 1260 s (21 min) to build and load before it
  restarts the container. Until then a compiling driver is normal.
* ``gpu-operator: cmd/nvidia-validator/main.go``: ``cuda-validation`` waits 60 x 5 s (5 min)
  for its pod; ``plugin-validation`` retries 30 x 5 s for node capacity. The longer, 5 min,
  is the validator's own budget once what it waits on is ready.
* Kubernetes ``DefaultNotReadyTolerationSeconds`` (300 s): pods tolerate a NotReady node for
  5 minutes before eviction; a reboot shorter than that is routine.
* ``k8s-operator-libs: pkg/upgrade`` step limits (validation 600 s, podDeletion/drain 300 s by
  default, the driver's 21 min startup budget in ``pod-restart-required``) and the upgrade
  controller's 2-minute requeue (``gpu-operator: controllers/upgrade_controller.go``): a node
  past 30 min in one step is past every one of them.
* ``mig-parted: pkg/mig/reconfigure``: mig-manager gives GPU clients 5 min to stop, then
  applies the layout; 10 min covers both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Protocol

#: the driver container's startup probe budget: 60 s delay + 120 failures x 10 s
DRIVER_STARTUP_PROBE_SECONDS = 60 + 120 * 10
#: cuda-validation's wait for its pod: 60 tries x 5 s
VALIDATOR_BUDGET_SECONDS = 60 * 5
#: Kubernetes' default NoExecute toleration of node.kubernetes.io/not-ready
NOT_READY_TOLERATION_SECONDS = 300
#: the upgrade controller's periodic requeue (``plannedRequeueInterval``)
UPGRADE_REQUEUE_SECONDS = 120
#: mig-manager's wait for GPU clients to stop before it reconfigures
MIG_CLIENT_STOP_SECONDS = 300
#: how long a ClusterPolicy may still say notReady after the last operand pod became ready:
#: the controller requeues every 5 s while a state is not ready
#: (``gpu-operator: controllers/clusterpolicy_controller.go``, ``Reconcile``), after the
#: DaemonSet controller has counted the pod; a minute covers both and the moments between
#: gputui's own reads (the policy is listed before the pods)
POLICY_CATCH_UP_SECONDS = 60


class ThresholdsLike(Protocol):
    """How long a state may last before it becomes a finding, in minutes."""

    @property
    def driver_startup_minutes(self) -> float: ...

    @property
    def validator_stuck_minutes(self) -> float: ...

    @property
    def operand_not_ready_minutes(self) -> float: ...

    @property
    def node_not_ready_minutes(self) -> float: ...

    @property
    def upgrade_stalled_minutes(self) -> float: ...

    @property
    def mig_pending_minutes(self) -> float: ...


@dataclass(frozen=True, slots=True)
class DomainThresholds:
    """The defaults, each from the upstream limit named in the module docstring."""

    #: driver pod not ready (building, loading) for longer is ``driver-pod-failing``
    driver_startup_minutes: float = DRIVER_STARTUP_PROBE_SECONDS / 60.0
    #: validator in one init container longer than this past its dependency's own grace
    validator_stuck_minutes: float = VALIDATOR_BUDGET_SECONDS / 60.0
    #: another operand not ready for longer, once what it waits on is not the cause
    operand_not_ready_minutes: float = 2 * VALIDATOR_BUDGET_SECONDS / 60.0
    #: a NotReady node is routine (a reboot) this long, then a warning
    node_not_ready_minutes: float = NOT_READY_TOLERATION_SECONDS / 60.0
    #: an upgrade step, or ``upgrade-required`` that cannot proceed, held longer is stalled
    upgrade_stalled_minutes: float = 30.0
    #: ``nvidia.com/mig.config.state=pending`` for longer is a finding
    mig_pending_minutes: float = 2 * MIG_CLIENT_STOP_SECONDS / 60.0
    #: an XID that appeared within this window has its meaning's severity; an older one, or
    #: one of unknown age, is ``info`` (not an upstream limit: how far back "current" reaches)
    xid_lookback_minutes: float = 60.0
    #: a joining node still without an allocatable GPU this long is ``slow-gpu-join`` while
    #: its pool has too few timed joins for its own p90 x 2 to say (not an upstream limit:
    #: a join takes about 5 to 10 min when the driver compiles on the node)
    slow_join_minutes: float = 15.0
    #: timed joins a pool needs (in the window) before its p90 x 2 is the limit (a count)
    slow_join_min_joins: int = 5
    #: the window of joins the per-pool time-to-GPU figures are taken over
    join_window_days: float = 7.0
    #: a node label naming the node's pool, tried before the providers' own
    #: (``cloud.google.com/gke-nodepool``, ``eks.amazonaws.com/nodegroup``...); "" for none
    pool_label: str = ""
    #: GPU health (not upstream limits; see ``gputui.domain.findings_health``): the window
    #: the rate counters (PCIe replays, NVLink errors, throttle time) are measured over;
    #: memory errors are counted over ``xid_lookback_minutes``
    health_window_minutes: float = 10.0
    #: PCIe replays a minute above which the link is degrading (``pcie-replays``)
    pcie_replays_per_minute: float = 8.0
    #: NVLink CRC/replay/recovery errors a minute above which ``nvlink-errors`` fires
    #: (0: any rise)
    nvlink_errors_per_minute: float = 0.0
    #: the share of the window a GPU spent throttled (0..1) from which ``gpu-throttled``
    #: fires, once the throttling was seen over at least ``throttle_minutes``
    throttle_fraction: float = 0.25
    throttle_minutes: float = 5.0
    #: without violation counters: GPU and memory temperatures (°C) that count as the
    #: slowdown threshold (H100/A100 report a GPU max operating temperature of 85-87 °C
    #: and a memory one of 95 °C in ``nvidia-smi -q``)
    throttle_temp_c: float = 87.0
    throttle_memory_temp_c: float = 95.0


DEFAULT_THRESHOLDS = DomainThresholds()

#: where each grace period comes from, quoted in findings' messages
SOURCES: dict[str, str] = {
    "driver_startup_minutes": "the driver container's startup probe",
    "validator_stuck_minutes": "the validator's 60 x 5 s budget",
    "operand_not_ready_minutes": "twice the validator's budget",
    "node_not_ready_minutes": "Kubernetes' 300 s not-ready toleration",
    "upgrade_stalled_minutes": "past every upgrade step's own limit",
    "mig_pending_minutes": "mig-manager's 5 min wait for GPU clients, twice",
    "xid_lookback_minutes": "gputui's XID lookback (a setting)",
    "slow_join_minutes": "gputui's limit for a join while the pool has few (a setting)",
    "slow_join_min_joins": "joins a pool needs for its own p90 (a setting)",
    "join_window_days": "the window of the time-to-GPU figures (a setting)",
    "pool_label": "the node label naming its pool (a setting)",
    "health_window_minutes": "the window of the GPU health counters (a setting)",
    "pcie_replays_per_minute": "gputui's PCIe replay rate limit (a setting)",
    "nvlink_errors_per_minute": "gputui's NVLink error rate limit (a setting)",
    "throttle_fraction": "the share of time throttled that counts (a setting)",
    "throttle_minutes": "how long throttling must last (a setting)",
    "throttle_temp_c": "the GPU slowdown temperature (a setting)",
    "throttle_memory_temp_c": "the memory slowdown temperature (a setting)",
}


#: the GPU health thresholds that must be above zero (a zero window measures nothing)
_POSITIVE = ("health_window_minutes", "throttle_minutes", "throttle_fraction")


def threshold_problem(thresholds: ThresholdsLike) -> str | None:
    """Why ``thresholds`` cannot be used (one line), or None: every number finite and not
    negative, the health windows above zero and ``throttle_fraction`` at most 1."""
    for f in fields(DomainThresholds):
        value = getattr(thresholds, f.name, None)
        if isinstance(value, bool) or not isinstance(value, float | int):
            continue
        if not math.isfinite(value) or value < 0:
            return f"threshold {f.name!r}: must be a finite number >= 0, not {value!r}"
        if f.name in _POSITIVE and value <= 0:
            return f"threshold {f.name!r}: must be above 0"
    if getattr(thresholds, "throttle_fraction", 0.0) > 1:
        return "threshold 'throttle_fraction': a share of the time, at most 1"
    return None


def thresholds_from_json(raw: object, base: DomainThresholds) -> DomainThresholds:
    """``base`` with the fields ``raw`` (a recording's header) sets to usable values: a
    finite number >= 0 for the numeric ones (a whole one for a count: a recording made
    before counts were ints says ``5.0``), a string for ``pool_label``; anything else in
    ``raw`` is left out (a damaged or foreign header changes nothing)."""
    if not isinstance(raw, dict):
        return base
    changes: dict[str, float | int | str] = {}
    for name, kind in ((f.name, type(getattr(base, f.name))) for f in fields(base)):
        value = raw.get(name)
        number = _usable_number(value)
        if kind is str and isinstance(value, str):
            changes[name] = value
        elif kind is float and number is not None:
            changes[name] = number
        elif kind is int and number is not None and number.is_integer():
            changes[name] = int(number)
    return replace(base, **changes)  # type: ignore[arg-type]


def _usable_number(value: object) -> float | None:
    """``value`` as a finite float >= 0, else None (a bool, text, NaN, or an int too big
    for a float such as a crafted 10**400)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def thresholds_to_json(thresholds: ThresholdsLike) -> dict[str, float | int | str]:
    """The fields of ``thresholds`` as a recording's header holds them."""
    return {f.name: getattr(thresholds, f.name) for f in fields(DomainThresholds)
            if hasattr(thresholds, f.name)}
