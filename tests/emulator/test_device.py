"""The emulated board over a real pty: answers, a played game, unplugging, pacing."""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from pathlib import Path

import chess
import chess.pgn
import pytest

from drivers.dgt import commands as cmd
from drivers.dgt.eeprom import EETag, EETagCode
from drivers.dgt.events import (
    BoardDump,
    ClockAck,
    ClockTimes,
    EEMoves,
    Event,
    ProtocolViolation,
    SerialNumber,
    Version,
)
from drivers.emulator.clock import ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardMode
from drivers.emulator.physical import PhysicalBoard
from tests.emulator.client import PtyClient
from tests.emulator.support import placement, read_game, sensors
from tests.waiting import wait_until


def has(kind: type[Event], count: int = 1) -> Callable[[list[Event]], bool]:
    """A predicate: at least ``count`` events of ``kind`` arrived."""
    return lambda events: sum(isinstance(e, kind) for e in events) >= count


async def test_the_path_opens_like_a_serial_port(board: EmulatedBoard) -> None:
    assert board.path.is_symlink()
    fd = os.open(board.path, os.O_RDWR | os.O_NOCTTY)
    try:
        assert os.isatty(fd)
    finally:
        os.close(fd)


async def test_requests_get_the_right_bytes(board: EmulatedBoard, client: PtyClient) -> None:
    client.write(b"\x45")  # DGT_RETURN_SERIALNR
    await client.until(has(SerialNumber))
    assert client.chunks[0] == bytes.fromhex("91 00 08") + b"01025"
    client.send(cmd.RequestBoard(), cmd.RequestVersion())
    events = await client.until(has(Version))
    assert events[1:] == [BoardDump(squares=PhysicalBoard().fields()), Version(major=1, minor=2)]
    assert board.firmware.commands == [
        cmd.RequestSerialNumber(),
        cmd.RequestBoard(),
        cmd.RequestVersion(),
    ]


async def test_idle_until_asked_then_update_nice(board: EmulatedBoard, client: PtyClient) -> None:
    board.start_clock()
    client.send(cmd.RequestVersion())
    events = await client.until(has(Version))
    assert events == [Version(major=1, minor=2)]  # nothing unasked in IDLE
    client.send(cmd.StartUpdateNice())
    events = await client.until(has(ClockTimes, 2))
    first, second = (e for e in events if isinstance(e, ClockTimes))
    assert first.running
    assert second.left.total_seconds == first.left.total_seconds - 1
    assert board.firmware.mode is BoardMode.UPDATE_NICE


