"""``gputui check``: connect, build one snapshot, print the findings, exit 0/1/2.

For scripts, cron jobs and runbooks (ARCHITECTURE.md, "CLI contract"): the table works
without a TTY, ``--json`` prints exactly the contract object (the domain's
``to_check_json``), and every failure to run is one ``gputui: <message>`` line on stderr
with exit code 2, never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import msgspec

from gputui.domain.checkjson import exit_code, gpu_health_unknown, to_check_json
from gputui.domain.model import ClusterSnapshot, Finding
from gputui.domain.readgaps import METRICS, gap_phrase, health_unknowable
from gputui.domain.sanitize import clean_line, clean_tree
from gputui.logsetup import redact
from gputui.settings import Settings
from gputui.sources.errors import SourceError

if TYPE_CHECKING:  # the reader loads only for --replay
    from gputui.sources.tape.reader import TapeReader

EXIT_CANNOT_RUN = 2
_COLUMNS = ("SEVERITY", "CODE", "NODE", "MESSAGE")
#: the hint goes on its own indented line under its finding: messages and hints are
#: sentences, and a fifth column would push every row past any terminal's width
_HINT_PREFIX = "hint: "
#: JSON escapes that decode to characters :mod:`gputui.domain.sanitize` does not let through
#: (``\\n`` and ``\\t`` are allowed in text)
_JSON_MARKS = (b"\\u", b"\\r", b"\\b", b"\\f", b"\x7f")


def run_check(settings: Settings, as_json: bool = False, out: TextIO | None = None,
              err: TextIO | None = None, fmt: str = "table",
              replay: tuple[str, str] | None = None) -> int:
    """Run the check and print the report (``fmt``: ``table`` or ``markdown``, the handoff
    summary); returns the process exit code, the same for every format. ``replay``: (FILE,
    TIME) reads the recording at that time instead of a cluster (``--replay --at``)."""
    from gputui.session import read_once, session_kind

    stdout = out or sys.stdout
    stderr = err or sys.stderr
    try:
        notes: list[str] = []
        recorded: RecordedMoment | None = None
        if session_kind(settings, replay) == "replay" and replay is not None:
            recorded = replay_snapshot(settings, replay[0], replay[1], notes)
            snapshot = recorded.snapshot
        else:
            snapshot = read_once(settings, notes)
    except SourceError as error:
        print(f"gputui: {clean_line(str(error))}", file=stderr)
        return EXIT_CANNOT_RUN
    except Exception as error:  # noqa: BLE001 - contract: one line, exit 2, no traceback
        # the text of a library's exception may quote a header or a token: scrubbed first
        detail = clean_line((redact(str(error)).splitlines() or [""])[0])
        print(f"gputui: internal error: {type(error).__name__}: {detail}", file=stderr)
        return EXIT_CANNOT_RUN
    if as_json:
        # msgspec writes the same document as json.dump(indent=2) (UTF-8 kept, not \u
        # escaped) in a fraction of the time: 5,000 nodes are ~20 MB of JSON
        text = _check_json(snapshot)
        stdout.write(text.decode())
        stdout.write("\n")
    elif fmt == "markdown" and recorded is not None:
        from gputui.handoff import replay_summary

        stdout.write(replay_summary(snapshot, recorded.path, recorded.timeline,
                                    recorded.start, recorded.at))
    elif fmt == "markdown":
        from gputui.handoff import check_summary

        stdout.write(check_summary(snapshot, settings.audit_log))
    else:
        stdout.write(render_table(snapshot, notes))
    stdout.flush()
    return exit_code(snapshot)


@dataclass(frozen=True)
class RecordedMoment:
    """One moment of a recording, as ``check --replay --at`` reports it."""

    snapshot: ClusterSnapshot
    path: str
    #: the recorded timeline up to ``at`` (dicts, read by :func:`events_from_json`)
    timeline: Sequence[object]
    start: float
    at: float


def replay_snapshot(settings: Settings, path: str, at_text: str,
                    notes: list[str]) -> RecordedMoment:
    """The snapshot a recording's session built at ``at_text``: the recorded input of the
    last build by then, built again with ``now`` = that time, so findings and their ages
    are those of that moment (judged by the thresholds the session recorded, this gputui's
    for a file that has none); with the recorded timeline
    up to then for the Markdown summary.

    Raises:
        TapeError: the file is not a readable recording, or the time is not in it.
    """
    from gputui import gctuning
    from gputui.domain.at_time import format_at, parse_at
    from gputui.domain.snapshot import SnapshotBuilder
    from gputui.sources.tape.format import TapeError
    from gputui.sources.tape.reader import TapeReader

    reader = TapeReader.open(Path(path).expanduser())
    try:
        at = parse_at(at_text, reader.start, reader.end)
    except ValueError as error:
        raise TapeError(f"--at: {error}") from None
    objects = reader.objects_at(at)
    if objects.loading:  # fail closed: a half-read moment would print "no findings"
        raise TapeError(_still_loading(reader, at, objects.loading))
    with gctuning.paused():  # as every caller of a build does (gctuning's rule)
        snapshot: ClusterSnapshot = SnapshotBuilder(reader.thresholds(settings.thresholds)
                                                    ).build(objects, at)
    notes.append(f"replay of {Path(path).name} at {format_at(at)}")
    return RecordedMoment(snapshot, path, reader.timeline_until(at), reader.start, at)


def _still_loading(reader: TapeReader, at: float, loading: Collection[str]) -> str:
    """The one line for a moment the session had not read everything yet (its first lists
    were still arriving): what was missing, and the first complete moment if there is one."""
    from gputui.domain.at_time import format_at

    lists = ", ".join(sorted(loading))
    complete = reader.first_complete(after=at)
    later = (f"; the first complete read is at {format_at(complete)}" if complete is not None
             else "; it never read everything")
    return (f"at {format_at(at)} the recorded session was still loading ({lists}), so its "
            f"findings are unknown{later}")


def _check_json(snapshot: ClusterSnapshot) -> bytes:
    """The contract object as indented JSON, with a last check that no control character
    got past the sources' cleaning: the encoder escapes C0 (``jq -r`` would restore them)
    and writes C1 and format characters raw, so a report with an escape or a character
    that is not printable is cleaned (:func:`clean_tree`) and encoded again. A clean report
    costs a few scans of its bytes, in C."""
    document = to_check_json(snapshot)
    text = msgspec.json.encode(document)
    if any(mark in text for mark in _JSON_MARKS) or not (
            text.isascii() or text.decode().isprintable()):
        text = msgspec.json.encode(clean_tree(document))
    return msgspec.json.format(text, indent=2)


def header_line(snapshot: ClusterSnapshot, notes: Sequence[str] = ()) -> str:
    """Context, ClusterPolicy state, a count of what was found, and the reader's notes."""
    policy = snapshot.cluster_policy
    state = policy.state
    if policy.not_ready_states:
        state += f" ({', '.join(policy.not_ready_states)})"
    name = policy.name or "ClusterPolicy"
    counts: dict[str, int] = {}
    for finding in snapshot.findings:
        counts[finding.severity.value] = counts.get(finding.severity.value, 0) + 1
    summary = ", ".join(f"{n} {sev}" for sev, n in counts.items()) or "none"
    parts = [f"context {snapshot.context or '-'}", f"{name}: {state}",
             f"GPU nodes {len(snapshot.nodes)}", f"findings: {summary}"]
    if snapshot.forbidden:
        parts.append(f"forbidden: {', '.join(sorted(snapshot.forbidden))}")
    return clean_line("  ".join(parts + list(notes)))


