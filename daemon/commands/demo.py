"""``dgtcast demo``: the embedded default — emulated boards replaying famous games.

For every board of the configuration that has a ``port``, a virtual DGT board + clock (a
pty, paced at 9600 baud) is created at that path; the emulated players replay the game
:data:`PLAN` gives the board, with human timings divided by ``--speed``; then the daemon runs
on the configuration exactly as ``dgtcast run`` would. With ``config/demo.toml``: two games
end in mate, one with the players putting the kings on the centre squares (1-0), one with a
flag fall (one-minute bullet), one board has no e-board (its result is entered on the
arbiter page) and at one board the players never come (late-arrival warning, then alert).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import chess.pgn

from broadcast.web.listen import ListenError
from daemon.commands.emulate import SHIPPED_FILES, SHIPPED_GAMES, emulated_clock
from daemon.commands.options import add_http_port
from daemon.config.model import Config, load_config_or_report
from daemon.pairing import PairingFileError
from daemon.shell import runtime
from daemon.shell.app import Daemon, DaemonOptions
from daemon.shell.logs import configure_logging, wanted
from drivers.emulator.device import EmulatedBoard
from drivers.emulator.firmware import BoardIdentity
from drivers.emulator.pty import UNSUPPORTED

if TYPE_CHECKING:
    from daemon.console.view import LiveConsole

__all__ = [
    "DEMO_CONFIG",
    "GAMES",
    "PLAN",
    "DemoGame",
    "add_arguments",
    "run",
    "write_demo_config",
]

log = logging.getLogger(__name__)

#: The shipped demo configuration (``config/demo.toml``).
DEMO_CONFIG = SHIPPED_FILES / "demo.toml"
#: The famous games the emulated players replay.
GAMES = SHIPPED_GAMES
#: Where :data:`DEMO_CONFIG` puts the virtual boards and its files; a demo run started
#: without ``--config`` moves both into its work folder.
_SHIPPED_PORTS = "/tmp/dgtcast-demo"
_SHIPPED_FILES = '"../var/'


@dataclass(frozen=True, slots=True)
class DemoGame:
    """What the players at one board do.

    Attributes:
        pgn: a file in ``config/games``.
        plies: stop after this many plies (the flag of the side to move falls).
        kings: after the moves, signal this result with the kings (docs/protocol.md §9.1).
    """

    pgn: str
    plies: int | None = None
    kings: str | None = None


#: Board number → its game; e-boards not listed stay in the start position (players absent).
PLAN: dict[int, DemoGame] = {
    1: DemoGame("opera.pgn"),
    2: DemoGame("game-of-the-century.pgn"),
    3: DemoGame("evergreen.pgn", plies=36, kings="1-0"),
    4: DemoGame("reti-tartakower.pgn", plies=12),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--workdir``, ``--speed``, ``--seed``, ``--keep-journal``, ``--http-port``."""
    parser.add_argument(
        "--config", help="a demo configuration (default: the shipped one, in --workdir)"
    )
    parser.add_argument(
        "--workdir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "dgtcast-demo",
        help="where the shipped configuration's virtual boards, journal and PGN go",
    )
    parser.add_argument("--speed", type=float, default=4.0, help="players think this much faster")
    parser.add_argument("--seed", type=int, default=1, help="seeds the players' habits")
    parser.add_argument(
        "--keep-journal", action="store_true", help="continue the previous demo's journal"
    )
    add_http_port(parser, "listen on this HTTP port instead of [server] port")
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument("--plain", action="store_true", help="log lines only, no live console")


def run(args: argparse.Namespace) -> int:
    """Run the demo until Ctrl-C; exit code 2 on a bad configuration or a busy port."""
    if UNSUPPORTED:
        print(f"dgtcast demo: {UNSUPPORTED}", file=sys.stderr)
        return 2
    console = None if args.plain or not wanted() else _live_console()
    if console is None:
        configure_logging(args.log_level)
    else:
        from daemon.console.link import log_to_console  # rich: on a terminal only

        log_to_console(console, args.log_level)
    if args.config is None:
        args.config = str(write_demo_config(args.workdir))
    config = load_config_or_report(args.config)
    if config is None:
        return 2
    if not args.keep_journal:
        _remove_journal(config.storage.path)
    try:
        with console.shown() if console is not None else contextlib.nullcontext():
            return runtime.run(_demo(args, config, console))
    except ListenError as exc:
        print(f"dgtcast demo: {exc} (--http-port chooses another)", file=sys.stderr)
        return 2
    except PairingFileError as exc:
        print(str(exc), file=sys.stderr)
        return 2


