"""XID codes (§7.4): what each means and how bad it is for the node.

The DCGM gauge keeps the *last* XID value, so the metrics layer reports changes as
:class:`~gputui.domain.inputs.XidEvent`; this module only names and grades them.
"""

from __future__ import annotations

from gputui.domain.model import Finding, Severity
from gputui.domain.timefmt import duration

XID_MEANINGS: dict[int, str] = {
    13: "graphics engine exception",
    31: "GPU memory page fault",
    43: "GPU stopped processing",
    45: "preemptive cleanup",
    48: "double-bit ECC error",
    61: "micro-controller breakpoint",
    62: "micro-controller halt",
    63: "ECC page retirement / row-remap recording",
    64: "ECC page retirement / row-remap recording failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    92: "high single-bit ECC error rate",
    94: "contained ECC error",
    95: "uncontained ECC error",
    109: "context-switch timeout",
    119: "GSP RPC timeout",
    120: "GSP error",
    140: "unrecovered ECC error",
    143: "GPU initialization failure",
    154: "GPU recovery action changed",
}
for _code in range(144, 151):
    XID_MEANINGS[_code] = "NVLink error"

#: the GPU is gone or its memory cannot be trusted: drain and reset/replace
CRITICAL_XIDS = frozenset({48, 62, 64, 79, 95, 119, 120, 140, 143})
#: usually the application's own fault (bad kernel, OOB access), not the hardware
APPLICATION_XIDS = frozenset({13, 31, 43, 45})


def xid_meaning(xid: int) -> str:
    """What an XID means, or "unlisted XID" for codes outside the table."""
    return XID_MEANINGS.get(xid, "unlisted XID (see NVIDIA's XID catalogue)")


def xid_severity(xid: int) -> Severity:
    """Critical when the GPU is lost or memory is corrupt, info for application faults."""
    if xid in CRITICAL_XIDS:
        return Severity.CRITICAL
    if xid in APPLICATION_XIDS:
        return Severity.INFO
    return Severity.WARNING


def _hint(xid: int) -> str:
    if xid in CRITICAL_XIDS:
        return ("Cordon and drain the node, then have the GPU reset or the node rebooted; "
                "if it repeats, the GPU needs replacing. Check which pod used the GPU.")
    if xid in APPLICATION_XIDS:
        return "Usually the workload's fault: check the pod that used this GPU and its logs."
    return "Watch the GPU's metrics for recurrence; if it repeats, cordon and drain the node."


def xid_findings(node: str, gpu_index: int, xid: int, when: float | None,
                 now: float | None = None) -> list[Finding]:
    """The ``xid-error`` finding for one XID on one GPU (a list so callers can extend).

    ``when`` None or <= 0 means unknown (the exporter's gauge has no time of its own): the
    message then states no age rather than a made-up "0 s ago".
    """
    age = ""
    if when is not None and when > 0 and now is not None:
        age = f" {duration(now - when)} ago"
    message = f"GPU {gpu_index}: XID {xid}: {xid_meaning(xid)}{age}"
    return [Finding(code="xid-error", severity=xid_severity(xid), node=node, message=message,
                    hint=_hint(xid), pane="metrics", subject=f"gpu{gpu_index}")]
