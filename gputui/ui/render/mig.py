"""MIG layouts drawn as slices: one bar per GPU, one cell per compute slice.

An A100/H100 has 7 compute slices (A30: 4); a ``3g.40gb`` instance takes three of them.
Drawing instances as proportional cells (``[  3g.40gb  ][2g.20gb ][1g][1g]``) lets the
operator see at a glance whether a GPU is carved for training (one big slice) or inference
(many small ones), and whether the layout shown is applied or only desired.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text

from gputui.domain.model import MigGpu, MigView, NodeMigView
from gputui.domain.timefmt import duration
from gputui.ui.render.style import BOLD, PLAIN, Palette, mig_look

_SLICES = re.compile(r"^(\d+)g\.")


def profile_slices(profile: str) -> int:
    """Compute slices a profile takes: ``3g.40gb`` → 3 (1 when it cannot be read)."""
    match = _SLICES.match(profile)
    return max(1, int(match.group(1))) if match else 1


def gpu_slices(product: str) -> int:
    """Compute slices per GPU: 4 on A30-class GPUs, 7 on A100/H100/H200/B200."""
    return 4 if "A30" in product.upper() else 7


def _cell(label: str, short: str, width: int) -> str:
    inner = width - 2
    text = label if len(label) <= inner else short if len(short) <= inner else short[:inner]
    return "[" + text.center(inner) + "]"


def slice_bar(gpu: MigGpu, slots: int = 7, cell: int = 4) -> str:
    """``[1g][1g]...`` for one GPU, ``cell`` characters per compute slice.

    Free slices read ``·``; a GPU with MIG off is one bar saying so, because the whole
    GPU is then handed out as ``nvidia.com/gpu``.
    """
    if not gpu.mig_enabled:
        return _cell("MIG off (whole GPU)", "MIG off", slots * cell)
    parts: list[str] = []
    used = 0
    for instance in gpu.instances:
        size = profile_slices(instance.profile)
        for _ in range(instance.count):
            if used + size > slots:
                break
            short = instance.profile.split(".")[0]
            parts.append(_cell(instance.profile, short, size * cell))
            used += size
    if not parts:
        return _cell("MIG on, no instances", "empty", slots * cell)
    parts.append("·" * ((slots - used) * cell))
    return "".join(parts)


def instance_summary(gpu: MigGpu) -> str:
    """``1g.10gb ×7`` or ``3g.40gb ×1, 2g.20gb ×1, 1g.10gb ×2``; "" with MIG off."""
    return ", ".join(f"{i.profile} ×{i.count}" for i in gpu.instances) if gpu.mig_enabled else ""


def state_text(view: NodeMigView, now: float, palette: Palette = PLAIN) -> Text:
    """``◐ pending for 50 min``: symbol, word and how long (the MIG manager writes no
    progress, so time in state is the only hint that it is stuck)."""
    look = mig_look(view.state)  # the raw value is shown even when gputui does not know it
    since = f" for {duration(now - view.since)}" if view.since is not None else ""
    return Text(f"{look.symbol} {view.state or look.word}{since}", style=palette.look(look))


def node_card(view: NodeMigView, now: float, *, product: str = "", cursor: bool = False,
              cell: int = 4, palette: Palette = PLAIN) -> RenderableType:
    """One node: state, desired vs applied config, a bar per GPU, the configs it offers."""
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append("▶ " if cursor else "  ")
    head.append(view.node, style=BOLD)
    head.append("   ")
    head.append_text(state_text(view, now, palette))
    head.append(f"   strategy {view.strategy or 'none'}", style=palette.role("muted"))
    applied = view.applied or ("— (pending)" if view.state == "pending" else "— (unknown)")
    lines: list[RenderableType] = [
        Text(f"desired {view.desired or '(label not set)'} · applied {applied}")]
    lines += _gpus(view, product, cell, palette)
    if view.state == "failed":
        lines.append(Text("✖ the MIG manager could not apply this config: l opens its log",
                          style=palette.role("crit")))
    source = f" (from {view.config_source})" if view.config_source else ""
    configs = " ".join(view.available_configs) or "(none found)"
    lines.append(Text(f"offers{source}: {configs}", style=palette.role("muted")))
    return Group(head, Padding(Group(*lines), (0, 0, 0, 4)))


def gpu_groups(gpus: Sequence[MigGpu]) -> list[tuple[str, MigGpu]]:
    """Consecutive GPUs with the same layout folded into one line (``GPU 0-7``), so an
    8-GPU node takes one line at 80x24 instead of eight."""
    groups: list[tuple[int, int, MigGpu]] = []
    for gpu in gpus:
        if groups and groups[-1][2].mig_enabled == gpu.mig_enabled \
                and groups[-1][2].instances == gpu.instances and groups[-1][1] + 1 == gpu.index:
            groups[-1] = (groups[-1][0], gpu.index, groups[-1][2])
        else:
            groups.append((gpu.index, gpu.index, gpu))
    return [(f"GPU {a}" if a == b else f"GPU {a}-{b}", gpu) for a, b, gpu in groups]


def _gpus(view: NodeMigView, product: str, cell: int, palette: Palette) -> list[Text]:
    if not view.gpus:
        return [Text(f"layout unknown: config {view.desired!r} not found",
                     style=palette.role("warn"))]
    slots = gpu_slices(product)
    pending = view.state != "success"
    groups = gpu_groups(view.gpus)
    width = max(len(label) for label, _ in groups)
    lines: list[Text] = []
    for label, gpu in groups:
        line = Text(f"{label.ljust(width)}  ", no_wrap=True, overflow="ellipsis")
        line.append(slice_bar(gpu, slots, cell), style=palette.role("progress") if pending else "")
        summary = instance_summary(gpu)
        if summary:
            each = " each" if "-" in label else ""
            line.append(f"  {summary}{each}", style=palette.role("muted"))
        lines.append(line)
    if view.state == "failed":
        lines.append(Text("(layout of the desired config, which was not applied)",
                          style=palette.role("muted")))
    elif pending:
        lines.append(Text("(layout of the desired config, not applied yet)",
                          style=palette.role("muted")))
    return lines


def summary_line(view: MigView, palette: Palette = PLAIN) -> Text:
    """``3 MIG nodes · 1 pending · 1 failed · cluster strategy mixed``."""
    states = [n.state for n in view.nodes.values()]
    if not states:
        return Text("no MIG-capable nodes: no GPU node carries nvidia.com/mig.capable=true",
                    style=palette.role("muted"))
    text = Text(f"{len(states)} MIG-capable node{'s' if len(states) != 1 else ''}")
    for state in ("pending", "failed"):
        count = states.count(state)
        if count:
            text.append(f" · {count} {state}", style=palette.look(mig_look(state)))
    text.append(f" · cluster strategy {view.strategy or 'none'}", style=palette.role("muted"))
    return text


def render_mig(view: MigView, now: float, products: dict[str, str] | None = None,
               cursor: str | None = None, palette: Palette = PLAIN) -> RenderableType:
    """Every MIG node's card under the summary (tests and plain print-outs)."""
    products = products or {}
    cards: Sequence[RenderableType] = [
        node_card(v, now, product=products.get(name, ""), cursor=name == cursor,
                  palette=palette) for name, v in sorted(view.nodes.items())]
    if not cards:
        return Text("no MIG-capable nodes in this cluster", style=palette.role("muted"))
    return Group(summary_line(view, palette), *cards)
