"""XID codes: what each means, how bad it is for the node, and what to do about it.

The table is :mod:`gputui.domain.xid_catalogue` (NVIDIA's catalogue in gputui's words). This
module grades one reported XID: the table's entry, XID 154 by the recovery action it
carries, and a code the table does not know by the exporter's ``err_msg`` (a warning: a
new driver's code is looked up, not ignored). The DCGM gauge ``DCGM_FI_DEV_XID_ERRORS``
keeps only the *last* XID a GPU raised, so the metrics layer reports every XID it saw with
when (:class:`~gputui.domain.inputs.XidEvent`); which of a GPU's XIDs is graded is decided
in :mod:`gputui.domain.findings_metrics`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from gputui.domain.model import Severity
from gputui.domain.xid_catalogue import (
    CHECK_APP,
    DRAIN_RESET,
    DRAIN_RESET_RMA,
    RESET_SOON,
    WATCH_RMA,
    XIDS,
    XidInfo,
)

__all__ = ["CHECK_APP", "DRAIN_RESET", "DRAIN_RESET_RMA", "RESET_SOON", "UNLISTED", "WATCH_RMA",
           "XIDS", "XidInfo", "grade", "pod_of", "pods_by_gpu", "recovery_action",
           "xid_from_series", "xid_info", "xid_meaning", "xid_severity"]

UNLISTED = "unlisted XID (see NVIDIA's XID catalogue)"
#: what to do about a code gputui's catalogue does not know
LOOK_UP = ("look the code up in NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors); "
           + WATCH_RMA)
RECOVERY_XID = 154

#: ``err_msg`` values that say nothing (dcgm-exporter: "No Error" with XID 0, else "Unknown")
_EMPTY_MESSAGES = frozenset({"", "unknown", "no error", "unused", "reserved"})

_C, _I = Severity.CRITICAL, Severity.INFO
#: XID 154's recovery actions (NVML ``nvmlDeviceGpuRecoveryAction_t`` 0..7; the driver logs
#: "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"): the words
#: that name each in an ``err_msg``, what it means, how bad, and the step
_RECOVERY: tuple[tuple[int, tuple[str, ...], str, Severity, str], ...] = (
    (4, ("drain and reset", "drain p2p and reset"),
     "drain peer-to-peer work and reset the GPU", _C, "drain the node, then reset the GPU"),
    (3, ("drain p2p", "drain"), "drain peer-to-peer work on the GPU", _C,
     "drain the node so no new peer-to-peer (NVLink) work starts, then reset the GPU"),
    (5, ("imex",), "recover the IMEX domain", _C,
     "drain the node and recover its IMEX domain (restart the IMEX daemons of the domain)"),
    (6, ("bus reset",), "reset the GPU's PCIe bus", _C,
     "drain the node and reset the GPU's PCIe bus (or reboot the node)"),
    (7, ("system reboot",), "reboot the system", _C, "drain the node and reboot it"),
    (2, ("node reboot", "reboot"), "reboot the node", _C, "drain the node and reboot it"),
    (1, ("gpu reset", "reset"), "reset the GPU", _C,
     "drain the node and reset the GPU (nvidia-smi -r), or reboot the node"),
    (0, ("none",), "no action needed any more", _I, "nothing to do: the GPU recovered"),
)
_HEX = re.compile(r"0x0*([0-7])\b")


def _clean(text: str) -> str:
    """One line of at most 120 characters (an exporter's text is hostile)."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())[:120]


def recovery_action(err_msg: str) -> XidInfo | None:
    """XID 154 graded by the recovery action its message names (the part after "to" when
    it says "changed from A to B"); None when the message names none."""
    text = _clean(err_msg).lower()
    target = text.rsplit(" to ", 1)[-1]
    number = _HEX.search(target)
    for value, words, meaning, severity, action in _RECOVERY:
        named = (number is not None and int(number.group(1)) == value) or (
            number is None and any(word in target for word in words))
        if named:
            return XidInfo(RECOVERY_XID, f"GPU recovery action changed: {meaning}", severity,
                           action)
    return None


def grade(xid: int, err_msg: str = "") -> XidInfo:
    """What ``xid`` means, how bad it is and what to do, reading ``err_msg`` where the code
    alone does not say (154's recovery action; a code gputui does not know)."""
    if xid == RECOVERY_XID:
        return recovery_action(err_msg) or XIDS[RECOVERY_XID]
    listed = XIDS.get(xid)
    if listed is not None:
        return listed
    text = _clean(err_msg)
    meaning = (f"not in gputui's XID catalogue; the exporter says: {text}"
               if text.lower() not in _EMPTY_MESSAGES else UNLISTED)
    return XidInfo(xid, meaning, Severity.WARNING, LOOK_UP)


def xid_meaning(xid: int, err_msg: str = "") -> str:
    """What ``xid`` means (see :func:`grade`)."""
    return grade(xid, err_msg).meaning


def xid_info(xid: int, err_msg: str = "") -> XidInfo:
    """The graded entry for ``xid``; an unlisted code is a warning to look up."""
    return grade(xid, err_msg)


def xid_severity(xid: int, err_msg: str = "") -> Severity:
    """The severity of ``xid`` while it is recent (older ones are graded ``info``)."""
    return grade(xid, err_msg).severity


def xid_from_series(labels: Mapping[str, str], value: object) -> tuple[int, int] | None:
    """``(gpu, xid)`` of one ``DCGM_FI_DEV_XID_ERRORS`` series: the ``err_code`` label, else
    the sample value; None when it carries no XID (0) or cannot be read (garbage, NaN, +Inf:
    all valid exposition text, and a proxy may answer anything)."""
    try:
        code = int(float(labels.get("err_code") or 0) or float(value or 0))  # type: ignore[arg-type]
        gpu = int(labels.get("gpu") or 0)
    except (TypeError, ValueError, OverflowError):
        return None
    return (gpu, code) if code > 0 else None


#: dcgm-exporter's pod-mapping labels (``DCGM_EXPORTER_KUBERNETES``): current names, then
#: the ``--use-old-namespace`` ones
_POD_LABELS = (("namespace", "pod"), ("pod_namespace", "pod_name"))


def pod_of(labels: Mapping[str, str]) -> str | None:
    """``namespace/pod`` of the pod dcgm-exporter maps a GPU series to; None when the series
    carries no pod (pod mapping off, or an idle GPU)."""
    for namespace_key, pod_key in _POD_LABELS:
        pod = _clean(labels.get(pod_key) or "")
        if pod:
            namespace = _clean(labels.get(namespace_key) or "")
            return f"{namespace}/{pod}" if namespace else pod
    return None


def pods_by_gpu(series: Iterable[Mapping[str, str]]) -> dict[int, tuple[str, ...]]:
    """GPU index -> the pods any of its series names (XID or any other DCGM series)."""
    found: dict[int, set[str]] = {}
    for labels in series:
        pod = pod_of(labels)
        gpu = labels.get("gpu") or ""
        if pod and gpu.isdigit() and len(gpu) <= 6:
            found.setdefault(int(gpu), set()).add(pod)
    return {gpu: tuple(sorted(pods)) for gpu, pods in found.items()}
