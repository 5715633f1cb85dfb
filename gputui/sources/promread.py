"""Typed readers of Prometheus' query answers: rows of labels and numbers, or an error.

Why a module of its own: Prometheus, or whatever proxy stands in front of it, answers JSON
that gputui does not control. Every value gputui uses is read here into a float or refused
with :class:`~gputui.sources.errors.AnswerError`, so a sample value that is not a number
("abc", a list, null) makes the metrics feed fall back to the exporters and say why, where a
bare ``float()`` once stopped its thread for good. Non-finite values (``NaN``, ``+Inf``) are
valid Prometheus answers that carry no reading: their rows are skipped, not refused.
"""

from __future__ import annotations

import math
from typing import Any

from gputui.sources.errors import AnswerError

#: one instant-query row: its labels and its value (None when non-finite)
Row = tuple[dict[str, str], float | None]
#: one range-query row: its labels and its finite (time, value) points
RangeRow = tuple[dict[str, str], list[tuple[float, float]]]


def result_list(result: Any) -> list[Any]:
    """``data.result`` as a list (an absent result is empty); anything else is refused."""
    if result is None:
        return []
    if not isinstance(result, list):
        raise AnswerError(f"data.result is {_kind(result)}, not a list")
    return result


def labels_of(row: Any) -> dict[str, str]:
    """A row's ``metric`` label set; label values must be strings, as Prometheus sends."""
    if not isinstance(row, dict):
        raise AnswerError(f"a result row is {_kind(row)}, not an object")
    metric = row.get("metric", {})
    if not isinstance(metric, dict) or not all(isinstance(v, str) for v in metric.values()):
        raise AnswerError("a result row's metric is not a map of label strings")
    return {str(k): v for k, v in metric.items()}


def number(text: Any) -> float | None:
    """A sample value as Prometheus writes it (a string: "42", "NaN", "+Inf") read as a
    float; None when it is not finite. A number sent bare is accepted too."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise AnswerError(f"a sample value is {_kind(text)}, not a number")
    try:
        value = float(text)
    except ValueError:
        raise AnswerError(f"sample value {str(text)[:40]!r} is not a number") from None
    return value if math.isfinite(value) else None


def _point(pair: Any) -> tuple[float | None, float | None]:
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        raise AnswerError(f"a sample is {_kind(pair)}, not a [time, value] pair")
    return number(pair[0]), number(pair[1])


def instant_rows(result: Any) -> list[Row]:
    """Every row of an instant query's ``data.result`` (a vector)."""
    rows: list[Row] = []
    for row in result_list(result):
        labels = labels_of(row)
        rows.append((labels, _point(row.get("value"))[1]))
    return rows


def range_rows(result: Any) -> list[RangeRow]:
    """Every row of a range query's ``data.result`` (a matrix), non-finite points left out."""
    rows: list[RangeRow] = []
    for row in result_list(result):
        labels = labels_of(row)
        values = row.get("values", [])
        if not isinstance(values, list):
            raise AnswerError(f"a series' values are {_kind(values)}, not a list")
        points = [(t, v) for t, v in map(_point, values) if t is not None and v is not None]
        rows.append((labels, points))
    return rows


def whole(value: float | None, what: str) -> int:
    """``value`` as a count or index; a fraction or a missing value is refused."""
    if value is None or value < 0 or value != int(value):
        raise AnswerError(f"{what} {value!r} is not a whole number")
    return int(value)


def gpu_index(labels: dict[str, str]) -> int:
    """The ``gpu`` label as an index (absent or empty: 0, as dcgm-exporter's first GPU)."""
    text = labels.get("gpu", "") or "0"
    if not text.isdigit() or len(text) > 6:
        raise AnswerError(f"gpu label {text[:20]!r} is not a GPU index")
    return int(text)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             type(None): "null"}
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else "odd")


__all__ = ["RangeRow", "Row", "gpu_index", "instant_rows", "labels_of", "number",
           "range_rows", "result_list", "whole"]
