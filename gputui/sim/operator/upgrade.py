"""The driver upgrade controller (§4): the in-place state machine of k8s-operator-libs.

Each cycle runs when upstream's controller would (``controllers/upgrade_controller.go``): on
a change of a node's state or skip label, of the ClusterPolicy or the driver DaemonSet, at
the 2-minute requeue, and every 5 s while a pod deletion or drain is retrying; pod changes do
not wake it, so a driver pod turning Ready is noticed at the next of these. Like
``BuildState``/``ApplyState`` it groups the nodes by the state they had when the cycle began
and each step handles its own group, so one node moves one state per cycle (each move is a
label change, which wakes the next cycle). It applies the transitions in the library's order, with ``maxParallelUpgrades``/``maxUnavailable``
slots (§4.5), ``waitForCompletion``, the 600 s validation budget and the restartCount > 10
rule. Every label change emits a ``GPUDriverUpgrade`` Event on the Node (namespace
``default``). A driver DaemonSet that owns fewer pods than ``desiredNumberScheduled`` stops
the whole cycle, as the real ``BuildState`` does; a Pending driver pod with no node counts as
owned and is skipped. ``validation-required`` with no validator pod on the node waits
without starting its clock. GPU-requesting DaemonSet pods on a node make pod deletion fail,
as the counts of gpu-operator's ``gpuPodSpecFilter`` and the drain helper then differ.

Pod deletion and drain (§4.4 steps 5-6) go through :mod:`gputui.sim.operator.evictor`, the
emulated kubectl drain helper: ``podDeletion.force``/``deleteEmptyDir``/``timeoutSeconds`` and
``drain.enable``/``force``/``deleteEmptyDir``/``podSelector``/``timeoutSeconds`` are honoured,
evictions obey PodDisruptionBudgets exactly as the API server's eviction does, and a refused
eviction is retried until the timeout. A pod deletion that cannot finish goes to
``drain-required`` with ``drain.enable``, else ``upgrade-failed``; a failed drain goes to
``upgrade-failed``; a failed eviction or drain leaves a Warning ``GPUDriverUpgrade`` event
saying why. Where the real library only logs (``GetPodsForDeletion`` refusing unmanaged or
emptyDir GPU pods, the validation timeout), so does the emulator: it records only the events
upstream records (:mod:`gputui.sim.operator.upgrade_messages`). Not emulated:
the restart-only shortcut, safe driver load, requestor mode and NVIDIADriver CRs.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from typing import Any

from gputui.sim.operator import evictor
from gputui.sim.operator import keys as K
from gputui.sim.operator import upgrade_messages as M
from gputui.sim.operator.evictor import EvictionJob
from gputui.sim.operator.world import STATUS, World
from gputui.sim.selectors import label_predicate

log = logging.getLogger(__name__)
Obj = dict[str, Any]
PERIOD = 120.0
DEBOUNCE = 2.0


class Upgrader:
    """Runs the upgrade state machine on a period and when kicked."""

    def __init__(self, world: World):
        self.world = world
        self._kick: asyncio.Event | None = None
        self.deleting: dict[str, EvictionJob] = {}   # node -> pod deletion in progress
        self.draining: dict[str, EvictionJob] = {}   # node -> drain in progress

    def kick(self) -> None:
        if self._kick is not None:
            self._kick.set()

    async def run(self) -> None:
        self._kick = asyncio.Event()
        while True:
            wait = evictor.RETRY_S if self.deleting or self.draining else PERIOD
            await self.world.clock.wait(self._kick, wait)
            await self.world.clock.sleep(DEBOUNCE)
            self._kick.clear()
            try:
                self.cycle()
            except Exception:  # broad: a bug in one cycle is logged, the next one retries
                log.exception("upgrade cycle failed")

    # ----------------------------------------------------------------- cycle
    def cycle(self) -> None:
        world = self.world
        spec = world.policy_spec()
        policy = (spec.get("driver") or {}).get("upgradePolicy") or {}
        nodes = {n["metadata"]["name"]: n for n in world.store.list("nodes")[0]}
        if not spec or not policy.get("autoUpgrade") or (spec.get("sandboxWorkloads") or {}).get("enabled"):
            self.deleting.clear()
            self.draining.clear()
            for name, node in nodes.items():
                if K.UPGRADE_STATE in (node["metadata"].get("labels") or {}):
                    world.set_labels(name, {K.UPGRADE_STATE: None}, K.M_OPERATOR)
            return
        ds = world.store.get("daemonsets.apps", "nvidia-driver-daemonset", world.ns)
        pods = world.store.list("pods", world.ns, "app=nvidia-driver-daemonset")[0]
        if ds is None:
            return
        # BuildState: every pod the DaemonSet owns counts, a Pending one with no node too
        owned = [p for p in pods if any(o.get("kind") == "DaemonSet" and o.get("name") == ds[
            "metadata"]["name"] for o in p["metadata"].get("ownerReferences") or [])]
        if ds["status"].get("desiredNumberScheduled", 0) != len(owned):
            log.info("driver DaemonSet should not have unscheduled pods")
            return
        # ... and then skips the Pending pods that have no node
        driver = {p["spec"]["nodeName"]: p for p in pods if p["spec"].get("nodeName")}
        self.rev = world.revisions.get("driver", ("", 0))[0]
        self.policy = policy
        self.nodes = {n: nodes[n] for n in driver if n in nodes}
        self.driver = driver
        self.now = world.clock.now()
        # the state of every node as this pass found it: each ProcessXxx step reads this
        # snapshot, so a node moves at most one state per pass (cordon-required is seen)
        self.found = {n: self.state(n) for n in self.nodes}
        for step in (self._from_done, self._required, self._cordon, self._wait_jobs,
                     self._pod_deletion, self._drain, self._pod_restart, self._failed,
                     self._validation, self._uncordon):
            step()

    # --------------------------------------------------------------- helpers
    def state(self, name: str) -> str:
        return str((self.nodes[name]["metadata"].get("labels") or {}).get(K.UPGRADE_STATE, ""))

    def in_state(self, state: str) -> list[str]:
        """Nodes that were in ``state`` when this pass began (``BuildState``'s grouping)."""
        return sorted(n for n in self.nodes if self.found.get(n) == state)

    def move(self, name: str, state: str, annotations: dict[str, str | None] | None = None) -> None:
        changed = [(k, v) for k, v in (annotations or {}).items() if self.ann(name, k) != v]

        def change(obj: Obj) -> None:
            obj["metadata"].setdefault("labels", {})[K.UPGRADE_STATE] = state
            ann = obj["metadata"].setdefault("annotations", {})
            for key, value in (annotations or {}).items():
                if value is None:
                    ann.pop(key, None)
                else:
                    ann[key] = value
        self.nodes[name] = self.world.write_node(name, change, K.M_OPERATOR) or self.nodes[name]
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.STATE_LABEL_UPDATED.format(state=state))
        for key, value in changed:  # each a ChangeNodeUpgradeAnnotation, after the state
            self._annotated(name, key, value)

    def _annotated(self, name: str, key: str, value: str | None) -> None:
        """The event of a successful ``ChangeNodeUpgradeAnnotation`` (a removal is "null")."""
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.ANNOTATION_UPDATED.format(
            key=key, value="null" if value is None else value))

    def annotate(self, name: str, key: str, value: str | None) -> None:
        changed = self.ann(name, key) != value

        def change(obj: Obj) -> None:
            ann = obj["metadata"].setdefault("annotations", {})
            if value is None:
                ann.pop(key, None)
            else:
                ann[key] = value
        self.nodes[name] = self.world.write_node(name, change, K.M_OPERATOR) or self.nodes[name]
        if changed:
            self._annotated(name, key, value)

    def set_unschedulable(self, name: str, value: bool) -> None:
        def change(obj: Obj) -> None:
            if value:
                obj["spec"]["unschedulable"] = True
            else:
                obj["spec"].pop("unschedulable", None)
        self.nodes[name] = self.world.write_node(name, change, K.M_OPERATOR) or self.nodes[name]

    def ann(self, name: str, key: str) -> str | None:
        return (self.nodes[name]["metadata"].get("annotations") or {}).get(key)

    def cordoned(self, name: str) -> bool:
        return bool(self.nodes[name]["spec"].get("unschedulable"))

    def in_sync(self, name: str) -> bool:
        pod = self.driver.get(name)
        return pod is not None and (pod["metadata"].get("labels") or {}).get(K.REVISION_HASH) == self.rev

    def pod_ready(self, pod: Obj | None) -> bool:
        if pod is None or pod["status"].get("phase") != "Running":
            return False
        return all(c.get("ready") for c in pod["status"].get("containerStatuses", []))

    # ----------------------------------------------------------- transitions
    def _from_done(self) -> None:
        for name in self.in_state(K.S_UNKNOWN) + self.in_state(K.S_DONE):
            if self.driver.get(name) is None:
                # upstream builds the node states from the driver pods (k8s-operator-libs
                # upgrade_state.go BuildState): a node between two driver pods is not judged
                continue
            requested = self.ann(name, K.UPGRADE_REQUESTED_ANN) == "true"
            if not self.in_sync(name) or requested:
                extra: dict[str, str | None] = (
                    {K.INITIAL_UNSCHEDULABLE_ANN: "true"} if self.cordoned(name) else {})
                self.move(name, K.S_REQUIRED, extra)
            elif self.state(name) == K.S_UNKNOWN:
                self.move(name, K.S_DONE)

    def slots(self) -> int:
        states = [self.found.get(n, "") for n in self.nodes]
        total = len(states)
        in_progress = sum(1 for s in states if s not in (K.S_UNKNOWN, K.S_DONE, K.S_REQUIRED))
        max_par = int(self.policy.get("maxParallelUpgrades", 1) or 0)
        available = (max_par - in_progress) if max_par else states.count(K.S_REQUIRED)
        max_unav = _scaled(self.policy.get("maxUnavailable", "25%"), total)
        if max_unav is None:
            log.error("invalid maxUnavailable %r", self.policy.get("maxUnavailable"))
            return -1
        unavailable = sum(1 for n in self.nodes if self.cordoned(n) or not _ready(self.nodes[n])
                          ) + sum(1 for n in self.nodes if self.found.get(n) == K.S_CORDON)
        # GetUpgradesAvailable (k8s-operator-libs pkg/upgrade/common_manager.go): cap at
        # maxUnavailable, none once unavailable >= maxUnavailable, and only the trim to
        # what is left of the budget needs maxUnavailable below the node count
        available = min(available, max_unav)
        if unavailable >= max_unav:
            return 0
        if max_unav < total and unavailable + available > max_unav:
            available = max_unav - unavailable
        return max(0, available)

    def _required(self) -> None:
        slots = self.slots()
        if slots < 0:
            return  # maxUnavailable rejected: the controller errors out of this pass
        for name in self.in_state(K.S_REQUIRED):
            if self.ann(name, K.UPGRADE_REQUESTED_ANN):
                self.annotate(name, K.UPGRADE_REQUESTED_ANN, None)
            labels = self.nodes[name]["metadata"].get("labels") or {}
            if labels.get(K.UPGRADE_SKIP) == "true":
                continue
            if slots > 0:
                slots -= 1  # a pre-cordoned node uses a slot too when there is one
                self.move(name, K.S_CORDON)
            elif self.cordoned(name):
                self.move(name, K.S_CORDON)

    def _cordon(self) -> None:
        for name in self.in_state(K.S_CORDON):
            self.set_unschedulable(name, True)
            self.move(name, K.S_WAIT_JOBS)

    def _wait_jobs(self) -> None:
        wait = self.policy.get("waitForCompletion") or {}
        selector, timeout = wait.get("podSelector") or "", int(wait.get("timeoutSeconds") or 0)
        for name in self.in_state(K.S_WAIT_JOBS):
            if selector:
                match = label_predicate(selector)
                busy = [p for p in self.world.store.list("pods", field_selector=f"spec.nodeName={name}")[0]
                        if match(p) and p["status"].get("phase") in ("Running", "Pending")]
                if busy:
                    if timeout <= 0:
                        continue
                    start = self.ann(name, K.WAIT_START_ANN)
                    if start is None:
                        self.annotate(name, K.WAIT_START_ANN, str(int(self.now)))
                        continue
                    if self.now <= int(start) + timeout:  # upstream: now > start + timeout
                        continue
            self.move(name, K.S_POD_DELETION, {K.WAIT_START_ANN: None})

    def _pod_deletion(self) -> None:
        """Step 5: evict the node's GPU pods (``SchedulePodEviction``)."""
        cfg = self.policy.get("podDeletion") or {}
        self._forget(self.deleting, K.S_POD_DELETION)
        for name in self.in_state(K.S_POD_DELETION):
            pods, errors = evictor.pods_for_deletion(
                self.world, name, evictor.gpu_pod, force=bool(cfg.get("force")),
                delete_empty_dir=bool(cfg.get("deleteEmptyDir")))
            if name not in self.deleting:
                daemon = evictor.daemonset_gpu_pods(self.world, name)
                if daemon:
                    # gpuPodSpecFilter counts them, the drain helper skips them: the counts
                    # differ and the library gives up (pod_manager.go, SchedulePodEviction)
                    owned = ", ".join(daemon)
                    errors = errors + [f"cannot delete GPU pods owned by a DaemonSet: {owned}"]
                if errors:
                    # pod_manager.go only logs GetPodsForDeletion's errors: no event of its own
                    self._to_drain_or_failed(name)
                    continue
                if not pods:
                    self.move(name, K.S_POD_RESTART)
                    continue
                self.deleting[name] = EvictionJob(self.now, float(cfg.get("timeoutSeconds") or 0))
            self._evict(name, self.deleting, pods, self._deleted, self._deletion_failed)

    def _deleted(self, name: str) -> None:
        self.move(name, K.S_POD_RESTART)
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.PODS_DELETED)

    def _deletion_failed(self, name: str, why: str) -> None:
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.PODS_DELETE_FAILED.format(error=why),
                         M.WARNING)
        self._to_drain_or_failed(name)

    def _to_drain_or_failed(self, name: str) -> None:
        """``updateNodeToDrainOrFailed`` (pod_manager.go): drain when enabled, with its event."""
        drain = bool((self.policy.get("drain") or {}).get("enable"))
        if drain:
            self.world.event(name, K.UPGRADE_EVENT_REASON, M.DRAIN_FALLBACK, M.WARNING)
        self.move(name, K.S_DRAIN if drain else K.S_FAILED)

    def _drain(self) -> None:
        """Step 6: cordon and drain (``ScheduleNodesDrain``), or pass when drain is off."""
        cfg = self.policy.get("drain") or {}
        self._forget(self.draining, K.S_DRAIN)
        for name in self.in_state(K.S_DRAIN):
            if not cfg.get("enable"):
                self.move(name, K.S_POD_RESTART)
                continue
            selector = ",".join(filter(None, [cfg.get("podSelector") or "",
                                              f"{K.UPGRADE_DRAIN_SKIP}!=true"]))
            pods, errors = evictor.pods_for_deletion(
                self.world, name, label_predicate(selector), force=bool(cfg.get("force")),
                delete_empty_dir=bool(cfg.get("deleteEmptyDir")))
            if name not in self.draining:
                self.world.event(name, K.UPGRADE_EVENT_REASON, M.DRAIN_SCHEDULED)
                self.set_unschedulable(name, True)
                if errors:
                    self._drain_failed(name, evictor.aggregate(errors))
                    continue
                self.draining[name] = EvictionJob(self.now, float(cfg.get("timeoutSeconds") or 0))
            self._evict(name, self.draining, pods, self._drained, self._drain_failed)

    def _drained(self, name: str) -> None:
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.DRAINED)
        self.move(name, K.S_POD_RESTART)

    def _drain_failed(self, name: str, why: str) -> None:
        self.move(name, K.S_FAILED)
        self.world.event(name, K.UPGRADE_EVENT_REASON, M.DRAIN_FAILED.format(error=why), M.WARNING)

    def _evict(self, name: str, jobs: dict[str, EvictionJob], pods: list[Obj],
               done: Callable[[str], None], fail: Callable[[str, str], None]) -> None:
        """One round of evictions for a job; finish, keep retrying, or fail on timeout."""
        job = jobs[name]
        error = evictor.evict_round(self.world, job, pods)
        if error is None and not job.refused:
            del jobs[name]
            done(name)
        elif error is not None or job.expired(self.now):
            del jobs[name]
            fail(name, error or evictor.timeout_error(job))

    def _forget(self, jobs: dict[str, EvictionJob], state: str) -> None:
        """Drop jobs of nodes that left the state (relabelled by hand, autoUpgrade off)."""
        for name in [n for n in jobs if n not in self.nodes or self.state(n) != state]:
            del jobs[name]

    def _pod_restart(self) -> None:
        for name in self.in_state(K.S_POD_RESTART):
            pod = self.driver.get(name)
            if not self.in_sync(name):
                if pod is not None:
                    self.world.store.delete("pods", pod["metadata"]["name"], self.world.ns)
                    self.world.mark(name, STATUS)
                continue
            if self.pod_ready(pod):
                self.move(name, K.S_VALIDATION)
            elif _restarts(pod) > K.RESTART_LIMIT:
                self.move(name, K.S_FAILED)

    def _after_success(self, name: str) -> None:
        if self.ann(name, K.INITIAL_UNSCHEDULABLE_ANN) == "true":
            self.move(name, K.S_DONE, {K.INITIAL_UNSCHEDULABLE_ANN: None, K.VALIDATION_START_ANN: None})
        else:
            self.move(name, K.S_UNCORDON, {K.VALIDATION_START_ANN: None})

    def _failed(self) -> None:
        for name in self.in_state(K.S_FAILED):
            if self.in_sync(name) and self.pod_ready(self.driver.get(name)):
                self._after_success(name)

    def _validation(self) -> None:
        for name in self.in_state(K.S_VALIDATION):
            pods = [p for p in self.world.store.list("pods", self.world.ns, "app=nvidia-operator-validator")[0]
                    if p["spec"].get("nodeName") == name]
            if not pods:
                continue  # no validator pod on the node: not done, and no clock started
            if all(self.pod_ready(p) for p in pods):
                self._after_success(name)
                continue
            start = self.ann(name, K.VALIDATION_START_ANN)
            if start is None:
                self.annotate(name, K.VALIDATION_START_ANN, str(int(self.now)))
            elif self.now - int(start) > K.VALIDATION_TIMEOUT_S:
                # validation_manager.go handleTimeout only logs the timeout: no event
                self.move(name, K.S_FAILED, {K.VALIDATION_START_ANN: None})

    def _uncordon(self) -> None:
        for name in self.in_state(K.S_UNCORDON):
            self.set_unschedulable(name, False)
            self.move(name, K.S_DONE, {K.INITIAL_UNSCHEDULABLE_ANN: None})


def _scaled(raw: Any, total: int) -> int | None:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up: an int, or a "N%" string;
    any other string is an error (None)."""
    if isinstance(raw, int):
        return raw
    text = str(raw).strip()
    if text.endswith("%") and text[:-1].isdigit():
        return math.ceil(total * int(text[:-1]) / 100)
    return None


def _ready(node: Obj) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in node["status"].get("conditions", []))


def _restarts(pod: Obj | None) -> int:
    if pod is None:
        return 0
    statuses = pod["status"].get("initContainerStatuses", []) + pod["status"].get("containerStatuses", [])
    return int(max([s.get("restartCount", 0) for s in statuses if not s.get("ready")] or [0]))
