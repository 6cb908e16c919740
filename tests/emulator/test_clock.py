"""The clock model: Fischer times, lever, whole-second ticks, flag fall, commands, acks."""

from __future__ import annotations

import pytest

from drivers.emulator.clock import (
    ACK_ERROR,
    ACK_OK,
    COMPUTER_MODE,
    ChessClock,
    ClockAckReply,
    ClockModel,
    ClockSettings,
    CommandId,
    Side,
)

BLITZ = ClockSettings(base_seconds=180, increment_seconds=2)


def running(clock: ChessClock) -> Side | None:
    """The running side, read afresh (keeps mypy from narrowing across actions)."""
    return clock.running


def test_fischer_from_move_one_starts_at_base_plus_one_increment() -> None:
    # §7.2 "Observed": 3 min + 2 s starts at 0:03:02 on both sides.
    reading = ChessClock(BLITZ).reading(0.0)
    assert reading.left.seconds == reading.right.seconds == 182
    assert reading.left.hms == (0, 3, 2)
    assert reading.left.time_per_move
    assert reading.right.time_per_move
    assert reading.running is None


def test_status_before_and_after_the_start() -> None:
    # Recordings: 0x08 left high and stopped, 0x09 once running; right high is 0x12 / 0x13.
    clock = ChessClock(BLITZ)
    assert clock.reading(0.0).status() == 0x08
    clock.start(0.0)
    assert clock.reading(0.0).status() == 0x09
    clock.press_lever("left", 1.0)
    assert clock.reading(1.0).status() == 0x13
    clock.pause(2.0)
    assert clock.reading(2.0).status() == 0x12


def test_display_ticks_on_whole_seconds() -> None:
    clock = ChessClock(BLITZ)
    clock.start(10.0)
    assert clock.reading(10.5).left.seconds == 182
    assert clock.reading(10.999).left.seconds == 182
    assert clock.reading(11.0).left.seconds == 181
    assert clock.reading(12.5).right.seconds == 182
    assert clock.next_change(12.5) == pytest.approx(13.0)


def test_a_stopped_clock_never_changes_by_itself() -> None:
    clock = ChessClock(BLITZ)
    assert clock.next_change(5.0) is None
    assert clock.reading(500.0).left.seconds == 182


def test_lever_press_adds_the_increment_and_hands_over() -> None:
    clock = ChessClock(BLITZ)
    clock.start(0.0)
    clock.press_lever("left", 10.0)  # White (left) moved after 10 s
    assert running(clock) == "right"
    assert clock.lever_up == "right"
    assert clock.remaining("left", 10.0) == pytest.approx(174.0)
    assert clock.reading(10.0).left.seconds == 174
    clock.press_lever("right", 13.0)
    assert clock.remaining("right", 13.0) == pytest.approx(181.0)
    assert running(clock) == "left"


def test_pressing_the_other_players_lever_changes_nothing() -> None:
    clock = ChessClock(BLITZ)
    clock.start(0.0)
    clock.press_lever("right", 3.0)  # left runs; the right player presses their own lever
    assert running(clock) == "left"
    assert clock.remaining("right", 3.0) == pytest.approx(182.0)


def test_lever_on_a_stopped_clock_only_moves_the_lever() -> None:
    clock = ChessClock(BLITZ)
    clock.press_lever("left", 1.0)
    assert clock.running is None
    assert clock.lever_up == "right"
    assert clock.remaining("left", 1.0) == pytest.approx(182.0)


def test_flag_fall_blocks_the_clock_at_zero() -> None:
    clock = ChessClock(ClockSettings(base_seconds=3, increment_seconds=2))
    clock.start(0.0)
    assert clock.next_change(4.5) == pytest.approx(5.0)
    reading = clock.reading(7.0)
    assert clock.flagged == "left"
    assert reading.running is None
    assert reading.left.seconds == 0
    assert reading.left.flag_fallen
    assert not reading.right.flag_fallen
    assert reading.status() == 0x08  # D0 cleared, lever still left
    clock.press_lever("left", 8.0)
    assert clock.remaining("left", 8.0) == 0.0
    clock.start(9.0)
    assert clock.running is None


