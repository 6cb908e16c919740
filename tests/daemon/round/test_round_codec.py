"""The round's inputs as journal records: the records are those every daemon wrote, and
they read back as the inputs they came from (daemon/round/codec.py)."""

from __future__ import annotations

import json

import chess
import pytest

from broadcast.feed.commands import SetResult
from daemon.round.codec import entry_of, input_of
from daemon.round.inputs import (
    ArbiterInput,
    BatteryInput,
    ClockInput,
    FloodInput,
    JournalInput,
    LinkInput,
    PlacementInput,
    RecoveryInput,
    RoundInput,
    StartInput,
    TickInput,
)
from drivers.memory import BoardMemory, LoggedChange, LoggedPowerUp, LoggedPress
from drivers.observations import (
    BatteryObserved,
    ClockObserved,
    ClockSide,
    LinkObserved,
    LinkState,
    PlacementObserved,
)

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
READING = ClockObserved(
    left_seconds=5400,
    right_seconds=5391,
    left_flag=False,
    right_flag=True,
    running=ClockSide.RIGHT,
    lever=ClockSide.LEFT,
    connected=True,
    at=2.0,
)
MEMORY = BoardMemory(
    steps=(
        LoggedPowerUp(placement=chess.BaseBoard()),
        LoggedChange(square=chess.E2, piece=None),
        LoggedChange(square=chess.E4, piece=chess.Piece.from_symbol("P")),
        LoggedPress(side=ClockSide.LEFT, seconds=5390),
    ),
    dropped=2,
)
CLOCK = (
    '"left": 5400, "right": 5391, "left_flag": false, "right_flag": true, "running": "right",'
    ' "lever": "left", "connected": true'
)

#: Each input, its board and kind, and its payload as the journal holds it (written by
#: the daemon before inputs were typed: key order included).
RECORDS: list[tuple[RoundInput, int, str, str]] = [
    (
        PlacementInput(3, PlacementObserved(board=chess.BaseBoard(), at=1.0)),
        3,
        "placement",
        f'{{"fen": "{START}"}}',
    ),
    (ClockInput(3, READING), 3, "clock", f"{{{CLOCK}}}"),
    (
        ClockInput(
            3,
            READING,
            increments="clock",
            clock_set=True,
            lacking={ClockSide.RIGHT: 30, ClockSide.LEFT: 10},
        ),
        3,
        "clock",
        f'{{{CLOCK}, "increments": "clock", "set": true, "lacking": {{"right": 30, "left": 10}}}}',
    ),
    (
        ClockInput(3, READING, increments="refused"),
        3,
        "clock",
        f'{{{CLOCK}, "increments": "refused"}}',
    ),
    (
        LinkInput(
            3, LinkObserved(state=LinkState.ONLINE, at=3.0), serial="12345", port="/dev/ttyACM0"
        ),
        3,
        "link",
        '{"state": "online", "reason": "", "serial": "12345", "port": "/dev/ttyACM0"}',
    ),
    (
        LinkInput(3, LinkObserved(state=LinkState.OFFLINE, at=3.0), "unplugged"),
        3,
        "link",
        '{"state": "offline", "reason": "unplugged"}',
    ),
    (
        BatteryInput(3, BatteryObserved(percent=37, charging=False, at=4.0)),
        3,
        "battery",
        '{"percent": 37, "charging": false}',
    ),
    (RecoveryInput(board=3, at=5.0, state="reading"), 3, "recovery", '{"state": "reading"}'),
    (
        RecoveryInput(
            board=3,
            at=6.0,
            state="read",
            memory=MEMORY,
            heal=True,
            placement=chess.BaseBoard(),
            running=ClockSide.LEFT,
            came=READING,
        ),
        3,
        "recovery",
        '{"state": "read", "memory": {"steps": [["u", "' + START + '"], ["c", 12, ""],'
        ' ["c", 28, "P"], ["p", "left", 5390]], "dropped": 2}, "heal": true,'
        f' "placement": "{START}", "running": "left", "came": {{{CLOCK}, "at": 2.0}}}}',
    ),
    (
        RecoveryInput(
            board=3, at=6.0, state="failed", reason="no answer", placement=chess.BaseBoard()
        ),
        3,
        "recovery",
        f'{{"state": "failed", "reason": "no answer", "placement": "{START}", "running": null}}',
    ),
    (
        FloodInput(board=3, at=7.0, flooding=True, rate=40),
        3,
        "flood",
        '{"flooding": true, "rate": 40}',
    ),
    (TickInput(at=8.0), 0, "tick", "{}"),
    (StartInput(at=9.0, silence=30.0), 0, "start", '{"silence": 30.0}'),
    (
        JournalInput(at=10.0, written=False, reason="disk full", held=12),
        0,
        "journal",
        '{"written": false, "reason": "disk full", "held": 12}',
    ),
    (
        ArbiterInput(at=11.0, command=SetResult(board=2, result="1-0")),
        2,
        "arbiter",
        '{"board": 2, "result": "1-0", "command": "set_result"}',
    ),
]


@pytest.mark.parametrize(("item", "board", "kind", "text"), RECORDS)
def test_an_input_is_journalled_as_before_and_reads_back_as_itself(
    item: RoundInput, board: int, kind: str, text: str
) -> None:
    entry = entry_of(item)
    assert (entry.board, entry.kind, entry.at) == (board, kind, item.at)
    assert json.dumps(entry.payload) == text
    assert input_of(board, kind, json.loads(text), item.at) == item


def test_a_kind_that_is_no_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not an input kind"):
        input_of(1, "game.MoveMade", {}, 1.0)
