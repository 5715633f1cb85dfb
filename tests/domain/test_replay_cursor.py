"""The replay's time cursor: play, pause, step by change, jump, speeds (a fake monotonic clock)."""

from __future__ import annotations

from gputui.domain.replay_cursor import SPEEDS, PlayState, ReplayCursor


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _cursor(clock: FakeClock, changes: tuple[float, ...] = (110.0, 130.0, 150.0),
            at: float | None = None) -> ReplayCursor:
    return ReplayCursor(changes, 100.0, 200.0, monotonic=clock, at=at)


def test_starts_paused_at_the_start_and_stays_there() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    clock.now += 50
    assert (cursor.position, cursor.playing, cursor.play_state()) == (100.0, False, PlayState.PAUSED)


def test_space_plays_in_real_time_and_pauses() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    cursor.toggle()
    clock.now += 12.5
    assert cursor.playing and cursor.position == 112.5
    assert cursor.play_state() is PlayState.PLAYING
    cursor.toggle()
    clock.now += 30
    assert not cursor.playing and cursor.position == 112.5


def test_play_stops_at_the_end_and_space_again_starts_over() -> None:
    clock = FakeClock()
    cursor = _cursor(clock, at=190.0)
    cursor.toggle()
    clock.now += 60
    assert (cursor.position, cursor.playing) == (200.0, False)
    assert cursor.play_state() is PlayState.END
    cursor.toggle()
    assert (cursor.position, cursor.playing) == (100.0, True)


def test_right_and_left_step_to_the_next_and_previous_change() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    seen = []
    for _ in range(5):
        cursor.step(+1)
        seen.append(cursor.position)
    assert seen == [110.0, 130.0, 150.0, 200.0, 200.0]
    back = []
    for _ in range(5):
        cursor.step(-1)
        back.append(cursor.position)
    assert back == [150.0, 130.0, 110.0, 100.0, 100.0]


def test_a_step_between_changes_goes_to_the_neighbours_and_pauses() -> None:
    clock = FakeClock()
    cursor = _cursor(clock, at=120.0)
    cursor.toggle()
    clock.now += 1  # playing: 121
    assert cursor.step(+1)
    assert (cursor.position, cursor.playing) == (130.0, False)
    cursor.jump(140.0)
    cursor.step(-1)
    assert cursor.position == 130.0


def test_g_and_big_g_and_a_typed_time_jump_and_clamp() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    cursor.to_end()
    assert cursor.position == 200.0
    cursor.to_start()
    assert cursor.position == 100.0
    cursor.jump(142.0)
    assert cursor.position == 142.0
    cursor.jump(10_000.0)
    assert cursor.position == 200.0
    cursor.jump(-5.0)
    assert cursor.position == 100.0


def test_speeds_step_through_the_table_and_keep_the_position() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    cursor.toggle()
    clock.now += 4  # 104 at 1x
    assert cursor.faster() == 2.0
    clock.now += 3  # +6 at 2x
    assert cursor.position == 110.0
    assert cursor.play_state() is PlayState.PLAYING and cursor.speed == 2.0
    for _ in range(20):
        cursor.faster()
    assert cursor.speed == SPEEDS[-1]
    for _ in range(20):
        cursor.slower()
    assert cursor.speed == SPEEDS[0]


def test_every_move_bumps_the_version_and_calls_listeners() -> None:
    clock = FakeClock()
    cursor = _cursor(clock)
    calls: list[float] = []
    cursor.listen(lambda: calls.append(cursor.position))
    cursor.step(+1)
    cursor.jump(150.0)
    cursor.toggle()
    assert cursor.version == 3
    assert calls == [110.0, 150.0, 150.0]


def test_changes_outside_the_range_are_ignored_and_an_empty_recording_works() -> None:
    clock = FakeClock()
    cursor = ReplayCursor([5.0, 150.0, 150.0, 900.0], 100.0, 200.0, monotonic=clock)
    assert cursor.changes == (150.0,)
    point = ReplayCursor([], 100.0, 100.0, monotonic=clock)
    assert not point.step(+1) and point.position == 100.0
    point.toggle()
    clock.now += 5
    assert (point.position, point.playing) == (100.0, False)
