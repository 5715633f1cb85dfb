"""Reading the audit log back, for the handoff summary's "operations taken".

Why its own module: :mod:`gputui.actions.audit` only appends. The summary reads the file's
end (the newest lines: at most :data:`MAX_BYTES`, so a log of years costs no more than a
day's), decodes each JSON line and leaves the pairing to the pure
:func:`gputui.domain.operations.pair_operations`. A line that is not a JSON object (cut off
by a crash, edited by hand) is skipped and counted. The file is opened with ``O_NOFOLLOW``:
a symlink planted at its path is refused, not followed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

#: the most of the log's end that is read (about 10,000 cordons' intent and outcome lines)
MAX_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class AuditRead:
    """The decoded lines (oldest first) and one sentence when reading fell short."""

    entries: tuple[dict[str, object], ...] = ()
    note: str = ""
    skipped: int = field(default=0)
    #: the file is longer than what was read: lines before ``entries`` were left out
    cut: bool = False


def read_audit(path: str | Path, max_bytes: int = MAX_BYTES) -> AuditRead:
    """The JSON lines at the end of the audit log at ``path``.

    A missing file is no operation and no note (nothing was ever done with this log);
    one that cannot be read says why in ``note``: the summary then says the operations are
    unknown rather than none.
    """
    target = Path(path).expanduser()
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        return AuditRead()
    except OSError as error:
        return AuditRead(note=f"cannot read the audit log {target}: {error.strerror or error}")
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - max_bytes)
        os.lseek(fd, start, os.SEEK_SET)
        data = _read_all(fd)
    except OSError as error:
        return AuditRead(note=f"cannot read the audit log {target}: {error.strerror or error}")
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line was cut by where reading began
    return _decode(lines, start > 0)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _decode(lines: list[bytes], cut: bool) -> AuditRead:
    entries: list[dict[str, object]] = []
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:  # a line cut by a crash, or not JSON: skipped and counted
            skipped += 1
            continue
        if isinstance(value, dict):
            entries.append(value)
        else:
            skipped += 1
    note = f"{skipped} unreadable line(s) skipped" if skipped else ""
    return AuditRead(tuple(entries), note, skipped, cut)