def test_a_wrong_start_time_can_be_set_up() -> None:
    clock = ChessClock(ClockSettings(base_seconds=5400, increment_seconds=30, start_right=5100))
    reading = clock.reading(0.0)
    assert (reading.left.seconds, reading.right.seconds) == (5430, 5100)


def test_no_increment_means_no_time_per_move_indicator() -> None:
    reading = ChessClock(ClockSettings(base_seconds=600, increment_seconds=0)).reading(0.0)
    assert not reading.left.time_per_move


def test_set_and_run_is_refused_outside_mode_23() -> None:
    clock = ChessClock(ClockSettings(mode=12))
    ack = clock.set_and_run(
        left_seconds=60, right_seconds=60, run="left", toggle_on_lever=True, now=0
    )
    assert ack == ClockAckReply(ack0=ACK_ERROR, ack1=CommandId.SET_AND_RUN)
    assert clock.running is None
    assert clock.remaining("left", 0.0) == 5430


def test_set_and_run_in_mode_23_sets_times_and_runs() -> None:
    clock = ChessClock(ClockSettings(mode=COMPUTER_MODE))
    ack = clock.set_and_run(
        left_seconds=90, right_seconds=120, run="right", toggle_on_lever=True, now=0
    )
    assert ack == ClockAckReply(ack0=ACK_OK, ack1=0x0A)
    assert running(clock) == "right"
    assert clock.reading(2.0).right.seconds == 118
    assert not clock.reading(2.0).right.time_per_move
    clock.press_lever("right", 3.0)
    assert running(clock) == "left"
    assert clock.remaining("right", 3.0) == pytest.approx(117.0)  # no increment in mode 23


def test_set_and_run_without_lever_toggle_keeps_the_running_side() -> None:
    clock = ChessClock(ClockSettings(mode=COMPUTER_MODE))
    clock.set_and_run(left_seconds=90, right_seconds=90, run="left", toggle_on_lever=False, now=0)
    clock.press_lever("left", 1.0)
    assert running(clock) == "left"


def test_set_and_run_paused() -> None:
    clock = ChessClock(ClockSettings(mode=COMPUTER_MODE))
    clock.set_and_run(left_seconds=90, right_seconds=80, run="paused", toggle_on_lever=True, now=0)
    assert clock.running is None
    assert clock.reading(5.0).right.seconds == 80


@pytest.mark.parametrize(("model", "ack2"), [(ClockModel.XL, 0x14), (ClockModel.DGT3000, 0x20)])
def test_version_ack_carries_the_version_nibbles(model: ClockModel, ack2: int) -> None:
    ack = ChessClock(ClockSettings(model=model)).version()
    assert ack == ClockAckReply(ack0=ACK_OK, ack1=0x09, ack2=ack2)


def test_text_is_kept_until_end() -> None:
    clock = ChessClock()
    assert clock.show_text("ROUND 3 ").ack1 == CommandId.ASCII
    assert clock.display_text == "ROUND 3 "
    assert clock.end_display().ack1 == CommandId.END
    assert clock.display_text is None


def test_beeps_are_remembered() -> None:
    clock = ChessClock()
    assert clock.beep(1.024).ack1 == CommandId.BEEP
    assert clock.beeps == [1.024]


@pytest.mark.parametrize(
    ("text", "base", "increment"), [("90+30", 5400, 30), ("3+2", 180, 2), ("5", 300, 0)]
)
def test_time_controls_parse(text: str, base: int, increment: int) -> None:
    settings = ClockSettings.from_text(text)
    assert (settings.base_seconds, settings.increment_seconds) == (base, increment)


@pytest.mark.parametrize("text", ["", "90+", "fast", "-3+2"])
def test_bad_time_controls_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="MINUTES"):
        ClockSettings.from_text(text)


def test_times_beyond_the_display_are_refused() -> None:
    with pytest.raises(ValueError, match="9:59:59"):
        ClockSettings(base_seconds=10 * 3600, increment_seconds=0)
