"""NVIDIA's XID catalogue in gputui's words: what each code means, how bad it is, what to do.

Sources (facts, not text): NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors, the
"Analyzing Xid Errors with the Xid Catalog" table with its immediate-action buckets) and
dcgm-exporter's ``internal/pkg/collector/xid_errors.go`` (the ``err_msg`` it attaches to each
code, 1..172). Severity follows the immediate action: an application's own fault
(``RESTART_APP``) is ``info``, anything that needs the GPU reset or the node rebooted is
``critical``, and the rest (engine exceptions that may repeat, degradations to watch) is a
``warning``. Codes the catalogue marks unused or reserved are left out on purpose: an
exporter reporting one is said as unknown (a warning showing the exporter's ``err_msg``).
XID 154 depends on the recovery action it carries; :mod:`gputui.domain.xid` grades it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputui.domain.model import Severity

DRAIN_RESET = "drain the node and reset the GPU (or reboot the node)"
DRAIN_RESET_RMA = DRAIN_RESET + "; RMA the GPU if it repeats"
DRAIN_REBOOT = "drain the node and reboot it; RMA the GPU if it repeats"
CHECK_APP = "check the application that used this GPU (its pod and logs)"
ENGINE = CHECK_APP + "; reset the GPU if it repeats"
DRIVER = "reset the GPU if it repeats; update the driver if it keeps happening"
RESET_SOON = "drain and reset the GPU at the next convenient moment so the remap takes effect"
WATCH_RMA = "watch for repeats; RMA the GPU if it keeps happening"
NVLINK = DRAIN_RESET + "; check the NVLink fabric; RMA if it repeats"
NOTHING = "nothing to do: it is informational"


@dataclass(frozen=True, slots=True)
class XidInfo:
    """One XID: meaning, severity while recent, and the operator's next step."""

    code: int
    meaning: str
    severity: Severity
    action: str


_C, _W, _I = Severity.CRITICAL, Severity.WARNING, Severity.INFO


def _many(codes: tuple[int, ...], meaning: str, severity: Severity,
          action: str) -> list[XidInfo]:
    return [XidInfo(code, meaning, severity, action) for code in codes]


