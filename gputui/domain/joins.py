"""Time to GPU for one node: from joining to its first allocatable GPU, stage by stage.

A node that boots in a minute may take several more before it can host GPU work: the driver
container builds and loads the driver (its startup probe allows 21 min, gpu-operator
``assets/state-driver/0500_daemonset.yaml``), the toolkit configures the runtime, the
validator runs its chain (``driver-validation``, ``toolkit-validation``, ``cuda-validation``;
gpu-operator ``cmd/nvidia-validator/main.go``) and the device plugin registers the GPUs with
the kubelet, which only then lists them as allocatable. Each stage's end is read from what
the cluster records, never estimated:

* the node joined at its ``metadata.creationTimestamp``;
* ``driver`` and ``toolkit`` ended when their pod's ``Ready`` condition turned True (its
  ``lastTransitionTime``; the kubelet moves it only when the status changes), or, for a
  driver or toolkit the host provides (their deploy label ``false``), when the validator's
  ``driver-validation`` / ``toolkit-validation`` init container finished;
* ``validations`` ended when the validator's ``cuda-validation`` finished;
* ``device-plugin`` ended when GPUs became allocatable: the device-plugin pod turning Ready
  (the plugin registers as it starts), else the validator's ``plugin-validation`` finishing
  (it polls the node's capacity), else gputui's own observation of the node going from no
  allocatable GPU to some while it watched.

Records describe the join only if they were made by it: a pod created long after the node
(a driver upgrade, a deleted pod) or one whose containers restarted has moved its times
since, so the join is then ``unknown``, and a node old enough to have joined long before
gputui could see its pods (:data:`JOIN_HORIZON_SECONDS`) is not "joining" when it has no GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gputui.domain.join_model import (
    JOIN_COMING,
    JOIN_DONE,
    JOIN_UNKNOWN,
    STAGE_KEYS,
    NodeJoin,
)
from gputui.domain.nodes import NodeBasics
from gputui.domain.pipeline import operand_pods
from gputui.domain.pods import PodInfo
from gputui.domain.upgrade_state import UpgradeClass, upgrade_class

#: an operand pod made this long after its node joined was not made by the join: the
#: DaemonSet controller creates them as soon as NFD and the operator label the node, a
#: minute or two after it registers (slow image pulls come after creation, not before)
RECORD_SLACK_SECONDS = 15 * 60
#: a node without allocatable GPUs is "joining" only this long after it joined; past that
#: it lost its GPUs (the findings of its pipeline say why), it is not on its way to them
JOIN_HORIZON_SECONDS = 24 * 3600
#: clocks of the API server and the kubelets differ a little; a pod "created" up to this
#: long before its node is still the join's
CLOCK_SKEW_SECONDS = 60

_OPERANDS = ("driver", "container-toolkit", "operator-validator", "device-plugin")


def _by_operand(grouped: Mapping[str, Sequence[PodInfo]]) -> dict[str, PodInfo]:
    """The live pod of each of the four operands that lead to an allocatable GPU (from the
    node's pods grouped by :func:`~gputui.domain.pipeline.operand_pods`)."""
    chosen: dict[str, PodInfo] = {}
    for operand, group in grouped.items():
        live = [p for p in group if not p.deleting]
        if operand in _OPERANDS and live:
            chosen[operand] = max(live, key=lambda p: p.created or 0.0)
    return chosen


def _trusted(pod: PodInfo | None, joined: float) -> PodInfo | None:
    """``pod`` when its records are the join's: made with it and never restarted."""
    if pod is None or pod.created is None or pod.restarts:
        return None
    if not joined - CLOCK_SKEW_SECONDS <= pod.created <= joined + RECORD_SLACK_SECONDS:
        return None
    return pod


def _init_done(pod: PodInfo | None, name: str) -> tuple[bool, float | None]:
    """Whether the init container ``name`` of ``pod`` finished, and when."""
    for container in pod.init_containers if pod is not None else ():
        if container.name == name:
            return container.done, container.finished_at if container.done else None
    return False, None


def _ended(pod: PodInfo | None, validator: PodInfo | None, check: str,
           trusted: Mapping[str, PodInfo | None], operand: str) -> tuple[bool, float | None]:
    """Whether a driver/toolkit stage ended, and when (its pod's Ready transition, else the
    validator's check of it, which is also how a host-provided one is seen)."""
    if pod is not None and pod.ready:
        own = trusted.get(operand)
        return True, own.ready_since if own is not None else None
    done, _ = _init_done(validator, check)
    if done:
        _, when = _init_done(trusted.get("operator-validator"), check)
        return True, when
    return False, None


def _stage_ends(pods: Mapping[str, PodInfo], joined: float, allocatable: bool,
                observed_at: float | None) -> tuple[list[bool], list[float | None], bool]:
    """Per stage: reached, when (None: not recorded), and whether the last end is gputui's
    own observation."""
    trusted = {op: _trusted(pods.get(op), joined) for op in _OPERANDS}
    validator = pods.get("operator-validator")
    reached: list[bool] = []
    ends: list[float | None] = []
    for operand, check in (("driver", "driver-validation"),
                           ("container-toolkit", "toolkit-validation")):
        done, when = _ended(pods.get(operand), validator, check, trusted, operand)
        reached.append(done)
        ends.append(when)
    done, _ = _init_done(validator, "cuda-validation")
    reached.append(done)
    ends.append(_init_done(trusted["operator-validator"], "cuda-validation")[1])
    reached.append(allocatable)
    plugin = trusted["device-plugin"]
    end = plugin.ready_since if allocatable and plugin is not None and plugin.ready else None
    if allocatable and end is None:
        end = _init_done(trusted["operator-validator"], "plugin-validation")[1]
    observed = allocatable and end is None and observed_at is not None
    ends.append(observed_at if observed else end)
    return reached, ends, observed


def node_join(joined: float | None, pods: Sequence[PodInfo], allocatable: int,
              observed_at: float | None, now: float, upgrade_state: str = "",
              gpu_counted: bool = False,
              grouped: Mapping[str, Sequence[PodInfo]] | None = None) -> NodeJoin:
    """The node's join as the cluster records it (see the module docstring).

    Args:
        joined: the node's creation time.
        pods: the pods on the node (operand pods are picked by their labels).
        allocatable: GPU resources the node lists as allocatable (GPUs, shares, MIG slices).
        observed_at: when gputui saw the node go from no allocatable GPU to some, if it did.
        now: the clock.
        upgrade_state: the node's ``nvidia.com/gpu-driver-upgrade-state``: a node the upgrade
            controller has taken (or failed) had its GPUs before, it is not joining.
        gpu_counted: GFD has labelled the node's ``nvidia.com/gpu.count``; GFD starts only
            once the driver and toolkit are ready (gpu-operator
            ``assets/gpu-feature-discovery/0500_daemonset.yaml``, init container
            ``toolkit-validation``), so a node that has it and waits for its driver or
            toolkit had them before: it is not on its first way to GPUs.
        grouped: ``operand_pods(pods)`` when the caller has it already; None: grouped here.
    """
    if joined is None:
        return NodeJoin(JOIN_UNKNOWN, why_unknown="the node has no creation time")
    chosen = _by_operand(operand_pods(pods) if grouped is None else grouped)
    reached, ends, observed = _stage_ends(chosen, joined, allocatable > 0, observed_at)
    if allocatable > 0:
        if ends[-1] is None:
            return NodeJoin(JOIN_UNKNOWN, joined, tuple(ends),
                            why_unknown="its operand pods were made or restarted after it joined")
        return NodeJoin(JOIN_DONE, joined, tuple(ends), ends[-1], observed)
    if upgrade_class(upgrade_state) is not UpgradeClass.IDLE:  # none yet, or up to date
        return NodeJoin(JOIN_UNKNOWN, joined,
                        why_unknown=f"no allocatable GPU in a driver upgrade ({upgrade_state})")
    if now - joined > JOIN_HORIZON_SECONDS:
        return NodeJoin(JOIN_UNKNOWN, joined, why_unknown="no allocatable GPU, long after joining")
    if any(p.created is not None and p.created > joined + RECORD_SLACK_SECONDS
           for p in chosen.values()):
        return NodeJoin(JOIN_UNKNOWN, joined,
                        why_unknown="its operand pods were made after it joined")
    if _init_done(chosen.get("operator-validator"), "plugin-validation")[0]:
        return NodeJoin(JOIN_UNKNOWN, joined,
                        why_unknown="its GPUs were allocatable before (plugin-validation passed)")
    stage = next((key for key, done in zip(STAGE_KEYS, reached, strict=True) if not done),
                 STAGE_KEYS[-1])
    if gpu_counted and stage in STAGE_KEYS[:2]:
        return NodeJoin(JOIN_UNKNOWN, joined, why_unknown=f"its {stage} was ready before "
                        "(GFD counted its GPUs): not a first join")
    return NodeJoin(JOIN_COMING, joined, tuple(ends), stage=stage)


class AllocatableObserver:
    """gputui's own observation: when a node it first saw without an allocatable GPU (and
    young enough to be joining) came to have one. Kept across builds for the source's life;
    a node first seen with GPUs, or long after it joined, is never "observed"."""

    def __init__(self) -> None:
        self._short: set[str] = set()
        self._seen: set[str] = set()
        self._at: dict[str, float] = {}

    def fork(self) -> AllocatableObserver:
        """An independent copy (what it saw so far, seen by both from here on)."""
        other = AllocatableObserver()
        other._short, other._seen, other._at = set(self._short), set(self._seen), dict(self._at)
        return other

    def see(self, name: str, node: NodeBasics, now: float) -> float | None:
        """Look at node ``name`` (as :func:`~gputui.domain.nodes.read_basics` read it, once
        for this and its view) at ``now``; when its GPUs were seen to become allocatable, if
        they were."""
        if name in self._at:
            return self._at[name]
        allocatable = node.resources.allocatable > 0
        if name not in self._seen:
            self._seen.add(name)
            created = node.created
            if not allocatable and created is not None and now - created <= JOIN_HORIZON_SECONDS:
                self._short.add(name)
            return None
        if allocatable and name in self._short:
            self._short.discard(name)
            self._at[name] = now
            return now
        return None

    def forget(self, name: str) -> None:
        """The node is gone: a node of the same name later is a new join."""
        self._short.discard(name)
        self._seen.discard(name)
        self._at.pop(name, None)
