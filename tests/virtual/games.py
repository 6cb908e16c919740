"""Games, boards and configurations for the virtual-time tests."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import chess
import chess.pgn

from daemon.config.model import Config, load_config
from drivers.emulator.clock import ChessClock, ClockSettings, Side
from drivers.emulator.eeprom import EEPROM_SIZE
from drivers.emulator.firmware import BoardFirmware
from drivers.emulator.physical import PhysicalBoard
from drivers.emulator.player import HumanPlayer, PressLever, StartClock, TimedAction

__all__ = ["Table", "board_config", "read_game", "read_games"]


def board_config(
    folder: Path, *, time_control: str = "180+2", mode23: bool = False, chess960: bool = False
) -> Config:
    """One board's round (board 1 on a virtual port), optionally with mode 23 clocks or
    Chess960."""
    lines = [
        "[event]",
        'name = "Virtual Open"',
        "round = 1",
        f'time_control = "{time_control}"',
        'default_time = "30m"',
        *(["dgt_mode = 23"] if mode23 else []),
        *(['variant = "chess960"'] if chess960 else []),
        "",
        "[server]",
        'host = "127.0.0.1"',
        "port = 8080",
        'arbiter_token = "virtual-secret"',
        "",
        "[storage]",
        'path = "journal.db"',
        "",
        "[[boards]]",
        "number = 1",
        'port = "virtual"',
        'white = "White, W"',
        'black = "Black, B"',
        "",
    ]
    name = "".join(c if c.isalnum() else "-" for c in time_control)
    path = folder / f"round-{name}-{mode23}-{chess960}.toml"
    path.write_text("\n".join(lines))
    return load_config(path, env={})


def read_game(path: Path, index: int = 0) -> chess.pgn.Game:
    """The ``index``-th game (from 0) of a PGN file."""
    with path.open(encoding="utf-8") as handle:
        for _ in range(index):
            chess.pgn.skip_game(handle)
        game = chess.pgn.read_game(handle)
    if game is None:
        raise ValueError(f"{path} has no game {index}")
    return game


def read_games(folder: Path) -> list[chess.pgn.Game]:
    """Every game of every PGN file in ``folder``, sorted by file name."""
    games: list[chess.pgn.Game] = []
    for path in sorted(folder.glob("*.pgn")):
        with path.open(encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                moves = list(game.mainline_moves())
                if not game.errors and moves and all(moves):  # no null moves ("--")
                    games.append(game)
    return games


@dataclasses.dataclass(slots=True)
class Table:
    """A board with its clock and the two players, before the game.

    Attributes:
        firmware: the board's firmware (its memory, its clock).
        schedule: the players' actions, in seconds from the clock's start.
        truth: the mover's time after each press on a clock that adds every increment.
    """

    firmware: BoardFirmware
    schedule: list[TimedAction]
    truth: list[int]

    @classmethod
    def of(
        cls,
        game: chess.pgn.Game,
        *,
        seed: int,
        speed: float,
        clock: str = "3+2",
        rotate: bool = False,
        white_side: Side = "left",
        noise: float = 0.0,
        memory_size: int | None = None,
        mode23: bool = False,
        plies: int | None = None,
        result: str | None = None,
        settings: ClockSettings | None = None,
    ) -> Table:
        """The start position set up, the clock set, the schedule of ``game``."""
        base = settings or ClockSettings.from_text(clock)
        settings = dataclasses.replace(base, lever_up=white_side)
        start = chess.BaseBoard(game.board().board_fen())
        physical = _clock(settings, mode23=mode23)
        ideal = _clock(settings, mode23=mode23)  # every increment added at its press
        firmware = BoardFirmware(
            physical=PhysicalBoard(start, rotated=rotate),
            clock=physical,
            memory_size=EEPROM_SIZE if memory_size is None else memory_size,
        )
        player = HumanPlayer(seed=seed, speed=speed, noise=noise, white_side=white_side)
        schedule = player.play(game, plies=plies, result=result)
        mode23_increment = settings.increment_seconds if mode23 else None
        truth = _presses(ideal, schedule, mode23_increment)
        return cls(firmware=firmware, schedule=schedule, truth=truth)

    def press_times(self, origin: float) -> list[float]:
        """When each ply's lever press comes, the schedule played from ``origin``."""
        return [origin + t.at for t in self.schedule if isinstance(t.action, PressLever)]

    def expected(self, game: chess.pgn.Game) -> list[tuple[str, int]]:
        """The record the daemon must end with: each move's UCI and the time the clock
        showed (or, in mode 23, should have shown) after its press."""
        moves = [move.uci() for move in game.mainline_moves()]
        return list(zip(moves, self.truth, strict=False))[: len(moves)]


def _clock(settings: ClockSettings, *, mode23: bool) -> ChessClock:
    """A clock as set before the round; in mode 23 set by dgtcast, adding nothing (§8)."""
    if not mode23:
        return ChessClock(settings)
    clock = ChessClock(dataclasses.replace(settings, mode=23))
    start = settings.start_seconds
    clock.set_and_run(
        left_seconds=start, right_seconds=start, run="paused", toggle_on_lever=True, now=0.0
    )
    return clock


def _presses(
    clock: ChessClock, schedule: list[TimedAction], mode23_increment: int | None
) -> list[int]:
    """The pressing side's time after each press of ``schedule`` that switched the clock.

    With ``mode23_increment`` the clock is one dgtcast sets at each press (mode 23, §8):
    both sides to the whole seconds shown, the mover's plus the increment.
    """
    times: list[int] = []
    for timed in schedule:
        action, now = timed.action, timed.at
        if isinstance(action, StartClock):
            clock.start(now)
        elif isinstance(action, PressLever):
            running = clock.running
            clock.press_lever(action.side, now)
            if running != action.side or clock.running == running:
                continue
            reading = clock.reading(now)
            seconds = {"left": reading.left.seconds, "right": reading.right.seconds}
            if mode23_increment is not None:
                seconds[action.side] += mode23_increment
                clock.set_and_run(
                    left_seconds=seconds["left"],
                    right_seconds=seconds["right"],
                    run=clock.running or "paused",
                    toggle_on_lever=True,
                    now=now,
                )
            times.append(seconds[action.side])
    return times
