"""XID codes: what each means, how bad it is for the node, and what to do about it.

Facts from NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors), in gputui's own
words. The DCGM gauge ``DCGM_FI_DEV_XID_ERRORS`` keeps the *last* XID a GPU raised, so the
metrics layer reports XIDs with when they appeared (:class:`~gputui.domain.inputs.XidEvent`);
this module only names and grades codes. Whether an XID is current is decided by its age in
:mod:`gputui.domain.findings_metrics`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gputui.domain.model import Severity

DRAIN_RESET = "drain the node and reset the GPU (or reboot the node)"
DRAIN_RESET_RMA = DRAIN_RESET + "; RMA the GPU if it repeats"
CHECK_APP = "check the application that used this GPU (its pod and logs)"
RESET_SOON = "drain and reset the GPU at the next convenient moment so the remap takes effect"
WATCH_RMA = "watch for repeats; RMA the GPU if it keeps happening"


@dataclass(frozen=True, slots=True)
class XidInfo:
    """One XID: meaning, severity while recent, and the operator's next step."""

    code: int
    meaning: str
    severity: Severity
    action: str


def _info(code: int, meaning: str, severity: Severity, action: str) -> XidInfo:
    return XidInfo(code, meaning, severity, action)


_C, _W, _I = Severity.CRITICAL, Severity.WARNING, Severity.INFO
XIDS: dict[int, XidInfo] = {x.code: x for x in (
    _info(8, "GPU stopped responding to the driver: channel timeout", _W, CHECK_APP),
    _info(13, "graphics engine exception, usually an out-of-range access by the program",
          _I, CHECK_APP),
    _info(31, "GPU memory page fault: the program touched an invalid address", _I, CHECK_APP),
    _info(32, "corrupted command stream from the driver or application", _W, CHECK_APP),
    _info(38, "driver firmware error", _W, WATCH_RMA),
    _info(43, "GPU stopped processing the program's work: the program faulted", _I, CHECK_APP),
    _info(45, "preemptive cleanup: work ended by the driver after an earlier error", _I,
          CHECK_APP),
    _info(48, "double-bit ECC error: GPU memory returned corrupt data", _C, DRAIN_RESET_RMA),
    _info(61, "internal micro-controller breakpoint or warning", _W,
          "reset the GPU if it repeats; " + WATCH_RMA),
    _info(62, "internal micro-controller halted", _C, DRAIN_RESET_RMA),
    _info(63, "ECC page retirement or row-remap recorded", _W, RESET_SOON),
    _info(64, "ECC page retirement or row-remap recording failed", _C, DRAIN_RESET_RMA),
    _info(68, "NVDEC video decoder exception", _W, CHECK_APP),
    _info(69, "graphics engine class error", _W, CHECK_APP),
    _info(74, "NVLink error", _C, DRAIN_RESET + "; check the NVLink fabric; RMA if it repeats"),
    _info(79, "GPU has fallen off the bus", _C, "drain and reboot the node; RMA if it repeats"),
    _info(92, "high single-bit ECC error rate", _W, WATCH_RMA),
    _info(94, "contained ECC error: the affected program was stopped", _W, RESET_SOON),
    _info(95, "uncontained ECC error: other programs may have read corrupt data", _C,
          DRAIN_RESET_RMA),
    _info(109, "context-switch timeout", _W, CHECK_APP + "; " + WATCH_RMA),
    _info(119, "GSP firmware RPC timeout", _C, DRAIN_RESET_RMA),
    _info(120, "GSP firmware error", _C, DRAIN_RESET_RMA),
    _info(121, "C2C chip-to-chip link error", _W, WATCH_RMA),
    _info(140, "unrecovered ECC error", _C, DRAIN_RESET_RMA),
    _info(143, "GPU initialization failure", _C, DRAIN_RESET_RMA),
    _info(154, "GPU recovery action changed: the driver asks for a reset or reboot", _C,
          DRAIN_RESET),
    *(_info(code, "NVLink error", _W, DRAIN_RESET + "; RMA if it repeats")
      for code in range(144, 151)),
)}

UNLISTED = "unlisted XID (see NVIDIA's XID catalogue)"


#: ``err_msg`` values that say nothing (dcgm-exporter: "No Error" with XID 0, else "Unknown")
_EMPTY_MESSAGES = frozenset({"", "unknown", "no error"})


def xid_meaning(xid: int, err_msg: str = "") -> str:
    """What ``xid`` means: the table's words, else the exporter's ``err_msg`` text (its
    ``DCGM_FI_DEV_XID_ERRORS`` series carries ``err_code``/``err_msg``), else "unlisted"."""
    listed = XIDS.get(xid)
    if listed is not None:
        return listed.meaning
    text = " ".join(err_msg.split())[:120]
    return text if text.lower() not in _EMPTY_MESSAGES else UNLISTED


def xid_info(xid: int) -> XidInfo:
    """The table entry for ``xid``; an unlisted code is a warning to look up."""
    return XIDS.get(xid) or XidInfo(xid, UNLISTED, Severity.WARNING, WATCH_RMA)


def xid_severity(xid: int) -> Severity:
    """The severity of ``xid`` while it is recent (older ones are graded ``info``)."""
    return xid_info(xid).severity


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
