"""The header's ``read-only`` tag (``--read-only`` or a ``read_only_contexts`` match) and
``:ctx NAME`` completion on the command line."""

from __future__ import annotations

from gputui.domain.model import EMPTY_SNAPSHOT
from gputui.sources.base import Connection, SourceStatus
from gputui.ui.screens.command_line import CommandSuggester
from gputui.ui.theme import theme_palette
from gputui.ui.widgets.status_header import HeaderState, render_header

PALETTE = theme_palette({"gpu-warn": "#ffaa00", "gpu-ok": "#00ff00"})


def test_read_only_is_said_after_the_context_in_the_warning_colour() -> None:
    status = SourceStatus(Connection.CONNECTING, context="prod-eu", server="https://p:6443")
    line = render_header(HeaderState(EMPTY_SNAPSHOT, status, 1.0, read_only=True), 80,
                         PALETTE).split("\n")[0]
    assert line.plain.startswith("gputui ▸ prod-eu read-only (https://p:6443)")
    start = line.plain.index("read-only")
    styles = [span.style for span in line.spans if span.start <= start < span.end]
    assert PALETTE.role("warn") in styles
    plain = render_header(HeaderState(EMPTY_SNAPSHOT, status, 1.0), 80, PALETTE)
    assert "read-only" not in plain.plain
    assert len(line.plain) == len(plain.split("\n")[0].plain) == 80


def test_a_recorded_session_shows_a_recording_light_that_fits_80_columns() -> None:
    """``--record``: ``● rec`` after the context (after ``read-only`` when both), in the
    critical colour, and the live part keeps its place at the right edge."""
    palette = theme_palette({"gpu-warn": "#ffaa00", "gpu-ok": "#00ff00", "gpu-crit": "#ff0000"})
    status = SourceStatus(Connection.LIVE, context="prod-eu", server="https://p:6443",
                          last_update=1.0)
    both = render_header(HeaderState(EMPTY_SNAPSHOT, status, 1.0, read_only=True,
                                     recording=True), 80, palette).split("\n")[0]
    assert both.plain.startswith("gputui ▸ prod-eu read-only ● rec")
    assert len(both.plain) == 80
    start = both.plain.index("● rec")
    styles = [span.style for span in both.spans if span.start <= start < span.end]
    assert palette.role("crit") in styles
    plain = render_header(HeaderState(EMPTY_SNAPSHOT, status, 1.0), 80, palette)
    assert "● rec" not in plain.plain
    assert both.plain.split()[-1] == plain.split("\n")[0].plain.split()[-1]


async def test_ctx_completes_context_names_and_commands_still_complete() -> None:
    suggester = CommandSuggester(("lab-a", "prod-eu", "Prod-us"))
    assert await suggester.get_suggestion("ctx pr") == "ctx prod-eu"
    assert await suggester.get_suggestion("ctx Pr") == "ctx Prod-us"  # names are exact
    assert await suggester.get_suggestion("ctx prod-eu") is None
    assert await suggester.get_suggestion("ctx zz") is None
    assert await suggester.get_suggestion("findi") == "findings"
    assert await suggester.get_suggestion("FINDI") == "findings"
