"""A small, strict parser of the Prometheus text exposition format (0.0.4) for tests."""

from __future__ import annotations

import re
from dataclasses import dataclass

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)')
SAMPLE = re.compile(rf"^({NAME})(\{{(.*)\}})?\s+(\S+)(\s+-?\d+)?$")


@dataclass(frozen=True)
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def parse(text: str) -> tuple[dict[str, str], list[Sample]]:
    """(metric → TYPE, samples); raises ValueError on anything malformed."""
    types: dict[str, str] = {}
    helps: set[str] = set()
    samples: list[Sample] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith("# HELP "):
            name = line.split()[2]
            if name in helps:
                raise ValueError(f"line {number}: second HELP for {name}")
            helps.add(name)
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split(maxsplit=3)
            if kind not in ("counter", "gauge", "histogram", "summary", "untyped"):
                raise ValueError(f"line {number}: bad type {kind}")
            if name in types:
                raise ValueError(f"line {number}: second TYPE for {name}")
            types[name] = kind
        elif line.startswith("#"):
            continue
        else:
            samples.append(_sample(line, number, types))
    return types, samples


def _sample(line: str, number: int, types: dict[str, str]) -> Sample:
    match = SAMPLE.match(line)
    if not match:
        raise ValueError(f"line {number}: not a sample: {line!r}")
    name, _, body, value, _ = match.groups()
    if name not in types:
        raise ValueError(f"line {number}: {name} has no TYPE line before it")
    labels: dict[str, str] = {}
    rest = body or ""
    while rest:
        found = LABEL.match(rest)
        if not found:
            raise ValueError(f"line {number}: bad labels {body!r}")
        if found.group(1) in labels:
            raise ValueError(f"line {number}: duplicate label {found.group(1)}")
        labels[found.group(1)] = found.group(2)
        rest = rest[found.end():]
    return Sample(name, labels, float(value))
