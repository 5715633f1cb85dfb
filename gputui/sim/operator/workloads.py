"""GPU workloads: Job-owned pods that request GPUs, get scheduled, run and finish.

Plays the Job controller (a deleted, unfinished pod is replaced), the scheduler (binds a
Pending pod to a Ready, uncordoned node with free allocatable GPUs) and the kubelet (Running,
then Succeeded after the run time). Also keeps PodDisruptionBudget status true, which the
API server's eviction reads, and runs the operator's own Deployment pod.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from gputui.sim.budgets import needed_healthy, selector_matches
from gputui.sim.errors import ApiError
from gputui.sim.operator import keys as K
from gputui.sim.operator.hardware import node_suffix
from gputui.sim.operator.world import World
from gputui.sim.scenario import Workload
from gputui.sim.version import GIT_VERSION

Obj = dict[str, Any]
SYSTEM_NODE = "gke-prod-system-pool-5c2e-r8wd"
IMAGE = "us-docker.pkg.dev/prod-ml/train/llm-trainer:2026.11.3"


@dataclass
class Tracked:
    spec: Workload
    name: str
    node: str = ""
    started: float = 0.0
    done: bool = False
    gpus: list[int] = field(default_factory=list)


class Workloads:
    """Scheduler, kubelet and Job controller for the scenario's GPU workloads."""

    def __init__(self, world: World):
        self.world = world
        self.pods: dict[str, Tracked] = {}
        self.next_due: float | None = None

    def operator_pod(self, now: float) -> None:
        world = self.world
        has_nodes = bool(world.scenario.pools)
        if has_nodes:
            world.store.create("nodes", _system_node(world), manager=K.M_KUBELET)
        rs = "gpu-operator-7d9f8c6b5"
        world.operator_pod = f"{rs}-{node_suffix('operator', 5)}"
        status: Obj = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                       "reason": "Unschedulable", "message": "no nodes available to schedule pods"}]}
        if has_nodes:
            status = _running_status("gpu-operator", "nvcr.io/nvidia/gpu-operator:v26.7.0", now,
                                     "10.128.0.3", "10.64.200.4")
        world.store.create("pods", {"metadata": {
            "name": world.operator_pod, "namespace": world.ns,
            "labels": {"app": "gpu-operator", "app.kubernetes.io/component": "gpu-operator",
                       K.UPGRADE_DRAIN_SKIP: "true", "pod-template-hash": "7d9f8c6b5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": "", "controller": True}]},
            "spec": {**({"nodeName": SYSTEM_NODE} if has_nodes else {}),
                     "serviceAccountName": "gpu-operator", "priorityClassName": "system-node-critical",
                     "containers": [{"name": "gpu-operator", "image": "nvcr.io/nvidia/gpu-operator:v26.7.0",
                                     "args": ["--leader-elect", "--zap-time-encoding=epoch"]}]},
            "status": status}, manager=K.M_KCM)

    def setup(self, now: float) -> None:
        """Create the scenario's workload pods (already running for ``startedAgo``) and PDBs."""
        namespaces = {spec.namespace for spec in self.world.scenario.workloads} - {"default", self.world.ns}
        for ns in sorted(namespaces):
            self.world.store.create("namespaces", {"metadata": {"name": ns}, "status": {"phase": "Active"}})
        for spec in self.world.scenario.workloads:
            if spec.pdb:
                self._pdb(spec)
            for _ in range(spec.count):
                self._create(spec, now - spec.started_ago)
        self.tick(now, True, start_at=None)

    def _pdb(self, spec: Workload) -> None:
        self.world.store.create("poddisruptionbudgets.policy", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": f"{spec.name}-pdb", "namespace": spec.namespace},
            "spec": {"minAvailable": spec.count, "selector": {"matchLabels": dict(spec.labels)}},
            "status": {"currentHealthy": 0, "desiredHealthy": spec.count, "disruptionsAllowed": 0,
                       "expectedPods": spec.count, "observedGeneration": 1}}, manager=K.M_KCM)

    def _create(self, spec: Workload, started: float) -> None:
        name = self.world.pod_name(spec.name + "-", spec.namespace)
        labels = {**spec.labels, "batch.kubernetes.io/job-name": spec.name}
        if spec.drain_skip:
            labels[K.UPGRADE_DRAIN_SKIP] = "true"
        pod_spec: Obj = {
            "restartPolicy": "Never", "schedulerName": "default-scheduler",
            "tolerations": [dict(K.TOLERATION_GPU), {"key": "nvidia.com/gpu", "operator": "Exists"}],
            "containers": [{"name": spec.name.split("-")[0], "image": IMAGE,
                            "resources": {"limits": {spec.resource: str(spec.gpus)},
                                          "requests": {spec.resource: str(spec.gpus)}}}]}
        if spec.pool:
            pool = self.world.pools[spec.pool]
            pod_spec["nodeSelector"] = {"cloud.google.com/gke-nodepool": pool.name}
        self.world.store.create("pods", {"metadata": {
            "name": name, "namespace": spec.namespace, "labels": labels,
            "annotations": {"gputui.sim/started": str(started)},
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": spec.name,
                                 "uid": node_suffix(spec.name, 8), "controller": True,
                                 "blockOwnerDeletion": True}]},
            "spec": pod_spec, "status": {"phase": "Pending", "qosClass": "BestEffort"}},
            manager="job-controller", adopt=True)
        self.pods[name] = Tracked(spec, name, started=started)

    # ------------------------------------------------------------------ tick
    def tick(self, now: float, schedule: bool, start_at: float | None = 0.0) -> bool:
        """Completions, replacements and scheduling; True if anything changed."""
        changed = False
        for t in list(self.pods.values()):
            obj = self.world.store.get("pods", t.name, t.spec.namespace)
            if obj is None:
                del self.pods[t.name]
                changed = True
                if not t.done:
                    self._create(t.spec, now)
                continue
            run = t.spec.run_seconds
            if t.node and not t.done and run is not None and now >= t.started + run:
                self._finish(t, now)
                changed = True
        if schedule or changed:
            changed |= self._schedule(now, start_at)
            self._pdb_status()
        due = [t.started + t.spec.run_seconds for t in self.pods.values()
               if t.node and not t.done and t.spec.run_seconds is not None]
        self.next_due = min(due) if due else None
        return changed

    def _free(self) -> dict[str, dict[str, int]]:
        free: dict[str, dict[str, int]] = {}
        for node in self.world.store.list("nodes", label_selector=f"{K.GPU_PRESENT}=true")[0]:
            ready = any(c["type"] == "Ready" and c["status"] == "True"
                        for c in node["status"].get("conditions", []))
            if node["spec"].get("unschedulable") or not ready:
                continue
            alloc = node["status"].get("allocatable") or {}
            free[node["metadata"]["name"]] = {k: int(v) for k, v in alloc.items()
                                              if k.startswith("nvidia.com/")}
        for t in self.pods.values():
            if t.node in free and not t.done:
                res = free[t.node]
                res[t.spec.resource] = res.get(t.spec.resource, 0) - t.spec.gpus
        return free

    def _schedule(self, now: float, start_at: float | None) -> bool:
        pending = [t for t in self.pods.values() if not t.node and not t.done]
        if not pending:
            return False
        free = self._free()
        by_pool: dict[str | None, list[str]] = {None: sorted(free)}
        for name in by_pool[None]:
            run = self.world.nodes.get(name)
            by_pool.setdefault(run.pool if run else "", []).append(name)
        changed = False
        usage = self._gpu_usage()
        for t in pending:
            candidates = by_pool.get(t.spec.pool, [])
            while candidates and not any(v > 0 for v in free[candidates[0]].values()):
                candidates.pop(0)  # full nodes leave the front of the queue
            for node in candidates:
                res = free[node]
                if res.get(t.spec.resource, 0) >= t.spec.gpus:
                    res[t.spec.resource] -= t.spec.gpus
                    self._bind(t, node, t.started if start_at is None else now,
                               usage.setdefault(node, {}))
                    changed = True
                    break
        return changed

    def _gpu_usage(self) -> dict[str, dict[int, int]]:
        """Node -> GPU index -> how many running workload pods use it (one pass over the
        pods, kept up to date by :meth:`_bind`: counting each node's anew for every pod
        bound made scheduling 1,500 pods quadratic)."""
        usage: dict[str, dict[int, int]] = {}
        for other in self.pods.values():
            if other.node and not other.done:
                node = usage.setdefault(other.node, {})
                for i in other.gpus:
                    node[i] = node.get(i, 0) + 1
        return usage

    def _bind(self, t: Tracked, node: str, started: float, usage: dict[int, int]) -> None:
        """Bind ``t`` to ``node`` on its least used GPUs (``usage``, the node's, counts
        them in)."""
        run = self.world.nodes.get(node)
        order = sorted(range(run.gpu_count if run else 0), key=lambda i: (usage.get(i, 0), i))
        t.gpus = order[: t.spec.gpus] if t.spec.resource == K.RESOURCE_GPU else []
        for i in t.gpus:
            usage[i] = usage.get(i, 0) + 1
        t.node, t.started = node, started

        def bind(pod: Obj) -> None:
            pod["spec"]["nodeName"] = node
            pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]
        self.world.store.mutate("pods", t.name, t.spec.namespace, bind, manager=K.M_SCHEDULER)
        ip = run.ip if run else ""
        status = _running_status(t.spec.name.split("-")[0], IMAGE, started, ip, self.world.next_ip("10.64.0.0"))

        def running(pod: Obj) -> None:
            pod["status"] = status
        self.world.store.mutate("pods", t.name, t.spec.namespace, running, manager=K.M_KUBELET)

    def _finish(self, t: Tracked, now: float) -> None:
        t.done = True
        rfc = self.world.clock.rfc3339

        def finish(pod: Obj) -> None:
            pod["status"]["phase"] = "Succeeded"
            for cond in pod["status"].get("conditions", []):
                if cond["type"] in ("Ready", "ContainersReady"):
                    cond.update(status="False", reason="PodCompleted")
            for cs in pod["status"].get("containerStatuses", []):
                cs.update(ready=False, started=False, state={"terminated": {
                    "exitCode": 0, "reason": "Completed", "startedAt": rfc(t.started),
                    "finishedAt": rfc(now)}})
        self.world.store.mutate("pods", t.name, t.spec.namespace, finish, manager=K.M_KUBELET)

    def _pdb_status(self) -> None:
        """The disruption controller's counts, for every budget (a client may make one with
        ``matchExpressions``, a percentage or ``maxUnavailable``; a value the controller
        cannot read leaves the budget's status as it is, as the real one does)."""
        for pdb in self.world.store.list("poddisruptionbudgets.policy")[0]:
            spec = pdb.get("spec") or {}
            pods = [p for p in self.world.store.list("pods", pdb["metadata"]["namespace"])[0]
                    if selector_matches(spec.get("selector"),
                                        (p.get("metadata") or {}).get("labels") or {})]
            healthy = sum(1 for p in pods if p["status"].get("phase") == "Running")
            try:
                desired = needed_healthy(spec, len(pods))
            except (ApiError, TypeError, ValueError):
                continue
            status = {"currentHealthy": healthy, "desiredHealthy": desired,
                      "disruptionsAllowed": max(0, healthy - desired), "expectedPods": len(pods),
                      "observedGeneration": 1}
            if pdb.get("status") != status:
                def change(obj: Obj, status: Obj = status) -> None:
                    obj["status"] = status
                self.world.store.mutate("poddisruptionbudgets.policy", pdb["metadata"]["name"],
                                        pdb["metadata"]["namespace"], change, manager="disruption-controller")

    def gpu_users(self, node: str) -> dict[int, Tracked]:
        """GPU index → the running pod using it (dcgm-exporter's pod mapping)."""
        return {i: t for t in self.pods.values() if t.node == node and not t.done for i in t.gpus}


