"""``dgtcast emulate``: a virtual DGT board + clock on a pty that plays a PGN game.

The game is one of a PGN file's (``--pgn``), or without it one of the famous games shipped
with dgtcast (the demo's: :data:`SHIPPED_GAMES`), so that a rehearsal needs no file.

It prints one line ``device: /path`` (the port to give the daemon or any DGT driver;
without ``--link`` it is in the folder of emulated ports that ``dgtcast boards`` and the
daemon's boards by serial number scan: drivers/dgt/aio/ports.py),
waits a moment for a driver to connect, has the arbiter start the clock and the players
play the game's main line with human timings, and keeps the board on the line until
Ctrl-C (or exits after the game with ``--exit``). Exit codes: 0 done, 2 bad usage.

What an arbiter rehearses, from the command line (docs/emulator.md, docs/tournament.md
§1): a late arrival (``--late-by``), a flag fall (``--plies``: the players stop after
that ply and the mover's time runs out), the result gesture (the kings, by default), a
pulled cable (SIGUSR1, or a line ``u`` on standard input, pulls it out and plugs it back
in on the next one). Stopped while its game goes on (Ctrl-C), it keeps the ply reached and
the clock's times in a file beside its port; ``--resume`` goes on from there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import os
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from daemon.game.durations import TimeControl
from daemon.shell import runtime
from drivers.dgt.aio.ports import emulated_ports_dir, new_emulated_port
from drivers.emulator.clock import ClockModel, ClockSettings
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from drivers.emulator.pty import UNSUPPORTED
from drivers.emulator.record import recording

__all__ = [
    "SHIPPED_FILES",
    "SHIPPED_GAMES",
    "add_arguments",
    "emulated_clock",
    "read_game",
    "run",
    "shipped_game",
]

_PACKAGED = Path(__file__).resolve().parent.parent / "demo_data"  # in a wheel (setup.py)
_CHECKOUT = Path(__file__).resolve().parents[2] / "config"
#: Files shipped with dgtcast: inside the package when installed from a wheel,
#: ``config/`` in a checkout.
SHIPPED_FILES = _PACKAGED if (_PACKAGED / "demo.toml").is_file() else _CHECKOUT
#: The famous games the demo's and ``emulate``'s players replay without ``--pgn``.
SHIPPED_GAMES = SHIPPED_FILES / "games"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``emulate`` options to ``parser``."""
    parser.add_argument(
        "--pgn",
        type=Path,
        help="PGN file with the game to play (default: the games shipped with dgtcast)",
    )
    parser.add_argument(
        "--game",
        type=int,
        default=1,
        help="which game of the file, or of the shipped ones (1 = first)",
    )
    parser.add_argument("--speed", type=float, default=1.0, help="divide human timings by X")
    parser.add_argument("--rotate", action="store_true", help="set the board up turned 180°")
    parser.add_argument("--seed", type=int, default=0, help="seed of the players' habits")
    parser.add_argument("--noise", type=float, default=0.05, help="noise probability per move")
    parser.add_argument(
        "--clock",
        default="5400+30",
        help="time control as in the configuration: seconds (5400+30) or 90m + 30s",
    )
    parser.add_argument("--clock-mode", type=int, default=12, help="clock option (23 = SetNRun)")
    models = [model.value for model in ClockModel]
    parser.add_argument("--clock-model", choices=models, default="xl", help="clock beside it")
    parser.add_argument(
        "--white-side", choices=["left", "right"], default="left", help="clock side"
    )
    parser.add_argument("--baud", type=int, default=9600, help="pace output (0 = unpaced)")
    parser.add_argument(
        "--link",
        type=Path,
        help="put the device symlink here (default: where `dgtcast boards` and boards by"
        " serial find it)",
    )
    parser.add_argument(
        "--serial", type=_serial, help="the board's serial number, 5 digits (default 01025)"
    )
    parser.add_argument(
        "--battery",
        type=_percent,
        help="act as a Bluetooth board whose battery is at PERCENT (default: a USB board,"
        " silent when asked)",
    )
    parser.add_argument("--wait", type=float, default=2.0, help="seconds before the start")
    parser.add_argument(
        "--after-driver",
        action="store_true",
        help="count --wait from when a driver (the daemon) first asks for the board's moves",
    )
    parser.add_argument(
        "--plies",
        type=_plies,
        help="stop moving after ply N: the mover's time runs on until the flag falls",
    )
    parser.add_argument(
        "--late-by",
        type=_late_by,
        default=0.0,
        help="the first mover arrives SECONDS after the clock starts (inf: nobody comes)",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="go on from where this board's last emulator was stopped (its ply, its clock)",
    )
    parser.add_argument("--no-result", action="store_true", help="don't signal the result")
    parser.add_argument("--exit", action="store_true", help="exit when the game is over")
    parser.add_argument(
        "--record", type=Path, help="append a JSON line per lever press and SetNRun to FILE"
    )


