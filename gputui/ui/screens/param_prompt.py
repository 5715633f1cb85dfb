"""``ParamPrompt``: asks one value an action needs before anything is planned.

A pick list when the cluster offers choices (MIG configs, sharing configs, drain options),
else text checked by the spec's ``validate``; ``esc`` cancels and nothing is planned.
Styled with the confirmation dialog (``confirm.tcss``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.text import Text
from textual import on
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from gputui.actions.base import ParamSpec
from gputui.ui.commands import bindings_for
from gputui.ui.render.plan import targets_label


class ParamPrompt(ModalScreen[str | None]):
    """Asks one value: a pick list of ``choices``, or text checked by ``spec.validate``."""

    DEFAULT_CLASSES = "confirm-screen param-prompt"  # styled in confirm.tcss
    BINDINGS = bindings_for("prompt")

    def __init__(self, title: str, spec: ParamSpec, choices: Sequence[str],
                 default: str = "", *, targets: Sequence[str] = ()) -> None:
        """``targets``: the nodes the action will act on; the title names them, so the
        operator reads which node before choosing (``mig: safe change for gpu-7``)."""
        super().__init__()
        #: the nodes the value is asked for (empty for a cluster-wide action)
        self.targets = tuple(targets)
        self.title_text = f"{title} for {targets_label(self.targets)}" if targets else title
        self.spec = spec
        self.choices = tuple(choices)
        self.default = default

    def compose(self) -> Iterable[Widget]:
        with VerticalScroll(id="prompt-body"):
            yield Static(Text(f"{self.title_text}: {self.spec.prompt}", style="bold"),
                         id="prompt-title")
            if self.choices:
                yield OptionList(*(Option(choice, id=str(i))
                                   for i, choice in enumerate(self.choices)),
                                 id="prompt-choices")
            else:
                yield Input(value=self.default, placeholder=self.spec.prompt,
                            id="prompt-input")
            yield Static("", id="prompt-error")

    def on_mount(self) -> None:
        if self.choices:
            options = self.query_one(OptionList)
            if self.default in self.choices:
                options.highlighted = self.choices.index(self.default)
            options.focus()
        else:
            self.query_one(Input).focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self._offer(self.choices[event.option_index])

    @on(Input.Submitted, "#prompt-input")
    def _typed(self, event: Input.Submitted) -> None:
        self._offer(event.value.strip())

    def _offer(self, value: str) -> None:
        error = self.spec.validate(value) if self.spec.validate else None
        if error:
            self.query_one("#prompt-error", Static).update(Text(error, style="bold"))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
