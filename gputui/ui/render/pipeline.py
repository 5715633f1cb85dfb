"""The operand pipeline of one node as a plain Rich renderable.

The chain runs driver → container-toolkit → operator-validator (driver-validation →
toolkit-validation → cuda-validation → plugin-validation) → device-plugin and the rest. When
a node has no GPUs, the operator wants to know *where the chain breaks*: that stage is put in
a banner above the table and drawn in the critical style, and every later stage that is not
ready reads "waiting on <that stage>" instead of a pile of unrelated-looking init-container
waits. Each stage is one unwrapped line, so a widget can scroll the cursor row into view by
line number (:attr:`PipelineRender.cursor_line`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from gputui.domain.model import NodeView, PipelineStage, StageStatus, SubStage
from gputui.domain.timefmt import duration
from gputui.ui.render.style import (
    BOLD,
    PLAIN,
    STATUS_SYMBOL,
    UNKNOWN_ROLE,
    UNKNOWN_WORD,
    Palette,
    status_word,
)

#: the operand whose init containers are the readiness chain itself: always expanded
VALIDATOR = "operator-validator"
_WAITING_PREFIX = "waiting in init container "


@dataclass(frozen=True, slots=True)
class PipelineRender:
    """A rendered pipeline in two parts, so a widget can keep the head (node, versions,
    where the chain breaks) in sight while the stage table scrolls.

    Attributes:
        head: title line and the two-line break banner.
        body: the stage table and the selected stage in full.
        cursor_line: 0-based line of the cursor row within ``body``, for scrolling.
    """

    head: RenderableType
    body: RenderableType
    cursor_line: int | None

    @property
    def renderable(self) -> RenderableType:
        """Head and body as one renderable (plain print-outs, tests)."""
        return Group(self.head, Text(""), self.body)


def stage_names(node: NodeView | None) -> tuple[str, ...]:
    """Operands in chain order: what the cursor moves over."""
    return tuple(s.operand for s in node.pipeline.stages) if node else ()


def versions_line(node: NodeView) -> Text:
    """``driver 550.90.07 · kernel 6.8.0-1015-gcp``: side by side because a kernel update
    with a driver that was never rebuilt for it is the most common cause of a failed driver."""
    driver = node.driver_version or "unknown"
    kernel = node.kernel or "unknown"
    return Text.assemble(("driver ", "dim"), driver, ("  ·  kernel ", "dim"), kernel)


def _short_detail(stage: PipelineStage) -> str:
    if stage.detail.startswith(_WAITING_PREFIX):
        return "init: " + stage.detail[len(_WAITING_PREFIX):]
    return stage.detail


def stage_reason(stage: PipelineStage, broken: PipelineStage | None, after_break: bool,
                 wide: bool = True) -> str:
    """Why a stage is not ready, in the operator's words.

    A stage past the break that is progressing is waiting on the broken stage, whatever init
    container it happens to sit in; its own detail follows in brackets. A stage with no pod
    at all (``absent``) is not waiting on anything: scheduling does not depend on the chain.
    """
    if stage.status in (StageStatus.READY, StageStatus.DISABLED) and not stage.detail:
        return ""
    if after_break and broken is not None and stage.status is StageStatus.PROGRESSING:
        own = _short_detail(stage) if wide else ""
        return f"waiting on {broken.operand}" + (f" ({own})" if own else "")
    return stage.detail or stage.reason


def banner(node: NodeView, palette: Palette = PLAIN) -> Text:
    """The first line the eye lands on: where the chain breaks, or that it is whole."""
    stages = node.pipeline.stages
    if node.loading:
        return Text("… loading: the operand pods are still being listed\n",
                    style=palette.role("progress"), no_wrap=True, overflow="ellipsis")
    if not stages:
        return Text("no operand pods known on this node\n", style=palette.role("muted"),
                    no_wrap=True, overflow="ellipsis")
    broken = node.pipeline.first_broken()
    if node.unknown and (broken is None or broken.status is StageStatus.UNKNOWN):
        return Text(f"{UNKNOWN_WORD}: cannot read {', '.join(node.unknown)} (forbidden): "
                    "which operands run here, and how, is not known\n",
                    style=palette.role(UNKNOWN_ROLE), no_wrap=True, overflow="ellipsis")
    if broken is None:
        return Text(f"{STATUS_SYMBOL[StageStatus.READY]} chain complete: every stage ready\n",
                    style=palette.role("ok"), no_wrap=True, overflow="ellipsis")
    waiting = _waiting_count(node, broken)
    tail = f" · {waiting} later stage{'s' if waiting != 1 else ''} wait on it" if waiting else ""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"{STATUS_SYMBOL[broken.status]} chain breaks at {broken.operand}",
                style=palette.status(broken.status) + BOLD)
    text.append(f": {broken.status.value}{tail}")
    text.append(f"\n  {broken.detail or broken.reason or 'no detail'}")
    return text


def _waiting_count(node: NodeView, broken: PipelineStage) -> int:
    stages = node.pipeline.stages
    start = stages.index(broken) + 1
    return sum(1 for s in stages[start:] if s.status is StageStatus.PROGRESSING)


def _show_substages(stage: PipelineStage) -> bool:
    """Validator steps always (they are the chain); others only when a step failed."""
    if not stage.substages:
        return False
    return stage.operand == VALIDATOR or any(
        s.status is StageStatus.FAILED for s in stage.substages)


def _table(wide: bool) -> Table:
    table = Table(box=None, padding=(0, 1), pad_edge=False, expand=True, show_edge=False)
    table.add_column("", width=1, no_wrap=True)
    table.add_column("stage", no_wrap=True, min_width=16)
    table.add_column("state", no_wrap=True, min_width=11)
    table.add_column("rst", justify="right", no_wrap=True, min_width=3)
    if wide:
        table.add_column("age", justify="right", no_wrap=True, min_width=5)
        table.add_column("pod", no_wrap=True, overflow="ellipsis", ratio=2)
    table.add_column("why not ready", no_wrap=True, overflow="ellipsis", ratio=3)
    return table


def _stage_row(stage: PipelineStage, reason: str, *, cursor: bool, broken: bool, wide: bool,
               now: float, palette: Palette) -> list[Text]:
    state_style = palette.status(stage.status)
    name_style = state_style + BOLD if broken else None
    cells = [
        Text("▶" if cursor else ""),
        Text(stage.operand, style=name_style or ""),
        Text(status_word(stage.status) + (" ◀" if broken else ""), style=state_style),
        Text(str(stage.shown_restarts) if stage.pod else "", style=palette.role("crit")
             if stage.shown_restarts > 10 else ""),
    ]
    if wide:
        age = duration(now - stage.since) if stage.since is not None else ""
        cells += [Text(age), Text(stage.pod or "—", style=palette.role("muted"))]
    cells.append(Text(reason, style=state_style if broken else ""))
    return cells


def _sub_row(sub: SubStage, wide: bool, palette: Palette) -> list[Text]:
    style = palette.status(sub.status)
    cells = [Text(""), Text(f"  └ {sub.name}", style=palette.role("muted")),
             Text(status_word(sub.status), style=style),
             Text(str(sub.restarts) if sub.restarts else "")]
    if wide:
        cells += [Text(""), Text("")]
    cells.append(Text(sub.detail))
    return cells


def render_pipeline(node: NodeView | None, now: float, cursor: str | None = None, *,
                    wide: bool = False, palette: Palette = PLAIN,
                    missing: str | None = None) -> PipelineRender:
    """The pane body for ``node``.

    Args:
        node: the node, None when nothing is selected.
        now: the app clock (epoch seconds) for ages.
        cursor: operand name under the cursor, or None.
        wide: add the age and pod columns (160 columns and more).
        palette: role styles from the theme; colourless by default.
        missing: the selected node's name when it is not in the snapshot (deleted).
    """
    if node is None:
        note = (f"node {missing} is not in the cluster any more" if missing
                else "no node selected")
        return PipelineRender(Text(note, style=palette.role("muted")), Text(""), None)
    title = Text.assemble((node.name, "bold"), "   ", versions_line(node),
                          no_wrap=True, overflow="ellipsis")
    table, cursor_line = _stage_table(node, now, cursor, wide, palette)
    parts: list[RenderableType] = [table]
    selected = node.pipeline.stage(cursor) if cursor else None
    if selected is not None:
        parts += [Text(""), stage_footer(selected, now, palette)]
    return PipelineRender(Group(title, banner(node, palette)), Group(*parts), cursor_line)


def _stage_table(node: NodeView, now: float, cursor: str | None, wide: bool,
                 palette: Palette) -> tuple[Table, int | None]:
    """The stage rows (substages under their stage) and the cursor row's line number."""
    broken = node.pipeline.first_broken()
    if broken is not None and broken.status is StageStatus.UNKNOWN:
        broken = None  # not known to break there: the banner says what cannot be read
    table = _table(wide)
    cursor_line: int | None = None
    after = False
    line = 1  # below the table header
    for stage in node.pipeline.stages:
        is_broken = stage is broken
        here = stage.operand == cursor
        if here:
            cursor_line = line
        table.add_row(*_stage_row(stage, stage_reason(stage, broken, after, wide), cursor=here,
                                  broken=is_broken, wide=wide, now=now, palette=palette),
                      style="reverse" if here else None)
        line += 1
        if _show_substages(stage):
            for sub in stage.substages:
                table.add_row(*_sub_row(sub, wide, palette))
                line += 1
        after = after or is_broken
    return table, cursor_line


def stage_footer(stage: PipelineStage, now: float, palette: Palette = PLAIN) -> Text:
    """The selected stage in full (wrapping): pod, container, since, detail, keys."""
    text = Text()
    text.append(f"{stage.operand}: ", style=BOLD)
    text.append(status_word(stage.status), style=palette.status(stage.status))
    if stage.since is not None:
        text.append(f" · up {duration(now - stage.since)}")
    if stage.deploy_label is not None:
        text.append(f" · deploy label {stage.deploy_label}",
                    style=palette.role("paused") if stage.status is StageStatus.PAUSED else "")
    if stage.pod:
        text.append(f"\npod {stage.namespace or '?'}/{stage.pod}")
        if stage.container:
            text.append(f" · container {stage.container}")
    if stage.detail:
        text.append(f"\n{stage.detail}")
    keys = "l/enter log · e events" if stage.pod else "no pod: nothing to open"
    text.append(f"\n{keys}", style=palette.role("muted"))
    return text
