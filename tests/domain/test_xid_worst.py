"""``xid-error`` grades the worst XID each GPU reported within the lookback, by NVIDIA's
catalogue, and names the pods on the GPU.

A fatal XID is usually followed at once by XID 45 (preemptive cleanup), and dcgm-exporter's
gauge keeps only the last one: graded alone, 45 says "check the application" of a GPU that
needs a reset.
"""

from __future__ import annotations

import pytest

from gputui.domain.findings_metrics import xid_node_findings
from gputui.domain.inputs import XidEvent
from gputui.domain.model import Finding, Severity
from gputui.domain.snapshot import SnapshotBuilder
from gputui.domain.timeline import derive_events
from gputui.domain.xid import grade
from tests.domain import factory as f

T0 = f.T0
FATAL = XidEvent(0, 95, T0 - 360, "Uncontained ECC error", last_seen=T0 - 345,
                 pods=("ml/trainer-0",))
CLEANUP = XidEvent(0, 45, T0 - 345, "Preemptive cleanup", pods=("ml/trainer-0",))


def one(*events: XidEvent, lookback: float = 3600.0) -> Finding:
    [finding] = xid_node_findings(f.NODE, events, T0, lookback)
    return finding


def test_a_fatal_xid_followed_by_45_is_critical_and_names_both() -> None:
    x = one(FATAL, CLEANUP)
    assert x.severity is Severity.CRITICAL
    assert x.message == ("GPU 0: XID 95 (uncontained ECC error: other programs may have read "
                         "corrupt data) 6 min ago, then 45; pods: ml/trainer-0")
    assert x.hint.startswith("Drain the node and reset the GPU")
    # the controls: 45 alone is the application's; a 95 older than the lookback is history
    assert one(CLEANUP).severity is Severity.INFO
    old = one(XidEvent(0, 95, T0 - 7200), XidEvent(0, 45, T0 - 7185))
    assert old.severity is Severity.INFO and "last XID 45" in old.message
    assert one(FATAL, CLEANUP, lookback=300.0).severity is Severity.INFO


def test_the_worst_wins_whatever_the_order_and_equals_keep_the_first() -> None:
    assert "XID 95" in one(CLEANUP, FATAL).message
    x = one(XidEvent(1, 79, T0 - 100), XidEvent(1, 154, T0 - 90, "Node Reboot Required"),
            XidEvent(1, 45, T0 - 80))
    assert x.message.startswith("GPU 1: XID 79 (GPU has fallen off the bus) 1 min ago, "
                                "then 154, 45")
    assert "XID 154 after it: drain the node and reboot it." in x.hint


def test_the_snapshot_grades_the_history_and_the_timeline_has_each_xid() -> None:
    builder = SnapshotBuilder()
    before = builder.build(f.objects([f.node()], f.healthy_pods()), T0 - 400)
    snap = builder.build(f.objects([f.node()], f.healthy_pods(),
                                   xids={f.NODE: [CLEANUP, FATAL]}), T0)
    assert snap.nodes[f.NODE].worst is Severity.CRITICAL
    texts = [e.text for e in derive_events(before, snap, T0) if e.kind == "xid"]
    assert texts == ["XID 95 on GPU 0: uncontained ECC error: other programs may have read "
                     "corrupt data", "XID 45 on GPU 0: preemptive cleanup: work ended by the "
                     "driver after an earlier error"]


@pytest.mark.parametrize(("message", "severity", "says", "action"), [
    ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
     Severity.CRITICAL, "reset the GPU", "nvidia-smi -r"),
    ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)",
     Severity.CRITICAL, "reboot the node", "reboot it"),
    ("Drain and Reset", Severity.CRITICAL, "drain peer-to-peer work and reset the GPU",
     "then reset the GPU"),
    ("Drain P2P", Severity.CRITICAL, "drain peer-to-peer work on the GPU", "peer-to-peer"),
    ("GPU recovery action changed from 0x1 (GPU Reset Required) to 0x0 (None)",
     Severity.INFO, "no action needed", "recovered"),
    ("GPU Recovery Action Changed", Severity.CRITICAL, "reset or a reboot",
     "GPU Recovery Action"),
])
def test_xid_154_is_graded_by_its_recovery_action(message: str, severity: Severity,
                                                   says: str, action: str) -> None:
    x = one(XidEvent(2, 154, T0 - 60, message))
    assert x.severity is severity and says in x.message and action in x.hint


@pytest.mark.parametrize(("code", "meaning"), [
    (158, "GPU fatal timeout"), (167, "PCIe fatal timeout"),
    (169, "internal micro-controller halted"), (171, "uncorrectable DRAM error"),
    (172, "uncorrectable SRAM error"), (157, "resource retirement failed"),
])
def test_newer_fatal_codes_are_critical(code: int, meaning: str) -> None:
    x = one(XidEvent(0, code, T0 - 60, "whatever the exporter says"))
    assert x.severity is Severity.CRITICAL and meaning in x.message
    assert "drain" in x.hint.lower()


def test_newer_codes_that_are_not_fatal() -> None:
    assert grade(162).severity is Severity.INFO  # power smoothing re-engaged
    assert grade(156).severity is Severity.WARNING and "reset" in grade(156).action
    assert grade(106).severity is Severity.INFO  # a BMC test message


def test_an_unknown_code_shows_the_exporters_err_msg_and_is_a_warning() -> None:
    x = one(XidEvent(0, 205, T0 - 60, "Brand New\x1b[31m Error"))
    assert x.severity is Severity.WARNING
    assert "XID 205 (not in gputui's XID catalogue; the exporter says: Brand New [31m Error)" \
        in x.message and "docs.nvidia.com/deploy/xid-errors" in x.hint
    unused = one(XidEvent(0, 5, T0 - 60, "Unused"))  # the catalogue marks 5 unused
    assert unused.severity is Severity.WARNING and "unlisted XID" in unused.message


def test_the_exporters_count_and_many_pods_are_said() -> None:
    pods = tuple(f"ml/worker-{i}" for i in range(5))
    x = one(XidEvent(0, 79, T0 - 60, count=3, count_window=300.0, pods=pods))
    assert "(3 times within 5 min); pods: ml/worker-0, ml/worker-1, ml/worker-2 and 2 more" \
        in x.message
