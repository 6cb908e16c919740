"""The EEPROM log: power-up records, field and clock records, tags, the dump (§6)."""

from __future__ import annotations

import chess

from drivers.dgt.eeprom import EEClockTime, EEFieldChange, EETag, EETagCode
from drivers.dgt.events import EEMoves
from drivers.emulator.clock import ChessClock, ClockSettings, FaceReading
from drivers.emulator.eeprom import EEPROM_SIZE, EepromLog
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.physical import PhysicalBoard, SensorChange
from drivers.emulator.player import Lift, PressLever, StartClock


def tags(log: EepromLog) -> list[EETagCode]:
    return [record.tag for record in log.records() if isinstance(record, EETag)]


def test_power_up_writes_nops_the_tag_a_record_per_piece_and_begin_pos() -> None:
    log = EepromLog()
    log.record_power_up(PhysicalBoard().fields(), 0.0)
    records = log.records()
    assert records[:4] == (
        EETag(tag=EETagCode.NOP),
        EETag(tag=EETagCode.NOP),
        EETag(tag=EETagCode.NOP),
        EETag(tag=EETagCode.POWERUP),
    )
    fields = [r for r in records if isinstance(r, EEFieldChange)]
    assert len(fields) == 32
    assert fields[0] == EEFieldChange(field=0, piece=8)  # black rook on a8
    assert records[-1] == EETag(tag=EETagCode.BEGIN_POS)


def test_rotated_start_position_is_tagged_as_such() -> None:
    log = EepromLog()
    log.record_power_up(PhysicalBoard(rotated=True).fields(), 0.0)
    assert tags(log)[-1] == EETagCode.BEGIN_POS_ROT


def test_field_changes_carry_the_quick_bit_within_250_ms() -> None:
    log = EepromLog()
    board = PhysicalBoard()
    log.record_power_up(board.fields(), 0.0)
    _, lifted = board.lift(chess.E2)
    log.record_changes(lifted, board.fields(), 5.0)
    placed = board.place(chess.E4, chess.Piece(chess.PAWN, chess.WHITE))
    log.record_changes(placed, board.fields(), 5.1)
    assert log.records()[-2:] == (
        EEFieldChange(field=52, piece=0, quick=False),
        EEFieldChange(field=36, piece=1, quick=True),
    )


def test_begin_pos_is_tagged_again_only_after_more_than_two_fields_changed() -> None:
    log = EepromLog()
    board = PhysicalBoard()
    log.record_power_up(board.fields(), 0.0)

    def move(origin: chess.Square, target: chess.Square, now: float) -> None:
        piece, changes = board.lift(origin)
        changes += board.place(target, piece)
        log.record_changes(changes, board.fields(), now)

    move(chess.G1, chess.F3, 1.0)  # two fields out of place
    move(chess.F3, chess.G1, 2.0)  # back: within hysteresis, no new tag
    assert tags(log).count(EETagCode.BEGIN_POS) == 1
    move(chess.G1, chess.F3, 3.0)
    move(chess.B1, chess.C3, 4.0)  # four fields out of place: re-armed
    move(chess.F3, chess.G1, 5.0)
    move(chess.C3, chess.B1, 6.0)
    assert tags(log).count(EETagCode.BEGIN_POS) == 2


def test_an_emptied_board_is_tagged() -> None:
    log = EepromLog()
    board = PhysicalBoard()
    log.record_power_up(board.fields(), 0.0)
    log.record_changes(board.set_up(chess.BaseBoard(None)), board.fields(), 1.0)
    assert tags(log)[-1] == EETagCode.EMPTY_BOARD


def test_lever_press_writes_the_clock_record() -> None:
    log = EepromLog()
    log.record_clock("left", FaceReading(seconds=5 * 60 + 7))
    assert log.records() == (EEClockTime(side="left", hours=0, minutes=5, seconds=7),)


def test_dump_is_the_whole_buffer_ending_with_eof() -> None:
    log = EepromLog()
    log.record_power_up(PhysicalBoard().fields(), 0.0)
    dump = log.dump()
    assert len(dump) == EEPROM_SIZE
    moves = EEMoves.from_raw(dump)
    assert moves.records[-1] == EETag(tag=EETagCode.EOF)
    assert EETag(tag=EETagCode.POWERUP) in moves.records


def test_a_full_buffer_keeps_the_newest_records() -> None:
    log = EepromLog(size=64)
    for second in range(100):
        log.record_changes([SensorChange(field=second % 64, code=1)], (0,) * 64, float(second))
    dump = log.dump()
    assert len(dump) == 64
    assert dump[-3:] == bytes((0x41, 99 % 64, EETagCode.EOF))


def test_a_chess960_start_is_tagged_four_rows_either_way_round() -> None:
    for number, rotated in ((0, False), (959, True), (518, False)):
        log = EepromLog()
        start = chess.BaseBoard(chess.Board.from_chess960_pos(number).board_fen())
        log.record_power_up(PhysicalBoard(start, rotated=rotated).fields(), 0.0)
        expected = EETagCode.BEGIN_POS if number == 518 else EETagCode.FOUR_ROWS
        assert tags(log)[-1] == expected, number
    log = EepromLog()
    half = chess.BaseBoard(chess.Board.from_chess960_pos(0).board_fen())
    half.remove_piece_at(chess.A2)
    log.record_power_up(PhysicalBoard(half).fields(), 0.0)
    assert EETagCode.FOUR_ROWS not in tags(log)


def test_a_lone_piece_put_back_overwrites_its_own_record() -> None:
    log = EepromLog()
    board = PhysicalBoard()
    log.record_power_up(board.fields(), 0.0)
    before = len(log.records())
    _, lifted = board.lift(chess.E2)
    log.record_changes(lifted, board.fields(), 1.0)
    log.record_changes(
        board.place(chess.E2, chess.Piece(chess.PAWN, chess.WHITE)), board.fields(), 2.0
    )
    records = log.records()
    assert len(records) == before + 1  # "e2 emptied" was overwritten by "e2 pawn"
    assert records[-1] == EEFieldChange(field=52, piece=1)


def test_presses_are_logged_only_when_they_stop_a_running_clock() -> None:
    firmware = BoardFirmware(clock=ChessClock(ClockSettings.from_text("3+2")))
    firmware.receive_action(PressLever(side="right"), 1.0)  # clock not started: no record
    firmware.receive_action(StartClock(), 2.0)
    firmware.receive_action(PressLever(side="right"), 3.0)  # not the running side
    firmware.receive_action(PressLever(side="left"), 10.0)  # White's press: 3:02 - 8 s + 2 s
    clocks = [r for r in firmware.eeprom.records() if isinstance(r, EEClockTime)]
    assert clocks == [EEClockTime(side="left", hours=0, minutes=2, seconds=56)]
    assert firmware.presses == [("left", 176)]


def test_a_data_only_unplug_keeps_logging() -> None:
    firmware = BoardFirmware()
    firmware.disconnect()
    firmware.receive_action(Lift(square=chess.E2), 1.0)
    assert firmware.eeprom.records()[-1] == EEFieldChange(field=52, piece=0)
    firmware.power_down()
    firmware.receive_action(Lift(square=chess.D2), 2.0)
    assert firmware.eeprom.records()[-1] == EEFieldChange(field=52, piece=0)  # no power
