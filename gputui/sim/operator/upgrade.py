"""The driver upgrade controller (§4): the in-place state machine of k8s-operator-libs.

Each cycle (every 2 emulated minutes, and on node/pod/ClusterPolicy events) builds the state
of the nodes running a driver pod and applies the transitions in the library's order, with
``maxParallelUpgrades``/``maxUnavailable`` slots (§4.5), ``waitForCompletion``, pod deletion,
drain, the 600 s validation budget and the restartCount > 10 rule. Every label change emits
a ``GPUDriverUpgrade`` Event on the Node (namespace ``default``). A driver DaemonSet with
unscheduled pods stops the whole cycle, as the real ``BuildState`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.world import World
from gputui.sim.selectors import label_predicate

log = logging.getLogger(__name__)
Obj = dict[str, Any]
PERIOD = 120.0
DEBOUNCE = 2.0


class Upgrader:
    """Runs the upgrade state machine on a period and when kicked."""

    def __init__(self, world: World):
        self.w = world
        self._kick: asyncio.Event | None = None

    def kick(self) -> None:
        if self._kick is not None:
            self._kick.set()

    async def run(self) -> None:
        self._kick = asyncio.Event()
        while True:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._kick.wait(), self.w.clock.wall_seconds(PERIOD))
            await self.w.clock.sleep(DEBOUNCE)
            self._kick.clear()
            try:
                self.cycle()
            except Exception:
                log.exception("upgrade cycle failed")

    # ----------------------------------------------------------------- cycle
    def cycle(self) -> None:
        w = self.w
        spec = w.policy_spec()
        policy = (spec.get("driver") or {}).get("upgradePolicy") or {}
        nodes = {n["metadata"]["name"]: n for n in w.store.list("nodes")[0]}
        if not spec or not policy.get("autoUpgrade") or (spec.get("sandboxWorkloads") or {}).get("enabled"):
            for name, node in nodes.items():
                if K.UPGRADE_STATE in (node["metadata"].get("labels") or {}):
                    w.set_labels(name, {K.UPGRADE_STATE: None}, K.M_OPERATOR)
            return
        ds = w.store.get("daemonsets.apps", "nvidia-driver-daemonset", w.ns)
        pods = w.store.list("pods", w.ns, "app=nvidia-driver-daemonset")[0]
        if ds is None:
            return
        scheduled = [p for p in pods if p["spec"].get("nodeName")]  # Pending, no node: skipped
        if ds["status"].get("desiredNumberScheduled", 0) != len(scheduled):
            log.info("driver DaemonSet should not have Unscheduled pods")
            return
        driver = {p["spec"].get("nodeName"): p for p in pods if p["spec"].get("nodeName")}
        self.rev = w.revisions.get("driver", ("", 0))[0]
        self.policy = policy
        self.nodes = {n: nodes[n] for n in driver if n in nodes}
        self.driver = driver
        self.now = w.clock.now()
        for step in (self._from_done, self._required, self._cordon, self._wait_jobs,
                     self._pod_deletion, self._drain, self._pod_restart, self._failed,
                     self._validation, self._uncordon):
            step()

    # --------------------------------------------------------------- helpers
    def state(self, name: str) -> str:
        return str((self.nodes[name]["metadata"].get("labels") or {}).get(K.UPGRADE_STATE, ""))

    def in_state(self, state: str) -> list[str]:
        return sorted(n for n in self.nodes if self.state(n) == state)

    def move(self, name: str, state: str, annotations: dict[str, str | None] | None = None) -> None:
        def change(obj: Obj) -> None:
            obj["metadata"].setdefault("labels", {})[K.UPGRADE_STATE] = state
            ann = obj["metadata"].setdefault("annotations", {})
            for key, value in (annotations or {}).items():
                if value is None:
                    ann.pop(key, None)
                else:
                    ann[key] = value
        self.nodes[name] = self.w.write_node(name, change, K.M_OPERATOR) or self.nodes[name]
        self.w.event(name, K.UPGRADE_EVENT_REASON, f"Successfully updated node state label to {state}")

    def annotate(self, name: str, key: str, value: str | None) -> None:
        def change(obj: Obj) -> None:
            ann = obj["metadata"].setdefault("annotations", {})
            if value is None:
                ann.pop(key, None)
            else:
                ann[key] = value
        self.nodes[name] = self.w.write_node(name, change, K.M_OPERATOR) or self.nodes[name]

    def set_unschedulable(self, name: str, value: bool) -> None:
        def change(obj: Obj) -> None:
            if value:
                obj["spec"]["unschedulable"] = True
            else:
                obj["spec"].pop("unschedulable", None)
        self.nodes[name] = self.w.write_node(name, change, K.M_OPERATOR) or self.nodes[name]

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

    def gpu_pods(self, name: str) -> list[Obj]:
        out = []
        for pod in self.w.store.list("pods", field_selector=f"spec.nodeName={name}")[0]:
            owners = pod["metadata"].get("ownerReferences") or []
            if any(o.get("kind") == "DaemonSet" for o in owners):
                continue
            if pod["status"].get("phase") not in ("Running", "Pending"):
                continue
            wants = [r for c in pod["spec"].get("containers", [])
                     for r in ((c.get("resources") or {}).get("limits") or {})]
            if any(r.startswith((K.RESOURCE_GPU, K.RESOURCE_MIG_PREFIX)) for r in wants):
                out.append(pod)
        return out

    # ----------------------------------------------------------- transitions
    def _from_done(self) -> None:
        for name in self.in_state(K.S_UNKNOWN) + self.in_state(K.S_DONE):
            requested = self.ann(name, K.UPGRADE_REQUESTED_ANN) == "true"
            if not self.in_sync(name) or requested:
                extra: dict[str, str | None] = (
                    {K.INITIAL_UNSCHEDULABLE_ANN: "true"} if self.cordoned(name) else {})
                self.move(name, K.S_REQUIRED, extra)
            elif self.state(name) == K.S_UNKNOWN:
                self.move(name, K.S_DONE)

    def slots(self) -> int:
        states = [self.state(n) for n in self.nodes]
        total = len(states)
        in_progress = sum(1 for s in states if s not in (K.S_UNKNOWN, K.S_DONE, K.S_REQUIRED))
        max_par = int(self.policy.get("maxParallelUpgrades", 1) or 0)
        available = (max_par - in_progress) if max_par else states.count(K.S_REQUIRED)
        raw = str(self.policy.get("maxUnavailable", "25%"))
        max_unav = math.ceil(total * float(raw[:-1]) / 100) if raw.endswith("%") else int(raw)
        unavailable = sum(1 for n in self.nodes if self.cordoned(n) or not _ready(self.nodes[n])
                          or self.state(n) == K.S_CORDON)
        if unavailable >= max_unav:
            return 0
        return max(0, min(available, max_unav - unavailable))

    def _required(self) -> None:
        slots = self.slots()
        for name in self.in_state(K.S_REQUIRED):
            if self.ann(name, K.UPGRADE_REQUESTED_ANN):
                self.annotate(name, K.UPGRADE_REQUESTED_ANN, None)
            labels = self.nodes[name]["metadata"].get("labels") or {}
            if labels.get(K.UPGRADE_SKIP) == "true":
                continue
            if self.cordoned(name):
                self.move(name, K.S_CORDON)
            elif slots > 0:
                slots -= 1
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
                busy = [p for p in self.w.store.list("pods", field_selector=f"spec.nodeName={name}")[0]
                        if match(p) and p["status"].get("phase") in ("Running", "Pending")]
                if busy:
                    if timeout <= 0:
                        continue
                    start = self.ann(name, K.WAIT_START_ANN)
                    if start is None:
                        self.annotate(name, K.WAIT_START_ANN, str(int(self.now)))
                        continue
                    if self.now < int(start) + timeout:
                        continue
            self.move(name, K.S_POD_DELETION, {K.WAIT_START_ANN: None})

    def _pod_deletion(self) -> None:
        force = bool((self.policy.get("podDeletion") or {}).get("force"))
        drain = bool((self.policy.get("drain") or {}).get("enable"))
        for name in self.in_state(K.S_POD_DELETION):
            pods = self.gpu_pods(name)
            unmanaged = [p for p in pods if not p["metadata"].get("ownerReferences")]
            if unmanaged and not force:
                self.w.event(name, K.UPGRADE_EVENT_REASON, "Failed to delete pods on the node: "
                             f"cannot delete Pods not managed by a controller: {unmanaged[0]['metadata']['name']}",
                             "Warning")
                self.move(name, K.S_DRAIN if drain else K.S_FAILED)
                continue
            for pod in pods:
                self.w.store.delete("pods", pod["metadata"]["name"], pod["metadata"]["namespace"])
            self.move(name, K.S_POD_RESTART)

    def _drain(self) -> None:
        cfg = self.policy.get("drain") or {}
        for name in self.in_state(K.S_DRAIN):
            if cfg.get("enable"):
                selector = ",".join(filter(None, [cfg.get("podSelector") or "",
                                                  f"{K.UPGRADE_DRAIN_SKIP}!=true"]))
                match = label_predicate(selector)
                self.set_unschedulable(name, True)
                for pod in self.w.store.list("pods", field_selector=f"spec.nodeName={name}")[0]:
                    owners = pod["metadata"].get("ownerReferences") or []
                    if match(pod) and not any(o.get("kind") == "DaemonSet" for o in owners) \
                            and pod["metadata"]["namespace"] != self.w.ns:
                        self.w.store.delete("pods", pod["metadata"]["name"], pod["metadata"]["namespace"])
            self.move(name, K.S_POD_RESTART)

    def _pod_restart(self) -> None:
        for name in self.in_state(K.S_POD_RESTART):
            pod = self.driver.get(name)
            if not self.in_sync(name):
                if pod is not None:
                    self.w.store.delete("pods", pod["metadata"]["name"], self.w.ns)
                    self.w.mark(name, "ds")
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
            pods = [p for p in self.w.store.list("pods", self.w.ns, "app=nvidia-operator-validator")[0]
                    if p["spec"].get("nodeName") == name]
            if pods and all(self.pod_ready(p) for p in pods):
                self._after_success(name)
                continue
            start = self.ann(name, K.VALIDATION_START_ANN)
            if start is None:
                self.annotate(name, K.VALIDATION_START_ANN, str(int(self.now)))
            elif self.now - int(start) > K.VALIDATION_TIMEOUT_S:
                self.w.event(name, K.UPGRADE_EVENT_REASON,
                             "Failed to validate driver upgrade: validation timeout exceeded", "Warning")
                self.move(name, K.S_FAILED, {K.VALIDATION_START_ANN: None})

    def _uncordon(self) -> None:
        for name in self.in_state(K.S_UNCORDON):
            self.set_unschedulable(name, False)
            self.move(name, K.S_DONE, {K.INITIAL_UNSCHEDULABLE_ANN: None})


def _ready(node: Obj) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in node["status"].get("conditions", []))


def _restarts(pod: Obj | None) -> int:
    if pod is None:
        return 0
    statuses = pod["status"].get("initContainerStatuses", []) + pod["status"].get("containerStatuses", [])
    return int(max([s.get("restartCount", 0) for s in statuses if not s.get("ready")] or [0]))
