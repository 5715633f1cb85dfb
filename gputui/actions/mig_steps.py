"""The MIG safe path, step by step, for one node (the maintainers' procedure, gpu-operator #262).

1. cordon (a node already cordoned stays cordoned at the end);
2. wait until no Running/Pending pod on the node requests GPUs or MIG slices, or drain the
   node with the drain action (Eviction API, PodDisruptionBudgets honoured);
3. set ``nvidia.com/mig.config`` (clearing ``nvidia.com/mig.config.state``);
4. wait for the MIG manager's ``nvidia.com/mig.config.state``: ``success``, or ``failed``
   (reported with the last lines of the MIG manager's log), or no answer in time;
5. uncordon.

It stops between steps when the operator cancels, and on any failure, leaving the node
cordoned and saying what was done: a node whose layout is half-applied must not take jobs.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from gputui.actions import upgrade_common as U
from gputui.actions.base import (
    ClusterWriter,
    Plan,
    Progress,
    ProgressCallback,
    Result,
    WriteError,
)
from gputui.actions.drain import DEFAULT_TIMEOUT, OPTIONS, DrainAction
from gputui.actions.drain_plan import node_drain
from gputui.actions.guard import LogReader, stop_reason
from gputui.actions.node import cordon_change
from gputui.domain import labels as L
from gputui.domain.model import NodeView

MIG_MANAGER_APP = "nvidia-mig-manager"
MIG_MANAGER_CONTAINER = "nvidia-mig-manager"
LOG_LINES = 12
STEPS = 5

#: what the safe path does about the node's pods: wait for the GPU pods, or drain the
#: node with one of the drain's option sets ("drain" = kubectl's defaults)
GPU_POD_MODES = ("wait", "drain", *(f"drain, {label}" for label in list(OPTIONS)[1:]))


def drain_mode_options(mode: str) -> str | None:
    """The drain option label a mode drains with; None for ``wait``."""
    if mode == "drain":
        return next(iter(OPTIONS))
    label = mode.removeprefix("drain, ")
    return label if mode.startswith("drain, ") and label in OPTIONS else None


def describe(nodes: Sequence[NodeView], config: str, mode: str) -> tuple[str, ...]:
    """The steps in words, naming the GPU pods the wait is for."""
    lines: list[str] = []
    for node in nodes:
        pods = ", ".join(f"{p.namespace}/{p.name}" for p in node.gpu_pods[:6]) or "none now"
        wait = ("drain the node (evictions honour PodDisruptionBudgets)"
                if mode.startswith("drain")
                else "wait until its GPU pods have finished")
        lines += [f"{node.name}:",
                  "  1. cordon" + (" (already cordoned: stays so)" if node.cordoned else ""),
                  f"  2. {wait}: {pods}",
                  f"  3. label {L.MIG_CONFIG}={config}",
                  f"  4. wait for {L.MIG_CONFIG_STATE}=success (failed: the MIG manager's log)",
                  "  5. uncordon" + (" (skipped: was cordoned before)" if node.cordoned else "")]
    return tuple(lines)


class SafePath:
    """One node's run of the safe path; :meth:`run` returns how it ended."""

    def __init__(self, writer: ClusterWriter, progress: ProgressCallback,
                 cancel: threading.Event, node: str, config: str, mode: str,
                 poll_seconds: float, apply_timeout: float, *, was_cordoned: bool,
                 plan: Plan | None = None):
        self.writer, self.progress, self.cancel = writer, progress, cancel
        self.node, self.config, self.mode = node, config, mode
        self.waiter = U.Waiter(cancel, poll_seconds)
        self.apply_timeout = apply_timeout
        self.was_cordoned = was_cordoned
        #: the whole safe-path plan: its drain evicts exactly the pods it lists for the node
        self.plan = plan
        self.done: list[str] = []
        #: the node is cordoned now (by this run or before it): said when a run stops
        self.cordoned = was_cordoned

    def run(self, index: int = 0, of: int = 1) -> Result:
        """Every step in order; the first that does not finish ends the run."""
        self.base = index * STEPS
        self.total = of * STEPS
        try:
            for step in (self._cordon, self._clear_gpus, self._label, self._wait_state,
                         self._uncordon):
                stopped = step()
                if stopped is not None:
                    return stopped
        except WriteError as error:
            return self._stop(f"{self.node}: the server refused", error.reason)
        return Result(ok=True, summary=f"{self.node}: MIG config {self.config} applied",
                      details=tuple(self.done))

    # ------------------------------------------------------------------ steps
    def _say(self, step: int, message: str, waiting: tuple[str, ...] = ()) -> None:
        self.progress(Progress(f"{self.node}: {message}", self.base + step, self.total,
                               waiting=waiting))

    def _stop(self, summary: str, error: str | None = None, *,
              cancelled: bool = False) -> Result:
        left = " (left cordoned)" if self.cordoned else ""
        return Result(ok=False, summary=summary + left, error=error, cancelled=cancelled,
                      details=tuple(self.done),
                      interrupted=stop_reason(self.cancel) if cancelled else None)

    def _cordon(self) -> Result | None:
        if self.was_cordoned:
            self.done.append(f"{self.node}: already cordoned")
            return None
        self._say(0, "cordon")
        self.writer.patch(cordon_change(self.node, True))
        self.cordoned = True
        self.done.append(f"{self.node}: cordoned")
        return None

    def _gpu_pods(self) -> list[str]:
        return [U.pod_ref(p) for p in self.writer.list_pods_on_node(self.node)
                if U.is_gpu_pod(p)]

    def _clear_gpus(self) -> Result | None:
        if self.mode.startswith("drain"):
            return self._drain()
        left: list[str] = []

        def gone() -> bool:
            left[:] = self._gpu_pods()
            # the safe path waits for jobs by design: their pods are waited for, not blocked
            self._say(1, f"waiting for {len(left)} GPU pod(s) to finish",
                      tuple(f"{pod}: still running" for pod in left))
            return not left

        outcome = self.waiter.until(gone)
        if outcome != "done":
            return self._stop(f"{self.node}: stopped while waiting for GPU pods "
                              f"({', '.join(left)})", cancelled=True)
        self.done.append(f"{self.node}: no GPU pods left")
        return None

    def _drain(self) -> Result | None:
        """The drain action (key ``r``, the one drain), on the node this run cordoned, over
        exactly the pods the plan listed for it (the drain stops if the server's differ)."""
        if self.plan is None:
            return self._stop(f"{self.node}: cannot drain", "the plan lists no pods to evict")
        options = drain_mode_options(self.mode) or next(iter(OPTIONS))
        plan = node_drain(self.plan, self.node, options, DEFAULT_TIMEOUT)
        result = DrainAction().apply(plan, self.writer, self.progress, self.cancel)
        self.done.extend(result.details)
        if not result.ok:
            return self._stop(f"{self.node}: drain did not finish: {result.summary}",
                              result.error, cancelled=result.cancelled)
        self.done.append(f"{self.node}: drained")
        return None

    def _label(self) -> Result | None:
        if self.cancel.is_set():
            return self._stop(f"{self.node}: stopped before setting the MIG config",
                              cancelled=True)
        self._say(2, f"set {L.MIG_CONFIG}={self.config}")
        self.writer.patch(U.node_labels_change(
            self.node, {L.MIG_CONFIG: self.config, L.MIG_CONFIG_STATE: None},
            f"label {L.MIG_CONFIG}={self.config}"))
        self.done.append(f"{self.node}: {L.MIG_CONFIG}={self.config} set")
        return None

    def _wait_state(self) -> Result | None:
        state = [""]

        def answered() -> bool:
            state[0] = U.node_labels(self.writer, self.node).get(L.MIG_CONFIG_STATE, "")
            self._say(3, f"MIG manager: {state[0] or 'not started yet'}")
            return state[0] in (L.MIG_STATE_SUCCESS, L.MIG_STATE_FAILED)

        outcome = self.waiter.until(answered, self.apply_timeout)
        if outcome == "cancelled":
            return self._stop(f"{self.node}: stopped while the MIG manager applies "
                              f"{self.config} ({state[0] or 'not started'})", cancelled=True)
        if outcome == "timeout":
            return self._stop(f"{self.node}: no answer from the MIG manager",
                              f"{L.MIG_CONFIG_STATE} is still {state[0] or 'unset'} after "
                              f"{self.apply_timeout:.0f} s; {self._log_hint()}")
        if state[0] == L.MIG_STATE_FAILED:
            return self._stop(f"{self.node}: the MIG manager could not apply {self.config}",
                              f"{L.MIG_CONFIG_STATE}=failed; {self._log_hint()}")
        self.done.append(f"{self.node}: {L.MIG_CONFIG_STATE}=success")
        return None

    def _uncordon(self) -> Result | None:
        if self.was_cordoned:
            return None
        self._say(4, "uncordon")
        self.writer.patch(cordon_change(self.node, False))
        self.done.append(f"{self.node}: uncordoned")
        return None

    # ---------------------------------------------------------------- the log
    def _manager_pod(self) -> tuple[str, str] | None:
        for pod in self.writer.list_pods_on_node(self.node):
            meta = pod.get("metadata") or {}
            if (meta.get("labels") or {}).get(L.APP) == MIG_MANAGER_APP:
                return str(meta.get("namespace", "")), str(meta.get("name", ""))
        return None

    def _log_hint(self) -> str:
        """The MIG manager's last log lines, or the command that shows them."""
        found = self._manager_pod()
        if found is None:
            return "no MIG manager pod runs on the node"
        namespace, pod = found
        command = f"kubectl logs -n {namespace} {pod} -c {MIG_MANAGER_CONTAINER}"
        if not isinstance(self.writer, LogReader):
            return f"see its log: {command}"
        try:
            lines = self.writer.read_log(namespace, pod, MIG_MANAGER_CONTAINER, LOG_LINES)
        except WriteError as error:
            return f"its log could not be read ({error.reason}): {command}"
        tail = " | ".join(line.strip() for line in lines[-LOG_LINES:] if line.strip())
        return f"MIG manager log ({namespace}/{pod}): {tail or '(empty)'}"
