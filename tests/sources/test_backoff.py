"""The per-target back-off and how a failed metrics read is named (issue 26)."""

from __future__ import annotations

from gputui.sources.backoff import (
    BackingOff,
    TargetBackoff,
    failure_phrase,
    failures_summary,
)
from gputui.sources.errors import AnswerError, ApiStatusError, UnreachableError


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_waits_double_up_to_five_minutes_jittered_and_an_answer_resets() -> None:
    clock = Clock()
    backoff: TargetBackoff[str] = TargetBackoff(clock=clock)
    waits = [backoff.failed("a", "503 from the pod proxy") for _ in range(8)]
    for wait, base in zip(waits, (10, 20, 40, 80, 160, 300, 300, 300), strict=True):
        assert 0.8 * base <= wait <= 1.2 * base
    assert not backoff.due("a") and backoff.due("b")
    deferred = backoff.deferred("a")
    assert isinstance(deferred, BackingOff) and deferred.phrase == "503 from the pod proxy"
    assert "asking again in" in str(deferred)
    clock.now += 400
    assert backoff.due("a") and backoff.phrase("a") == "503 from the pod proxy"
    backoff.answered("a")
    assert backoff.phrase("a") == "" and 8 <= backoff.failed("a", "x") <= 12
    backoff.keep_only(["b"])
    assert backoff.due("a") and backoff.phrase("a") == ""


def test_failures_are_named_in_a_few_words() -> None:
    assert failure_phrase(ApiStatusError(503, "ServiceUnavailable", "error trying to reach "
                                         "service: dial tcp")) == "503 from the pod proxy"
    assert failure_phrase(ApiStatusError(400, "BadRequest", "address not allowed")) == \
        "400 from the pod proxy: address not allowed"
    assert failure_phrase(UnreachableError("read timed out", no_answer=True)) == "timed out"
    assert failure_phrase(AnswerError("unreadable metrics text: x")) == \
        "unreadable answer (not metrics)"
    assert failure_phrase(BackingOff("503 from the pod proxy", 30)) == "503 from the pod proxy"
    long = failure_phrase(ApiStatusError(400, "BadRequest", "\x1b[31m" + "x" * 500))
    assert len(long) < 80 and "\x1b" not in long  # hostile text: cleaned and cut


def test_many_failures_are_summed_up_commonest_first() -> None:
    assert failures_summary(["503 from the pod proxy"] * 6, 6) == \
        "503 from the pod proxy on 6 of 6 exporters"
    assert failures_summary(["timed out", "503 from the pod proxy", "503 from the pod proxy"],
                            5) == "503 from the pod proxy on 2 of 5 exporters, timed out on 1"
    assert failures_summary([], 3) == ""
