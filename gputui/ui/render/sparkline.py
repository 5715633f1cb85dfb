"""Fixed-scale braille sparklines: two samples per character cell.

Textual's ``Sparkline`` scales each series to its own min..max, so a GPU pinned at 98 %
draws as an empty line and a 2 % wobble fills the cell. Metrics need fixed scales
(0-100 % for utilisation, 0-framebuffer total for memory, the GPU's own limits for power
and clocks). A braille character is a 2x4 dot grid: its left column draws one sample and its
right column the next, so 60 cells hold 120 samples.
"""

from __future__ import annotations

from collections.abc import Sequence

#: dots of a braille cell's left / right column, bottom to top (Unicode dot order 7,3,2,1 / 8,6,5,4)
LEFT_DOTS = (0x40, 0x04, 0x02, 0x01)
RIGHT_DOTS = (0x80, 0x20, 0x10, 0x08)
BRAILLE_BASE = 0x2800
LEVELS = len(LEFT_DOTS)
#: one-character bars for a single value (the node list's utilisation column)
BARS = " ▁▂▃▄▅▆▇█"


def scale_level(value: float, low: float, high: float, levels: int = LEVELS) -> int:
    """How many of ``levels`` dots ``value`` fills on the fixed ``low..high`` scale.

    Anything above ``low`` shows at least one dot (an idle GPU and one at 1 % must differ);
    values outside the scale are clamped; a degenerate scale draws nothing.
    """
    if high <= low or value <= low:
        return 0
    fraction = min(1.0, (value - low) / (high - low))
    return max(1, min(levels, round(fraction * levels)))


def _column(level: int, dots: tuple[int, ...]) -> int:
    bits = 0
    for dot in dots[:level]:
        bits |= dot
    return bits


def braille_line(values: Sequence[float], low: float, high: float, width: int) -> str:
    """The last ``2 * width`` values as ``width`` braille cells, newest on the right.

    Fewer values leave blank cells on the left (history that gputui has not seen yet).
    """
    if width <= 0:
        return ""
    shown = list(values[-2 * width:])
    if len(shown) % 2:
        shown.insert(0, low)  # keep pairs aligned so the newest sample is the right column
    cells = []
    for i in range(0, len(shown), 2):
        left, right = shown[i], shown[i + 1]
        code = (_column(scale_level(left, low, high), LEFT_DOTS) |
                _column(scale_level(right, low, high), RIGHT_DOTS))
        cells.append(chr(BRAILLE_BASE + code))
    return chr(BRAILLE_BASE) * (width - len(cells)) + "".join(cells)


def bar(value: float, low: float, high: float) -> str:
    """One block character for ``value`` on ``low..high`` (blank at ``low``)."""
    return BARS[scale_level(value, low, high, len(BARS) - 1)]