def _row(finding: Finding) -> tuple[str, ...]:
    return (finding.severity.value, finding.code, clean_line(finding.node or "-"),
            clean_line(finding.message.replace("\n", " ")))


def _format_rows(findings: Sequence[Finding]) -> list[str]:
    """Aligned SEVERITY, CODE and NODE columns; MESSAGE last; each hint under its row."""
    rows = [_COLUMNS] + [_row(f) for f in findings]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_COLUMNS) - 1)]
    indent = " " * (sum(widths) + 2 * len(widths))
    lines = []
    for index, row in enumerate(rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join(cells + [row[-1]]).rstrip())
        hint = clean_line(findings[index - 1].hint.replace("\n", " ")) if index else ""
        if hint:
            lines.append(f"{indent}{_HINT_PREFIX}{hint}")
    return lines


def render_table(snapshot: ClusterSnapshot, notes: Sequence[str] = ()) -> str:
    """The human report: a header line, then one row per finding (most severe first)
    with its hint on the next line."""
    lines = [header_line(snapshot, notes)]
    lines.extend(gap_lines(snapshot))
    if snapshot.findings:
        lines.extend(_format_rows(snapshot.findings))
    elif health_unknowable(snapshot.unreadable):
        lines.append("no findings in what could be read: health unknown (exit 2)")
    elif gpu_health_unknown(snapshot):
        lines.append("no findings in what could be read: GPU health unknown (exit 2)")
    else:
        lines.append("no findings")
    return "\n".join(lines) + "\n"


def gap_lines(snapshot: ClusterSnapshot) -> list[str]:
    """One line per resource that could not be read, with what it hides: a report that
    leaves them out would read as healthy (ARCHITECTURE.md, CLI contract)."""
    blind = gpu_health_unknown(snapshot)  # no GPU's health read: more than partial
    return [("unknown: " if gap.required or (blind and gap.resource == METRICS)
             else "partial: ") + gap_phrase(gap) for gap in snapshot.gaps]