async def test_a_real_game_replays_to_its_final_position(
    board: EmulatedBoard, client: PtyClient, games_dir: Path
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    final = game.end().board()
    client.send(cmd.RequestBoard(), cmd.StartUpdateNice())
    await client.until(has(BoardDump))
    await board.play(game, speed=200, noise=0.3)

    def levers(events: list[Event]) -> int:
        times = [e for e in events if isinstance(e, ClockTimes)]
        return sum(a.right_high != b.right_high for a, b in itertools.pairwise(times))

    # the last press may reach the line after the mating piece is down: wait for both
    events = await client.until(
        lambda events: placement(sensors(events)) == final and levers(events) >= 10
    )
    times = [e for e in events if isinstance(e, ClockTimes)]
    assert levers(events) == 10
    assert times[-1].left.total_seconds > 180  # White gained 5 increments of 2 s
    assert board.physical.placement == final


async def test_a_rotated_board_reports_xor_63(games_dir: Path) -> None:
    async with EmulatedBoard(rotate=True, white_side="right") as board:
        client = PtyClient(board.path)
        try:
            client.send(cmd.RequestBoard(), cmd.StartUpdateBoard())
            await client.until(has(BoardDump))
            await board.play(read_game(games_dir / "molinari-bordais-1979.pgn"), speed=200)
            final = board.physical.placement
            await client.until(lambda events: placement(sensors(events), rotated=True) == final)
            assert not any(isinstance(e, ClockTimes) for e in client.events)
        finally:
            client.close()


async def test_unplug_and_replug(board: EmulatedBoard, client: PtyClient) -> None:
    path = board.path
    client.send(cmd.StartUpdateNice())
    await client.until(has(ClockTimes))
    board.unplug()
    assert not path.exists()
    assert not board.plugged
    await client.until_hung_up()
    await board.replug()
    assert path.is_symlink()
    assert board.firmware.mode is BoardMode.IDLE  # a board back on power starts IDLE (§3)
    again = PtyClient(path)
    try:
        again.send(cmd.RequestSerialNumber())
        events = await again.until(has(SerialNumber))
        assert events == [SerialNumber(text="01025")]
    finally:
        again.close()


async def test_pieces_moved_while_unplugged_show_in_the_next_dump(board: EmulatedBoard) -> None:
    board.unplug()
    await board.signal_result("1/2-1/2", speed=1000)
    await board.replug()
    client = PtyClient(board.path)
    try:
        client.send(cmd.RequestBoard())
        (dump,) = await client.until(has(BoardDump))
        assert isinstance(dump, BoardDump)
        kings = placement(list(dump.squares)).pieces(chess.KING, chess.WHITE)
        assert kings & chess.SquareSet([chess.D4, chess.D5, chess.E4, chess.E5])
    finally:
        client.close()


async def test_the_clock_cable_pulled_reads_no_clock(
    board: EmulatedBoard, client: PtyClient
) -> None:
    client.send(cmd.StartUpdateNice())
    await client.until(has(ClockTimes))
    board.unplug_clock()
    events = await client.until(lambda events: any(getattr(e, "no_clock", False) for e in events))
    unplugged = events[-1]
    assert isinstance(unplugged, ClockTimes)
    assert unplugged.status == 0x20
    assert unplugged.left.total_seconds == unplugged.right.total_seconds == 0
    board.plug_clock()
    await client.until(lambda events: not getattr(events[-1], "no_clock", True))


async def test_garbage_among_messages(board: EmulatedBoard, client: PtyClient) -> None:
    board.inject_garbage(b"\x01\x02\x8e\x00")
    client.send(cmd.RequestVersion())
    events = await client.until(has(Version))
    assert isinstance(events[0], ProtocolViolation)
    assert events[-1] == Version(major=1, minor=2)


async def test_a_dropped_ack_then_the_resend_is_acked(
    board: EmulatedBoard, client: PtyClient
) -> None:
    client.send(cmd.StartUpdateNice())
    await client.until(has(ClockTimes))
    board.drop_acks(1)
    client.send(cmd.ClockVersion())
    await wait_until(lambda: board.firmware.commands.count(cmd.ClockVersion()) == 1)
    client.send(cmd.ClockVersion())  # the resend, once the first was taken (and not acked)
    events = await client.until(has(ClockAck))
    assert [e for e in events if isinstance(e, ClockAck)] == [
        ClockAck(ack0=0x10, ack1=0x09, ack2=0x14, ack3=0)
    ]
    assert board.firmware.commands.count(cmd.ClockVersion()) == 2


async def test_clock_text_and_set_and_run_over_the_line() -> None:
    async with EmulatedBoard(clock=ClockSettings(mode=23)) as board:
        client = PtyClient(board.path)
        try:
            client.send(cmd.StartUpdateNice(), cmd.ClockAscii(text="round 5"))
            await client.until(has(ClockAck))
            assert board.clock.display_text == "round 5 "
            client.send(cmd.ClockSetAndRun(left_seconds=600, right_seconds=300, run="left"))
            await client.until(has(ClockAck, 2))
            events = await client.until(
                lambda events: any(
                    isinstance(e, ClockTimes) and e.right.total_seconds == 300 for e in events
                )
            )
            assert board.clock.running == "left"
            assert events[-1] != events[0]
        finally:
            client.close()


async def test_lever_and_kings_over_the_line(board: EmulatedBoard, client: PtyClient) -> None:
    client.send(cmd.StartUpdateNice(), cmd.RequestBoard())
    await client.until(has(BoardDump))
    board.start_clock()
    board.press_lever()
    await client.until(
        lambda events: any(isinstance(e, ClockTimes) and e.right_high for e in events)
    )
    assert board.clock.running == "right"
    await board.signal_result("1-0", speed=1000)
    centre = {chess.D5, chess.E4}

    def kings_on_centre(events: list[Event]) -> bool:
        final = placement(sensors(events))
        return {final.king(chess.WHITE), final.king(chess.BLACK)} == centre

    await client.until(kings_on_centre)
    assert board.physical.placement.king(chess.BLACK) in centre


async def test_a_flag_falls_when_nobody_moves() -> None:
    clock = ClockSettings(base_seconds=0, increment_seconds=1)
    async with EmulatedBoard(clock=clock) as board:
        client = PtyClient(board.path)
        try:
            client.send(cmd.StartUpdateNice())
            await client.until(has(ClockTimes))
            await board.play(chess.pgn.Game(), late_by=0.0)  # the arbiter starts, nobody plays
            events = await client.until(
                lambda events: any(isinstance(e, ClockTimes) and e.left.flag_fallen for e in events)
            )
            flagged = events[-1]
            assert isinstance(flagged, ClockTimes)
            assert not flagged.running
            assert board.clock.flagged == "left"
        finally:
            client.close()


async def test_9600_baud_pacing_delivers_the_same_bytes() -> None:
    async with EmulatedBoard(baud=9600) as board:
        client = PtyClient(board.path)
        try:
            loop = asyncio.get_running_loop()
            started = loop.time()
            client.send(cmd.RequestBoard())
            (dump,) = await client.until(has(BoardDump))
            # A lower bound only (slowness cannot break it): 67 bytes × 10 bits at 9600 baud.
            assert loop.time() - started >= 67 * 10 / 9600 * 0.9
            assert dump == BoardDump(squares=PhysicalBoard().fields())
        finally:
            client.close()


async def test_two_boards_get_two_paths() -> None:
    async with EmulatedBoard() as first, EmulatedBoard() as second:
        assert first.path != second.path
        assert first.path.exists()
        assert second.path.exists()
    assert not first.path.exists()


async def test_a_chosen_path_is_used(tmp_path: Path) -> None:
    async with EmulatedBoard(path=tmp_path / "ttyDGT3") as board:
        assert board.path == tmp_path / "ttyDGT3"
        assert board.path.is_symlink()
    assert not (tmp_path / "ttyDGT3").exists()


def test_a_board_must_be_entered_first() -> None:
    with pytest.raises(RuntimeError, match="async with"):
        _ = EmulatedBoard().path


async def test_a_second_game_is_set_up_and_clocked_anew(
    board: EmulatedBoard, client: PtyClient, games_dir: Path
) -> None:
    game = read_game(games_dir / "molinari-bordais-1979.pgn")
    await board.play(game, speed=1000)
    board.reset_clock(ClockSettings(base_seconds=60, increment_seconds=0))
    assert board.clock.running is None
    assert board.clock.remaining("left", board.now()) == 60
    client.send(cmd.RequestBoard(), cmd.StartUpdateBoard())
    await client.until(has(BoardDump))
    await board.play(game, speed=1000, plies=2)
    after_two = chess.Board()
    after_two.push_san("e4")
    after_two.push_san("c5")
    await client.until(lambda events: placement(sensors(events)) == after_two)
    assert board.clock.running == "left"


async def test_a_slow_reader_gets_every_byte(board: EmulatedBoard, client: PtyClient) -> None:
    # 12 EEPROM dumps (~95 kB) fill the pty; the board waits for room instead of losing bytes.
    client.send(*[cmd.RequestEEMoves()] * 12)
    async with asyncio.timeout(5):
        while len(board.firmware.commands) < 12 or not board.bytes_pending:  # noqa: ASYNC110
            await asyncio.sleep(0.01)  # until the pty is full and bytes wait for room
    events = await client.until(has(EEMoves, 12))
    dumps = [e for e in events if isinstance(e, EEMoves)]
    assert len(dumps) == len(events) == 12
    assert all(dump == dumps[0] for dump in dumps)
    assert dumps[0].records[-1] == EETag(tag=EETagCode.EOF)
    assert board.bytes_dropped == 0
    assert client.protocol.violations == 0


async def test_minutes_of_play_pass_at_once(games_dir: Path) -> None:
    """A host that does not listen (a daemon killed -9) need not wait for the players: the
    board's time jumps ahead, what they play meanwhile is done at its own times."""
    game = read_game(games_dir / "molinari-bordais-1979.pgn")  # 10 plies, 0-1
    async with EmulatedBoard(clock=ClockSettings.from_text("3+2"), seed=3) as board:
        playing = asyncio.create_task(board.play(game, speed=1.0))  # human pace
        await wait_until(lambda: len(board.firmware.presses) >= 1, 60, "the first press")
        before = board.now() - asyncio.get_running_loop().time()
        await board.pass_time(600.0)  # ten minutes: far more than the game needs
        await asyncio.wait_for(playing, 10)
        ahead = board.now() - asyncio.get_running_loop().time()
        final = game.end().board()
        assert board.physical.placement == chess.BaseBoard(final.board_fen())
        assert ahead - before == pytest.approx(600.0, abs=0.1)
        presses = board.firmware.presses
        assert len(presses) == 10
        for side in ("left", "right"):  # the clock ran: a second or more a move (3+2)
            readings = [seconds for who, seconds in presses if who == side]
            assert 180 + 2 * len(readings) - readings[-1] >= len(readings) - 1


async def test_drained_waits_until_the_driver_has_read_everything(
    board: EmulatedBoard, client: PtyClient
) -> None:
    # ``dgtcast emulate --exit`` waits for it: the game's last bytes must not die with the pty.
    client.send(cmd.RequestEEMoves())
    async with asyncio.timeout(5):
        while not board.bytes_sent:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    assert not await board.drained(within=0.3)  # sent, not read
    reading = asyncio.create_task(client.until(has(EEMoves)))
    assert await board.drained()
    await reading
    board.unplug()
    assert not await board.drained()  # no cable: nothing can be read
