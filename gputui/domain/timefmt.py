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