def _running_status(container: str, image: str, started: float, host_ip: str, pod_ip: str) -> Obj:
    from datetime import datetime
    stamp = datetime.fromtimestamp(started, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    conds = [{"type": t, "status": "True", "lastTransitionTime": stamp}
             for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")]
    return {"phase": "Running", "conditions": conds, "hostIP": host_ip, "podIP": pod_ip,
            "podIPs": [{"ip": pod_ip}], "startTime": stamp, "qosClass": "BestEffort",
            "containerStatuses": [{"name": container, "image": image, "imageID": image, "ready": True, "started": True,
                                   "restartCount": 0, "state": {"running": {"startedAt": stamp}}}]}


def _system_node(world: World) -> Obj:
    stamp = world.clock.rfc3339()
    return {"metadata": {"name": SYSTEM_NODE, "labels": {
        "kubernetes.io/hostname": SYSTEM_NODE, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
        "cloud.google.com/gke-nodepool": "system-pool", "node.kubernetes.io/instance-type": "e2-standard-8",
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-1071-gke",
        "feature.node.kubernetes.io/system-os_release.ID": "ubuntu"}},
        "spec": {"podCIDR": "10.64.200.0/24"},
        "status": {"capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"},
                   "allocatable": {"cpu": "7910m", "memory": "29Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                   "message": "kubelet is posting ready status",
                                   "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}],
                   "addresses": [{"type": "InternalIP", "address": "10.128.0.3"},
                                 {"type": "Hostname", "address": SYSTEM_NODE}],
                   "nodeInfo": {"kernelVersion": "5.15.0-1071-gke", "osImage": "Ubuntu 22.04.5 LTS",
                                "kubeletVersion": GIT_VERSION,
                                "containerRuntimeVersion": "containerd://1.7.27",
                                "operatingSystem": "linux", "architecture": "amd64",
                                "kubeProxyVersion": GIT_VERSION, "bootID": "3f1c0e52",
                                "machineID": "7c2a9e5d41f84b0c9a1e2f3d4c5b6a79",
                                "systemUUID": "7c2a9e5d-41f8-4b0c-9a1e-2f3d4c5b6a79"}}}
