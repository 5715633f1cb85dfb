"""Hints that name a likely cause from what the pods say (§8.3, §8.4)."""

from __future__ import annotations

from collections.abc import Sequence

from gputui.domain import labels as L
from gputui.domain.model import NodeView, PipelineStage
from gputui.domain.pods import PodInfo

_KERNEL_WORDS = ("kernel", "header", "precompiled", "dkms", "modpost", "unable to find",
                 "could not resolve")

VALIDATOR_LAYERS: dict[str, tuple[str, str]] = {
    "driver-validation": (
        "the driver layer: nvidia-smi does not run from the driver root",
        ("Fix the driver first: open the driver stage (pod log, container nvidia-driver-ctr); "
         "for a host driver run nvidia-smi on the node.")),
    "toolkit-validation": (
        "the container runtime layer: the toolkit has not set up the NVIDIA runtime",
        ("Read the container-toolkit pod log and check the runtime (containerd/CRI-O) config "
         "it writes and restarts.")),
    # cmd/nvidia-validator/main.go (gpu-operator): the pod is bound to the node (nodeName,
    # no scheduler), tolerates what the validator DaemonSet tolerates and requests no GPU;
    # the validator polls it 60 x 5 s, then exits 1 and the init container restarts
    "cuda-validation": (
        "the CUDA layer: the nvidia-cuda-validator pod cannot run or CUDA fails",
        ("The nvidia-cuda-validator pod is bound to this node and requests no GPU; "
         "cuda-validation gives up after 60 x 5 s and restarts. Read its events and status: "
         "ErrImagePull/ImagePullBackOff means the validator image cannot be pulled (repository, "
         "pull secrets); RunContainerError or CreateContainerError naming runtime class "
         "\"nvidia\" or nvidia-container-cli means the container runtime or toolkit is not set "
         "up; an nvml error or vectorAdd failing or hanging means the driver does not answer "
         "(run nvidia-smi in the driver pod).")),
    "plugin-validation": (
        ("the device plugin layer: the node does not advertise nvidia.com/gpu "
         "(\"GPU resources are not yet discovered by the node\")"),
        "Check the device-plugin pod and its log and the node's nvidia.com/gpu capacity."),
}


def validator_layer(init: str, pods: Sequence[PodInfo]) -> tuple[str, str]:
    """(what the stuck init container means, what to do), with the CUDA pod's state."""
    meaning, hint = VALIDATOR_LAYERS.get(
        init, (f"init container {init}", "Read that init container's log."))
    if init == "cuda-validation":
        cuda = next((p for p in pods if p.labels.get(L.APP) == L.CUDA_VALIDATOR_APP), None)
        if cuda is not None:
            said = cuda.unschedulable or _first_message(cuda)
            why = f": {said}" if said else ""
            hint = f"Pod {cuda.name} is {cuda.status}{why}. " + hint
    return meaning, hint


def _first_message(pod: PodInfo, limit: int = 240) -> str:
    """The first container message of ``pod`` (why it does not start), shortened."""
    text = next((c.message for c in pod.init_containers + pod.containers if c.message), "")
    return text if len(text) <= limit else "..." + text[-limit:]


def _message_text(pod: PodInfo | None) -> str:
    if pod is None:
        return ""
    return " ".join(f"{c.reason} {c.message}" for c in pod.init_containers + pod.containers)


def driver_hint(node: NodeView, stage: PipelineStage, pod: PodInfo | None) -> str:
    """The likely cause of a failing driver pod, from its messages, reason and the node."""
    text = _message_text(pod).lower()
    holders = ", ".join(f"{p.namespace}/{p.name}" for p in node.gpu_pods[:3])
    if "in use" in text or (stage.container == "k8s-driver-manager" and node.gpu_pods):
        pods_note = f" GPU pods on the node: {holders}." if holders else ""
        return ("\"driver is in use\": GPU pods or host processes still hold the driver and "
                "k8s-driver-manager cannot unload it." + pods_note + " Drain the GPU pods (or "
                "stop host GPU processes), then delete the driver pod.")
    if "pull" in stage.reason.lower() or ("image" in text and "pull" in text):
        return (f"The driver image cannot be pulled: check driver.repository/version and pull "
                f"secrets; precompiled images exist per kernel ({node.kernel}).")
    if any(word in text for word in _KERNEL_WORDS):
        return (f"Likely a kernel update without a matching driver build: kernel {node.kernel} "
                "needs kernel headers or a precompiled driver image for it. Read the "
                "nvidia-driver-ctr log; check driver.usePrecompiled and the image tag.")
    return (f"Open the log of container {stage.container or 'nvidia-driver-ctr'} in pod "
            f"{stage.pod}. Usual causes: a kernel update ({node.kernel}) without matching "
            "headers or precompiled image, or GPU pods holding the driver (\"driver is in use\").")
