"""A recording is shared after incidents: a hostile one is one line and exit 2, in bounded
memory (issue 27: a 1 MB file took ``check --replay`` to 3.1 GB, a 5,000-deep nesting and an
integer of 400 digits crashed ``gputui replay`` with a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path

import msgspec
import pytest

from gputui.sources.tape.format import FORMAT, MAGIC
from tests.helpers import GPUTUI_WITH_PEAK, peak_of

REPO = Path(__file__).resolve().parents[2]
HEADER = msgspec.json.encode({MAGIC: FORMAT, "context": "c", "server": "s",
                              "recorded_at": 1.0, "version": "x"}) + b"\n"
#: the most memory a hostile recording may take gputui to (the issue's bound)
MEMORY_LIMIT = 500 << 20


def _gzip(pieces: Iterator[bytes]) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(packer.compress(piece) for piece in pieces) + packer.flush()


def _run(*args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """``gputui ARGS`` and the peak memory (bytes) of the process that ran it."""
    result = subprocess.run([sys.executable, "-c", GPUTUI_WITH_PEAK, *args],
                            capture_output=True, text=True, timeout=120, check=False,
                            stdin=subprocess.DEVNULL, env=dict(os.environ, PYTHONPATH=str(REPO)))
    result.stderr, peak = peak_of(result.stderr)
    return result, peak


def _frames(count: int) -> Iterator[bytes]:
    """``count`` small valid frames: they inflate 1,000 times their compressed size."""
    yield HEADER
    frame = b'{"k":"timeline","t":2.0,"events":[]}\n'
    for _ in range(count // 10_000):
        yield frame * 10_000


def _one_long_line(size: int) -> Iterator[bytes]:
    yield HEADER
    for _ in range(size >> 20):
        yield b"1" * (1 << 20)


@pytest.mark.parametrize("kind", ["many-frames", "one-line"])
@pytest.mark.parametrize("command", ["replay", "check"])
def test_a_decompression_bomb_is_refused_in_bounded_memory(tmp_path: Path, kind: str,
                                                           command: str) -> None:
    data = _gzip(_frames(10_000_000) if kind == "many-frames" else _one_long_line(1 << 30))
    path = tmp_path / "bomb.tape"
    path.write_bytes(data)
    assert len(data) < 2 << 20  # a small file ...
    args = ["replay", str(path)] if command == "replay" else [
        "check", "--replay", str(path), "--at", "+0s"]
    result, peak = _run(*args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [result.stderr] and "Traceback" not in result.stderr
    assert "is damaged or too big" in result.stderr and str(path) in result.stderr
    assert peak < MEMORY_LIMIT, f"peak {peak >> 20} MB"


def _deep(depth: int) -> bytes:
    return b'{"k":"timeline","t":2.0,"events":[' + b"[" * depth + b"]" * depth + b"]}\n"


@pytest.mark.parametrize("line, why", [
    (_deep(5_000), "nested too deep"),
    (b'{"k":"timeline","t":' + b"1" * 400 + b',"events":[]}\n', "out of range"),
    (b'{"k":"timeline","t":2.0,"events":[{"at":' + b"9" * 400 + b'}]}\n', "out of range"),
], ids=["nesting-5000", "time-10e400", "event-time-10e400"])
@pytest.mark.parametrize("command", ["replay", "check"])
def test_crafted_values_are_one_line_not_a_traceback(tmp_path: Path, line: bytes, why: str,
                                                     command: str) -> None:
    path = tmp_path / "crafted.tape"
    path.write_bytes(_gzip(iter([HEADER, line])))
    args = ["replay", str(path)] if command == "replay" else [
        "check", "--replay", str(path), "--at", "+0s"]
    result, _ = _run(*args)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
    assert f"recording {path} is damaged" in result.stderr and why in result.stderr


def test_a_threshold_of_400_digits_in_the_header_is_left_out() -> None:
    from gputui.domain.thresholds import DomainThresholds, thresholds_from_json

    base = DomainThresholds()
    numeric = [f.name for f in fields(base) if isinstance(getattr(base, f.name), float)]
    assert numeric
    assert thresholds_from_json({name: 10 ** 400 for name in numeric}, base) == base
    assert thresholds_from_json({numeric[0]: 7}, base) == replace(base, **{numeric[0]: 7.0})
