"""The Prometheus text exposition format, read with ``prometheus_client``'s own parser.

dcgm-exporter serves text format 0.0.4; hand-written parsing gets escapes, HELP lines and
timestamps wrong in small ways, so every scrape goes through the reference parser. That
parser renames the samples of a counter declared without ``_total`` to the OpenMetrics
form (``DCGM_FI_DEV_PCIE_REPLAY_COUNTER`` becomes ``..._COUNTER_total``); every
dcgm-exporter counter is declared so, and its samples are read under the name the exporter
wrote.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from gputui.domain.sanitize import clean_line, clean_tree
from gputui.sources.errors import AnswerError

log = logging.getLogger(__name__)
_COUNTER_TYPE = re.compile(r"^#\s*TYPE\s+(\S+)\s+counter\s*$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample: metric name, labels (``__name__`` not included), value."""

    name: str
    labels: dict[str, str]
    value: float


def parse_samples(text: str, names: Collection[str] | None = None) -> list[Sample]:
    """Every sample in ``text`` with a finite value (only metrics in ``names`` when given).

    ``NaN`` and ``±Inf`` are valid exposition values that carry no reading (and no XID, no
    GPU index): they are left out here, so no reader downstream meets one.

    Raises:
        AnswerError: the body is not valid exposition text.
    """
    samples: list[Sample] = []
    declared = set(_COUNTER_TYPE.findall(text))
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                name = _as_written(sample.name, declared)
                if names is None or name in names:
                    value = float(sample.value)
                    if math.isfinite(value):
                        samples.append(Sample(clean_line(name),
                                              clean_tree(dict(sample.labels)), value))
    except (ValueError, TypeError, IndexError, KeyError) as error:
        # the reference parser raises ValueError for bad text; the others guard its
        # internals against inputs nobody tested (the body comes from any pod)
        first = str(error).splitlines()[0][:160] if str(error) else type(error).__name__
        log.debug("unreadable metrics text: %s", first)
        raise AnswerError(f"unreadable metrics text: {first}") from None
    return samples


def _as_written(name: str, counters: set[str]) -> str:
    """A counter sample's name as the text wrote it, not the parser's ``_total`` form."""
    if name.endswith("_total") and name[:-6] in counters and name not in counters:
        return name[:-6]
    return name
