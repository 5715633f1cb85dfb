"""The ``nvidia-cuda-validator-xxxxx`` pod that ``cuda-validation`` launches (§1.3).

It runs ``vectorAdd`` once (restartPolicy OnFailure) and Succeeds; a stuck validator
(scenario ``validator-stuck``) leaves it Pending, unschedulable, so ``cuda-validation`` never
completes — what an operator sees when taints or a broken runtime block the workload.
"""

from __future__ import annotations

from typing import Any

from gputui.sim.operator import keys as K
from gputui.sim.operator.operands import IMAGES
from gputui.sim.operator.runtime import NodeRun, PodRun
from gputui.sim.operator.world import World

RUN_SECONDS = 8.0


def ensure(w: World, node: NodeRun, run: PodRun, now: float) -> str:
    """Create the CUDA validator pod once per validator run and move it along; its name."""
    if not run.child or w.store.get("pods", run.child, w.ns) is None:
        run.child = w.pod_name("nvidia-cuda-validator-")
        run.child_started = now
        w.store.create("pods", _pod(w, node, run), manager=K.M_VALIDATOR)
        w.pod_index[run.child] = (node.name, "cuda-validator")
        return run.child
    pod = w.store.get("pods", run.child, w.ns) or {}
    phase = pod.get("status", {}).get("phase")
    if node.validator_stuck:
        _set(w, run.child, _pending_unschedulable(w))
    elif phase == "Pending" and now >= run.child_started + 2:
        _set(w, run.child, _status(w, node, run, "Running"))
    elif phase == "Running" and now >= run.child_started + RUN_SECONDS:
        w.nodeside.log(w.ns, run.child, "nvidia-cuda-validator", "cuda workload validation is successful")
        _set(w, run.child, _status(w, node, run, "Succeeded"))
    return run.child


def converged(w: World, node: NodeRun, run: PodRun, now: float) -> None:
    """The Succeeded validator pod a finished ``cuda-validation`` leaves behind."""
    run.child = w.pod_name("nvidia-cuda-validator-")
    run.child_started = now - RUN_SECONDS
    pod = _pod(w, node, run)
    pod["status"] = _status(w, node, run, "Succeeded")
    w.store.create("pods", pod, manager=K.M_VALIDATOR, adopt=True)
    w.pod_index[run.child] = (node.name, "cuda-validator")


def _set(w: World, name: str, status: dict[str, Any]) -> None:
    def change(pod: dict[str, Any]) -> None:
        pod["status"] = status
    w.store.mutate("pods", name, w.ns, change, manager=K.M_KUBELET)


def _pod(w: World, node: NodeRun, run: PodRun) -> dict[str, Any]:
    owner = w.store.get("pods", run.name, w.ns) or {"metadata": {"name": run.name, "uid": ""}}
    image = IMAGES["validator"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": run.child, "namespace": w.ns,
                         "labels": {"app": "nvidia-cuda-validator"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                              "name": run.name,
                                              "uid": owner["metadata"].get("uid", ""),
                                              "controller": True}]},
            "spec": {"nodeName": node.name, "restartPolicy": "OnFailure",
                     "runtimeClassName": "nvidia", "priorityClassName": "system-node-critical",
                     "tolerations": [dict(K.TOLERATION_GPU)],
                     "initContainers": [{"name": "cuda-validation", "image": image,
                                         "command": ["sh", "-c"], "args": ["vectorAdd"]}],
                     "containers": [{"name": "nvidia-cuda-validator", "image": image,
                                     "command": ["sh", "-c"],
                                     "args": ["echo cuda workload validation is successful"]}]},
            "status": {"phase": "Pending", "qosClass": "BestEffort",
                       "conditions": [{"type": "PodScheduled", "status": "True"}]}}


def _status(w: World, node: NodeRun, run: PodRun, phase: str) -> dict[str, Any]:
    rfc = w.clock.rfc3339
    start, end = rfc(run.child_started), rfc(w.clock.now())
    done = phase == "Succeeded"
    term = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": start, "finishedAt": end}}
    main_state = term if done else {"running": {"startedAt": end}}
    return {"phase": phase, "hostIP": node.ip, "podIP": "", "startTime": start,
            "qosClass": "BestEffort",
            "conditions": [{"type": "Initialized", "status": "True"},
                           {"type": "Ready", "status": "False" if done else "True",
                            **({"reason": "PodCompleted"} if done else {})},
                           {"type": "PodScheduled", "status": "True"}],
            "initContainerStatuses": [{"name": "cuda-validation", "ready": True, "restartCount": 0,
                                       "image": IMAGES["validator"], "imageID": IMAGES["validator"], "state": term}],
            "containerStatuses": [{"name": "nvidia-cuda-validator", "ready": not done,
                                   "restartCount": 0, "image": IMAGES["validator"], "imageID": IMAGES["validator"],
                                   "state": main_state}]}


def _pending_unschedulable(w: World) -> dict[str, Any]:
    return {"phase": "Pending", "qosClass": "BestEffort",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "message": "0/1 nodes are available: 1 node(s) had untolerated taint "
                                       "{node.kubernetes.io/unschedulable: }. preemption: 0/1 "
                                       "nodes are available: 1 Preemption is not helpful for scheduling.",
                            "lastTransitionTime": w.clock.rfc3339()}]}
