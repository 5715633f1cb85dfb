"""The request layer's rules: a bounded rate, Retry-After honoured, jittered back-off, limits."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from gputui.sources import retry
from gputui.sources.errors import ApiStatusError, SourceError, UnreachableError
from gputui.sources.retry import RateLimiter, RetryPolicy, with_retries


class FakeTime:
    """A clock that only moves when someone sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(retry.time, "sleep", fake.sleep)
    monkeypatch.setattr(retry.time, "monotonic", fake.clock)
    return fake


def failing(errors: list[SourceError]) -> tuple[Callable[[], str], list[int]]:
    calls = [0]

    def call() -> str:
        calls[0] += 1
        if errors:
            raise errors.pop(0)
        return "ok"

    return call, calls


def test_the_rate_stays_bounded_however_many_ask(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeTime()
    limiter = RateLimiter(rate=50, burst=100, clock=fake.clock, sleep=fake.sleep)
    caplog.set_level(logging.DEBUG, "gputui.sources.retry")
    for _ in range(1100):
        limiter.acquire()
    # 100 at once, then 50 a second: 1,000 more take 20 s, never less
    assert fake.now == pytest.approx(20.0, abs=0.05)
    assert "rate limit: waiting" in caplog.text


def test_retry_after_is_honoured_then_success(fake_time: FakeTime,
                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "gputui.sources.retry")
    call, calls = failing([ApiStatusError(429, "TooManyRequests", "slow down", 3.0),
                           ApiStatusError(503, "ServiceUnavailable", "busy", 1.0)])
    assert with_retries(call, "GET /api/v1/nodes", RetryPolicy()) == "ok"
    assert calls[0] == 3
    assert fake_time.slept[0] >= 3.0 and fake_time.slept[1] >= 1.0
    assert "Retry-After 3 s" in caplog.text and "GET /api/v1/nodes" in caplog.text


def test_back_off_grows_with_jitter_up_to_the_cap(fake_time: FakeTime) -> None:
    policy = RetryPolicy(max_attempts=8, initial=0.5, cap=4.0, deadline=1000)
    call, _ = failing([ApiStatusError(500, "InternalError", "x") for _ in range(7)])
    with_retries(call, "GET /x", policy)
    assert len(fake_time.slept) == 7 and max(fake_time.slept) <= 4.0 * 1.5
    assert fake_time.slept[0] < fake_time.slept[-1]
    assert len(set(fake_time.slept)) == 7  # jittered: no two clients retry in step


def test_limits(fake_time: FakeTime) -> None:
    call, calls = failing([ApiStatusError(429, "TooManyRequests", "x", 1.0)] * 20)
    with pytest.raises(ApiStatusError):
        with_retries(call, "GET /x", RetryPolicy(max_attempts=4))
    assert calls[0] == 4
    call, calls = failing([ApiStatusError(404, "NotFound", "x")])
    with pytest.raises(ApiStatusError):
        with_retries(call, "GET /x", RetryPolicy())
    assert calls[0] == 1  # not worth asking again
    call, calls = failing([UnreachableError("refused", no_answer=True)] * 20)
    with pytest.raises(UnreachableError):
        with_retries(call, "GET /x", RetryPolicy())
    assert calls[0] == RetryPolicy().no_answer_attempts  # a down server is said soon
    call, calls = failing([UnreachableError("reset mid-body")] * 20)
    with pytest.raises(UnreachableError):
        with_retries(call, "GET /x", RetryPolicy(deadline=5.0))
    assert 1 < calls[0] < RetryPolicy().max_attempts  # the deadline stops it first


def test_a_closing_client_stops_waiting() -> None:
    import threading

    stop = threading.Event()
    stop.set()
    call, calls = failing([ApiStatusError(429, "TooManyRequests", "x", 30.0)] * 3)
    with pytest.raises(ApiStatusError):
        with_retries(call, "GET /x", RetryPolicy(), stop)
    assert calls[0] == 1
