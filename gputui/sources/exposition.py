"""The Prometheus text exposition format, read with ``prometheus_client``'s own parser.

dcgm-exporter serves text format 0.0.4; hand-written parsing gets escapes, HELP lines and
timestamps wrong in small ways, so every scrape goes through the reference parser.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from gputui.domain.sanitize import clean_line, clean_tree
from gputui.sources.errors import SourceError


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample: metric name, labels (``__name__`` not included), value."""

    name: str
    labels: dict[str, str]
    value: float


def parse_samples(text: str, names: Collection[str] | None = None) -> list[Sample]:
    """Every sample in ``text`` (only metrics in ``names`` when given).

    Raises:
        SourceError: the body is not valid exposition text.
    """
    samples: list[Sample] = []
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if names is None or sample.name in names:
                    samples.append(Sample(clean_line(sample.name), clean_tree(sample.labels),
                                          float(sample.value)))
    except ValueError as error:
        raise SourceError(f"unreadable metrics text: {str(error).splitlines()[0]}") from None
    return samples