def write_demo_config(folder: Path) -> Path:
    """Write the shipped demo configuration into ``folder``, its ports and files moved there.

    The virtual boards' ports go to ``folder/ports``, the journal and the PGN folder to
    ``folder/var``: two demos with their own folders never share a pty or a journal.

    Returns:
        the configuration's path, ``folder/demo.toml``.
    """
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    text = text.replace(_SHIPPED_PORTS, (folder / "ports").as_posix())
    text = text.replace(_SHIPPED_FILES, '"' + (folder / "var").as_posix() + "/")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "demo.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _remove_journal(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


async def _demo(args: argparse.Namespace, config: Config, console: LiveConsole | None) -> int:
    stop = asyncio.Event()
    remove = runtime.install_signal_handlers(stop)
    try:
        async with contextlib.AsyncExitStack() as stack:
            boards = {
                number: await stack.enter_async_context(board)
                for number, board in _emulators(config, args.seed).items()
            }
            config.storage.path.parent.mkdir(parents=True, exist_ok=True)
            daemon = await Daemon.open(args.config, DaemonOptions(port=args.http_port, demo=True))
            stack.callback(daemon.journal.close)
            await daemon.start()
            serving = asyncio.create_task(_served(daemon, stop, console))
            _print_welcome(daemon, args.speed)
            plays = asyncio.create_task(_play_all(daemon, boards, args.speed))
            await serving
            plays.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await plays
    finally:
        remove()
    print("demo stopped", flush=True)
    return 0


def _live_console() -> LiveConsole:
    """The live console, on a terminal only: rich is imported for it alone."""
    from daemon.console.view import LiveConsole

    return LiveConsole()


async def _served(daemon: Daemon, stop: asyncio.Event, console: LiveConsole | None) -> None:
    if console is None:
        await daemon.run(stop)
        return
    from daemon.console.link import serve_with_console

    await serve_with_console(console, daemon, stop)


def _emulators(config: Config, seed: int) -> dict[int, EmulatedBoard]:
    boards = {}
    for section in config.sections:
        clock = emulated_clock(section.event.time_control)
        for board in section.boards:
            if board.port is None:
                continue
            path = Path(board.port)
            path.parent.mkdir(parents=True, exist_ok=True)
            boards[board.number] = EmulatedBoard(
                path=path,
                clock=clock,
                baud=9600,
                seed=seed + board.number,
                identity=BoardIdentity.from_serial(f"{10000 + board.number:05d}"),
            )
    return boards


async def _play_all(daemon: Daemon, boards: dict[int, EmulatedBoard], speed: float) -> None:
    await asyncio.gather(*(s.online.wait() for s in daemon.sessions.values()))
    async with asyncio.TaskGroup() as tasks:
        for number, board in boards.items():
            plan = PLAN.get(number)
            if plan is not None:
                tasks.create_task(_play(board, plan, speed))
    print("all games played; Ctrl-C stops the demo", flush=True)


async def _play(board: EmulatedBoard, plan: DemoGame, speed: float) -> None:
    with (GAMES / plan.pgn).open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    await board.play(game, speed=speed, noise=0.15, plies=plan.plies)
    if plan.kings is not None:
        await asyncio.sleep(2.0)
        await board.signal_result(plan.kings, speed=speed)


def _print_welcome(daemon: Daemon, speed: float) -> None:
    base = f"http://{daemon.config.server.host}:{daemon.server.port}"
    print(
        "dgtcast demo: emulated DGT boards replaying famous games"
        f" (players {speed:g}x faster than life)\n"
        f"  viewer:  {base}/\n"
        f"  arbiter: {base}/arbiter  (token: {daemon.config.server.arbiter_token})\n"
        f"  PGN:     {base}/round.pgn\n"
        "Ctrl-C stops everything.",
        flush=True,
    )
