"""Durations in the words an operator reads at 3 a.m.: ``45 s``, ``12 min``, ``31 h``, ``3 d``."""

from __future__ import annotations


def duration(seconds: float) -> str:
    """A short human duration; negative values read as ``0 s``."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{int(seconds)} s"
    if seconds < 90 * 60:
        return f"{int(seconds // 60)} min"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} d"


def next_change(seconds: float) -> float:
    """The smallest elapsed time after ``seconds`` at which :func:`duration` reads
    differently (``89 s`` → ``1 min`` at 90, ``1 min`` → ``2 min`` at 120 ...): when text
    holding an age must be made again to stay true."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return float(int(seconds) + 1)
    if seconds < 90 * 60:
        return float((int(seconds // 60) + 1) * 60)
    if seconds < 48 * 3600:
        return float((int(seconds // 3600) + 1) * 3600)
    return float((int(seconds // 86400) + 1) * 86400)