_ENTRIES: list[XidInfo] = [
    *_many((1, 2, 3, 4, 6, 11, 25, 32), "invalid or corrupted command (push buffer) stream",
           _W, ENGINE),
    XidInfo(7, "invalid or corrupted push buffer address", _W, ENGINE),
    XidInfo(8, "GPU stopped responding to the driver: channel timeout", _W, CHECK_APP),
    XidInfo(9, "driver error programming the GPU", _W, DRIVER),
    XidInfo(12, "driver error handling a GPU exception", _W, DRIVER),
    XidInfo(13, "graphics engine exception, usually an out-of-range access by the program",
            _I, CHECK_APP),
    XidInfo(16, "display engine hung", _W, DRIVER),
    XidInfo(18, "bus mastering disabled in the PCI config space", _C, DRAIN_REBOOT),
    *_many((19, 56), "display engine error", _W, DRIVER),
    *_many((20, 21, 22), "invalid or corrupted video push buffer", _W, ENGINE),
    XidInfo(24, "GPU semaphore timeout", _W, ENGINE),
    XidInfo(26, "framebuffer timeout", _W, DRIVER),
    *_many((27, 28, 29, 34, 35, 36, 42, 47, 60, 65), "video processor exception", _W, ENGINE),
    XidInfo(30, "GPU semaphore access error", _W, ENGINE),
    XidInfo(31, "GPU memory page fault: the program touched an invalid address", _I,
            CHECK_APP),
    *_many((33, 59), "internal micro-controller error", _W, DRIVER),
    *_many((37, 38), "driver firmware error", _W, WATCH_RMA),
    XidInfo(43, "GPU stopped processing the program's work: the program faulted", _I,
            CHECK_APP),
    XidInfo(44, "graphics engine fault during a context switch", _W, ENGINE),
    XidInfo(45, "preemptive cleanup: work ended by the driver after an earlier error", _I,
            CHECK_APP),
    XidInfo(46, "GPU stopped processing", _C, DRAIN_RESET_RMA),
    XidInfo(48, "double-bit ECC error: GPU memory returned corrupt data", _C, DRAIN_RESET_RMA),
    XidInfo(54, "auxiliary power is not connected to the GPU board", _C,
            "drain the node and have its GPU power cabling checked"),
    XidInfo(57, "error programming the video memory interface", _C, DRAIN_RESET_RMA),
    XidInfo(58, "unstable video memory interface", _C, DRAIN_RESET_RMA),
    XidInfo(61, "internal micro-controller breakpoint or warning", _W,
            "reset the GPU if it repeats; " + WATCH_RMA),
    XidInfo(62, "internal micro-controller halted", _C, DRAIN_RESET_RMA),
    XidInfo(63, "ECC page retirement or row-remap recorded", _W, RESET_SOON),
    XidInfo(64, "ECC page retirement or row-remap recording failed", _C, DRAIN_RESET_RMA),
    *_many((66, 67), "illegal access by the driver", _W, DRIVER),
    XidInfo(68, "NVDEC video decoder exception", _W, CHECK_APP),
    XidInfo(69, "graphics engine class error", _W, CHECK_APP),
    *_many((70, 71, 72, 75, 76, 77, 85, *range(126, 136)), "copy engine error", _W, ENGINE),
    *_many((73, 142), "NVENC video encoder error", _W, ENGINE),
    XidInfo(74, "NVLink error", _C, NVLINK),
    XidInfo(78, "vGPU start error", _W, DRIVER),
    XidInfo(79, "GPU has fallen off the bus", _C, "drain and reboot the node; RMA if it repeats"),
    XidInfo(80, "corrupted data sent to the GPU (a bus problem)", _C, DRAIN_RESET_RMA),
    XidInfo(81, "VGA subsystem error", _W, DRIVER),
    *_many((82, *range(99, 106)), "NVJPG JPEG engine error", _W, ENGINE),
    *_many((83, 84, 88, 89, 96, 97, 98), "NVDEC video decoder error", _W, ENGINE),
    *_many((86, 139), "optical flow accelerator error", _W, ENGINE),
    XidInfo(92, "high single-bit ECC error rate", _W, WATCH_RMA),
    XidInfo(93, "InfoROM wear limit exceeded (not fatal)", _W, WATCH_RMA),
    XidInfo(94, "contained ECC error: the affected program was stopped", _W, RESET_SOON),
    XidInfo(95, "uncontained ECC error: other programs may have read corrupt data", _C,
            DRAIN_RESET_RMA),
    *_many((106, 107), "SMBPBI test message from the board management controller", _I,
           NOTHING),
    XidInfo(109, "context-switch timeout", _W, CHECK_APP + "; " + WATCH_RMA),
    XidInfo(110, "security fault", _C, DRAIN_RESET_RMA),
    *_many(tuple(range(111, 119)), "display pipeline error", _W, DRIVER),
    XidInfo(119, "GSP firmware RPC timeout", _C, DRAIN_RESET_RMA),
    XidInfo(120, "GSP firmware error", _C, DRAIN_RESET_RMA),
    XidInfo(121, "C2C chip-to-chip link error", _W, WATCH_RMA),
    *_many((122, 123, 124), "SPI flash access through the PMU failed", _W, WATCH_RMA),
    XidInfo(125, "InfoROM file system failure", _W, WATCH_RMA),
    XidInfo(136, "NVLink training (ALI) failed", _W, NVLINK),
    XidInfo(137, "NVLink privilege error", _W, NVLINK),
    *_many((138, 152, 153), "deep learning accelerator (DLA) error", _W, ENGINE),
    XidInfo(140, "unrecovered ECC error", _C, DRAIN_RESET_RMA),
    XidInfo(141, "fast-path channel error", _W, ENGINE),
    XidInfo(143, "GPU initialization failure", _C, DRAIN_RESET_RMA),
    *_many(tuple(range(144, 151)), "NVLink error", _W, DRAIN_RESET + "; RMA if it repeats"),
    XidInfo(151, "key rotation error (confidential computing)", _C, DRAIN_RESET),
    XidInfo(154, "GPU recovery action changed: the driver asks for a reset or a reboot", _C,
            "read the GPU's recovery action (nvidia-smi -q, 'GPU Recovery Action'), drain "
            "the node, then reset the GPU or reboot the node as it says"),
    XidInfo(155, "NVLink software-defined error", _W, NVLINK),
    XidInfo(156, "resource retirement: part of the GPU was retired", _W, RESET_SOON),
    XidInfo(157, "resource retirement failed", _C, DRAIN_RESET_RMA),
    XidInfo(158, "GPU fatal timeout: the GPU stopped responding", _C,
            DRAIN_RESET + "; reboot the node if the reset fails; RMA if it repeats"),
    XidInfo(159, "chip-to-chip (CHI) interconnect error", _C, DRAIN_RESET_RMA),
    XidInfo(160, "channel retirement: a GPU channel was retired", _W, RESET_SOON),
    XidInfo(161, "channel retirement failed", _C, DRAIN_RESET_RMA),
    XidInfo(162, "power smoothing circuitry re-engaged", _I, NOTHING),
    XidInfo(163, "power smoothing circuitry disengaged", _W,
            "check the GPU's power smoothing settings; " + WATCH_RMA),
    XidInfo(164, "power smoothing circuitry near the end of its lifetime", _W,
            "plan the GPU's replacement (RMA)"),
    XidInfo(165, "power smoothing circuitry lifetime exhausted", _W,
            "replace the GPU (RMA) at the next maintenance"),
    XidInfo(166, "NVLink secure crypto error", _C, NVLINK),
    XidInfo(167, "PCIe fatal timeout: the GPU stopped answering on the bus", _C, DRAIN_REBOOT),
    XidInfo(168, "reduced GPU memory capacity: errors in the write-protected region", _C,
            DRAIN_RESET_RMA),
    XidInfo(169, "internal micro-controller halted", _C, DRAIN_RESET_RMA),
    XidInfo(170, "NVLink interrupt in confidential-computing mode", _W, NVLINK),
    XidInfo(171, "uncorrectable DRAM error", _C, DRAIN_RESET_RMA),
    XidInfo(172, "uncorrectable SRAM error", _C, DRAIN_RESET_RMA),
]

#: code -> what gputui knows of it (unused and reserved codes are absent on purpose)
XIDS: dict[int, XidInfo] = {entry.code: entry for entry in _ENTRIES}
