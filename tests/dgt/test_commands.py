"""Golden bytes of every PC → board command (docs/protocol.md §3, §7.5, §11)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings

from drivers.dgt.commands import (
    CLOCK_COMMAND_IDS,
    SINGLE_BYTE_COMMANDS,
    ClockAscii,
    ClockBeep,
    ClockDisplay,
    ClockIcons,
    ClockRev2Ascii,
    ClockSetAndRun,
    Command,
    SetLeds,
    encode,
)
from drivers.dgt.events import Version
from tests.dgt.golden import COMMANDS
from tests.dgt.strategies import commands


@pytest.mark.parametrize(("command", "wire"), COMMANDS, ids=[repr(g[0]) for g in COMMANDS])
def test_golden_bytes(command: Command, wire: str) -> None:
    assert encode(command) == bytes.fromhex(wire)


def test_every_command_type_has_a_golden_example() -> None:
    covered = {type(command) for command, _ in COMMANDS}
    assert covered == {*SINGLE_BYTE_COMMANDS, *CLOCK_COMMAND_IDS, SetLeds}


def test_dangerous_bytes_are_never_encodable() -> None:
    # 0x4A bus mode, 0x4E boot loader, 0x51/0x53/0x54 persistent draughts scans (§3).
    assert not {0x4A, 0x4E, 0x51, 0x53, 0x54} & set(SINGLE_BYTE_COMMANDS.values())


@settings(max_examples=200, deadline=None)
@given(commands)
def test_commands_stay_in_single_board_mode(command: Command) -> None:
    # A byte with MSB set would switch the board to bus mode (§2.1); clock messages carry
    # their own size (§7.5).
    data = encode(command)
    assert all(byte < 0x80 for byte in data)
    if data[0] == 0x2B:
        assert data[1] == len(data) - 2
        assert (data[2], data[-1]) == (0x03, 0x00)
        assert data[3] == CLOCK_COMMAND_IDS[type(command)]  # type: ignore[index]


def test_display_from_text_pads_and_ignores_case() -> None:
    assert ClockDisplay.from_text("GO") == ClockDisplay.from_text("go    ")
    assert ClockDisplay.from_text("").segments == (0,) * 6


def test_ascii_text_is_padded() -> None:
    assert ClockAscii(text="abc").text == "abc     "
    assert ClockRev2Ascii(text="").text == " " * 11


@pytest.mark.parametrize(
    "build",
    [
        lambda: ClockSetAndRun(left_seconds=36000, right_seconds=0, run="left"),
        lambda: ClockSetAndRun(left_seconds=-1, right_seconds=0, run="left"),
        lambda: ClockSetAndRun(left_seconds=0, right_seconds=0, run="both"),  # type: ignore[arg-type]
        lambda: ClockBeep(duration_ms=1000),
        lambda: ClockBeep(duration_ms=128 * 64),
        lambda: ClockAscii(text="too long!"),
        lambda: ClockAscii(text="é"),
        lambda: ClockAscii(text="ok", beep=16),
        lambda: ClockRev2Ascii(text="x" * 12),
        lambda: ClockDisplay.from_text("1234567"),
        lambda: ClockDisplay.from_text("?"),
        lambda: ClockDisplay(segments=(0x80, 0, 0, 0, 0, 0)),
        lambda: ClockDisplay(segments=(0, 0, 0, 0, 0, 0), icons=0x40),
        lambda: ClockIcons(left_period=0x40),
        lambda: SetLeds(pattern=3, start=0, end=0),
        lambda: SetLeds(pattern=1, start=65, end=0),
    ],
)
def test_misuse_raises(build: Callable[[], object]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - every case has its own message
        build()


def test_encoding_a_non_command_raises() -> None:
    with pytest.raises(TypeError, match="not a DGT command"):
        encode(Version(major=1, minor=2))  # type: ignore[arg-type]