def _serial(text: str) -> BoardIdentity:
    try:
        return BoardIdentity.from_serial(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _plies(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--plies counts plies, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"--plies counts plies, 0 or more, not {text!r}")
    return value


def _late_by(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--late-by is seconds, not {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"--late-by is seconds, 0 or more, not {text!r}")
    return value


def _percent(text: str) -> int:
    try:
        value = int(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a battery level is 0..100, not {text!r}") from None
    if not 0 <= value <= 100:
        raise argparse.ArgumentTypeError(f"a battery level is 0..100, not {text!r}")
    return value


def read_game(path: Path, number: int) -> chess.pgn.Game:
    """The ``number``-th game (1-based) of a PGN file.

    Raises:
        OSError: the file cannot be read.
        ValueError: there is no such game, or it does not parse.
    """
    if number < 1:
        raise ValueError("--game counts from 1")
    with path.open(encoding="utf-8-sig") as handle:
        for _ in range(number - 1):
            if chess.pgn.skip_game(handle) is False:
                break
        game = chess.pgn.read_game(handle)
    if game is None:
        raise ValueError(f"{path} has no game number {number}")
    if game.errors:
        raise ValueError(f"game {number} of {path} does not parse: {game.errors[0]}")
    return game


def shipped_game(number: int) -> tuple[Path, int]:
    """The file and game number of the ``number``-th (1-based) game shipped with dgtcast.

    Raises:
        ValueError: there are fewer shipped games.
    """
    files = sorted(SHIPPED_GAMES.glob("*.pgn"))
    if not 1 <= number <= len(files):
        names = ", ".join(f"{n} {f.stem}" for n, f in enumerate(files, start=1))
        raise ValueError(f"--game {number}: without --pgn the games are those shipped: {names}")
    return files[number - 1], 1


def run(args: argparse.Namespace) -> int:
    """Run the emulator until the game is over (``--exit``) or Ctrl-C / SIGTERM."""
    if UNSUPPORTED:
        print(f"dgtcast emulate: {UNSUPPORTED}", file=sys.stderr)
        return 2
    try:
        path, number = (args.pgn, args.game) if args.pgn else shipped_game(args.game)
        game = read_game(path, number)
        settings = _clock_settings(args)
        if args.speed <= 0:
            raise ValueError("--speed must be positive")
        if not 0 <= args.noise <= 1:
            raise ValueError("--noise is a probability, 0..1")
        played = Played(source=str(path), number=number, whole=game)
        if args.resume:
            played, settings = _resumed(args, played, settings)
    except FileNotFoundError:
        print(
            f"dgtcast emulate: {args.pgn}: no such file (without --pgn the board plays"
            " a game shipped with dgtcast)",
            file=sys.stderr,
        )
        return 2
    except (OSError, ValueError) as error:
        print(f"dgtcast emulate: {error}", file=sys.stderr)
        return 2
    return runtime.run(_emulate(args, played, settings))


@dataclass(frozen=True, slots=True, kw_only=True)
class Played:
    """The game a board plays: its file and number, the whole game, the ply it starts at."""

    source: str
    number: int
    whole: chess.pgn.Game
    from_ply: int = 0

    def game(self) -> chess.pgn.Game:
        """The moves still to play, from the position at :attr:`from_ply`."""
        if self.from_ply == 0:
            return self.whole
        moves = list(self.whole.mainline_moves())
        board = self.whole.board()
        for move in moves[: self.from_ply]:
            board.push(move)
        rest = chess.pgn.Game()
        for name, value in self.whole.headers.items():
            rest.headers[name] = value
        rest.setup(board)
        node: chess.pgn.GameNode = rest
        for move in moves[self.from_ply :]:
            node = node.add_variation(move)
        return rest

    def ply_of(self, placement: chess.BaseBoard) -> int | None:
        """The last ply of the whole game whose position the pieces show (None: none)."""
        board, found = self.whole.board(), None
        if board.board_fen() == placement.board_fen():
            found = 0
        for ply, move in enumerate(self.whole.mainline_moves(), 1):
            board.push(move)
            if board.board_fen() == placement.board_fen():
                found = ply
        return found


def _kept_path(args: argparse.Namespace) -> Path:
    """Where a stopped emulator keeps its board for ``--resume``."""
    if args.link is not None:
        return Path(args.link).with_name(Path(args.link).name + ".kept.json")
    return emulated_ports_dir() / f"kept-{_identity(args).serial}.json"


def _resumed(
    args: argparse.Namespace, played: Played, settings: ClockSettings
) -> tuple[Played, ClockSettings]:
    """The game from the ply the last emulator of this board kept, and its clock.

    Raises:
        ValueError: nothing kept, or kept for another game.
    """
    path = _kept_path(args)
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ValueError(f"--resume: nothing kept in {path} (start without --resume)") from None
    if (kept.get("pgn"), kept.get("game")) != (played.source, played.number):
        raise ValueError(
            f"--resume: {path} keeps game {kept.get('game')} of {kept.get('pgn')}, not this one"
        )
    clock = dataclasses.replace(settings, start_left=kept["left"], start_right=kept["right"])
    return dataclasses.replace(played, from_ply=int(kept["ply"])), clock


def _keep(args: argparse.Namespace, played: Played, board: EmulatedBoard) -> None:
    """Keep the ply the pieces show and the clock's times, while the game goes on."""
    path = _kept_path(args)
    ply = played.ply_of(board.physical.placement)
    total = len(list(played.whole.mainline_moves()))
    if ply is None or not 0 < ply < total:
        with contextlib.suppress(OSError):
            path.unlink()
        return
    reading = board.clock.reading(board.now())
    kept = {"pgn": played.source, "game": played.number, "ply": ply}
    kept |= {"left": reading.left.seconds, "right": reading.right.seconds}
    with contextlib.suppress(OSError):
        path.write_text(json.dumps(kept), encoding="utf-8")
        print(f"position kept at ply {ply}: start again with --resume to go on", flush=True)


def _clock_settings(args: argparse.Namespace) -> ClockSettings:
    try:
        control = TimeControl.from_text(args.clock)
    except ValueError as exc:
        raise ValueError(f"--clock: {exc} (seconds as in the configuration)") from None
    simple = len(control.periods) == 1 and control.periods[0].moves is None
    settings = (
        ClockSettings(base_seconds=control.base, increment_seconds=control.increment)
        if simple
        else emulated_clock(control)
    )
    if re.fullmatch(r"\s*\d{1,3}\s*\+\s*\d+\s*", args.clock):
        print(
            f"dgtcast emulate: --clock {args.clock} is {control.spoken()} (seconds, as in"
            f" the configuration: 90 minutes and 30 s is 5400+30 or 90m + 30s)",
            file=sys.stderr,
        )
    return dataclasses.replace(settings, mode=args.clock_mode, model=ClockModel(args.clock_model))


def emulated_clock(control: TimeControl, moves: int = 300) -> ClockSettings:
    """An emulated clock that runs ``control`` itself: what each press adds, per move.

    The emulator's clock takes one increment and bonuses per move; a control whose
    increment changes between periods (``40/7200:20/3600:900+30``) is given as a bonus
    after each of the first ``moves`` moves instead.
    """
    start = control.start_seconds
    bonuses = tuple(
        (move, added) for move in range(1, moves + 1) if (added := control.added_after(move))
    )
    return ClockSettings(
        base_seconds=control.base,
        increment_seconds=0,
        start_left=start,
        start_right=start,
        periods=bonuses,
    )


def _identity(args: argparse.Namespace) -> BoardIdentity:
    identity: BoardIdentity = args.serial or BoardIdentity()
    return identity if args.battery is None else identity.bluetooth(args.battery)


async def _emulate(args: argparse.Namespace, played: Played, clock: ClockSettings) -> int:
    stop = asyncio.Event()
    remove = runtime.install_signal_handlers(stop)
    try:
        await _serve(args, played, clock, stop)
    finally:
        remove()
    return 0


async def _serve(
    args: argparse.Namespace, played: Played, clock: ClockSettings, stop: asyncio.Event
) -> None:
    game = played.game()
    board = EmulatedBoard(
        path=args.link or new_emulated_port(_identity(args).serial),
        rotate=args.rotate,
        clock=clock,
        white_side=args.white_side,
        baud=args.baud or None,
        seed=args.seed,
        identity=_identity(args),
        placement=chess.BaseBoard(game.board().board_fen()),
    )
    record = recording(args.record, board, white_side=args.white_side, first_ply=played.from_ply)
    async with board, record:
        print(f"device: {board.path}", flush=True)
        cable = CableHand(board)
        remove = cable.listen()
        if played.from_ply:
            print(f"resumed at ply {played.from_ply}", flush=True)
        playing = asyncio.create_task(_play(board, played, args))
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({playing, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if playing.done() and not args.exit:
            await stopping
        elif playing.done():  # --exit: the game's last bytes reach the driver first
            await board.drained()
        remove()
        for task in (playing, stopping, *cable.tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        _keep(args, played, board)


class CableHand:
    """Pulls the board's cable out, and plugs it back in on the next call (a rehearsal's
    pulled cable: the daemon's ``board_offline``, then the moves recovered)."""

    def __init__(self, board: EmulatedBoard) -> None:
        self.board = board
        self.tasks: set[asyncio.Task[None]] = set()

    def toggle(self) -> None:
        """Out if it is in, in if it is out; says which on standard output."""
        if self.board.plugged:
            self.board.unplug()
            print("cable pulled out", flush=True)
            return
        task = asyncio.get_running_loop().create_task(self._plug())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _plug(self) -> None:
        await self.board.replug()
        print("cable plugged back in", flush=True)

    def listen(self) -> Callable[[], None]:
        """Toggle on SIGUSR1 and on a line ``u`` of standard input; returns a remover."""
        loop = asyncio.get_running_loop()
        removers: list[Callable[[], object]] = []
        if sys.platform != "win32":
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGUSR1, self.toggle)
                removers.append(lambda: loop.remove_signal_handler(signal.SIGUSR1))
            stdin = sys.stdin
            if stdin is not None and not stdin.closed:
                with contextlib.suppress(OSError, ValueError, NotImplementedError):
                    fd = stdin.fileno()
                    loop.add_reader(fd, self._read, fd)
                    removers.append(lambda: loop.remove_reader(fd))

        def remove() -> None:
            for each in removers:
                with contextlib.suppress(OSError, ValueError, RuntimeError):
                    each()

        return remove

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, 1024)
        except OSError:
            data = b""
        if not data:  # end of input (no terminal, /dev/null): nobody will type
            asyncio.get_running_loop().remove_reader(fd)
            return
        for line in data.decode(errors="replace").splitlines():
            if line.strip().lower() == "u":
                self.toggle()


async def _play(board: EmulatedBoard, played: Played, args: argparse.Namespace) -> None:
    game = played.game()
    if args.after_driver:  # a rehearsal: the game starts once the daemon follows the board
        await board.followed.wait()
        print("driver connected", flush=True)
    await asyncio.sleep(args.wait)
    if game.board().turn == chess.BLACK:  # resumed: White's lever down, Black's time runs
        board.press_lever(board.white_side)
    await board.play(
        game,
        speed=args.speed,
        noise=args.noise,
        plies=None if args.plies is None else max(0, args.plies - played.from_ply),
        late_by=math.inf if math.isinf(args.late_by) else args.late_by,
        signal_result=not args.no_result and args.plies is None,
    )
    plies = len(list(played.whole.mainline_moves()))
    if args.plies is not None and args.plies < plies:
        print(f"stopped after ply {args.plies}: the mover's time runs on", flush=True)
        return
    print(f"game over: {plies} plies played, result {game.headers.get('Result', '*')}", flush=True)
