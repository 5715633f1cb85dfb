"""The two typed prompts say what they do: the ``:`` line's Tab takes the suggestion it
promises, and the ``/`` filter's placeholder and tooltip name the grammar the filter parses
(:mod:`gputui.domain.selectors` through :class:`gputui.ui.node_rows.NodeFilter`)."""

from __future__ import annotations

from textual.widgets import Input

from gputui.domain.selectors import filter_terms, is_requirement
from gputui.ui.commands import command
from gputui.ui.screens.command_line import CommandLine
from tests.ui.conftest import FrozenApp, settle

#: every selector form the parser takes, as the placeholder and tooltip spell them
FORMS = ("k=v", "k!=v", "k in (a,b)", "k notin (a,b)", "!k")


async def test_tab_on_the_command_line_takes_the_suggestion(frozen_app: FrozenApp) -> None:
    """Textual's Input has no Tab completion (its suggestion is taken with the right arrow):
    Tab is bound by the prompt. "fin" + Tab is "findings"; Tab with no suggestion changes
    nothing; the completed name runs."""
    app = frozen_app("healthy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("colon", *"zz", "tab")
        await settle(pilot)
        field = app.screen.query_one("#command-input", Input)
        assert isinstance(app.screen, CommandLine) and field.value == "zz"
        await pilot.press("ctrl+u", *"fin")
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        assert field.value == "findings"
        assert "tab completes" in (field.placeholder or "")
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "findings"


async def test_the_filter_placeholder_shows_the_grammar_whole_at_80_columns(
        frozen_app: FrozenApp) -> None:
    app = frozen_app("healthy")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await settle(pilot)
        field = app.screen.query_one("#node-filter", Input)
        placeholder = str(field.placeholder)
        assert len(placeholder) <= field.content_region.width  # nothing cut off
    _names_the_parsed_grammar(placeholder)


def test_the_filter_tooltip_names_the_parsed_grammar() -> None:
    """Before, it named neither ``in`` nor ``notin`` and offered a bare ``key`` as a
    selector term, which the parser reads as free text (only a term with ``/`` or ``.``
    naming a label key tests for the key)."""
    tooltip = command("filter").tooltip
    _names_the_parsed_grammar(tooltip)
    assert "all terms must match" in tooltip


def _names_the_parsed_grammar(text: str) -> None:
    """Every selector form the parser takes is named, and each is read as one selector term
    (not free text, not split in two)."""
    for form in FORMS:
        assert form in text, (form, text)
        assert is_requirement(form) and filter_terms(form) == [form], form
