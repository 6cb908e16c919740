"""``dgtcast boards``: every serial port that answers as a DGT board, and whose it is.

For each port of :func:`~drivers.dgt.aio.ports.serial_ports` (and the ``--port`` paths or
globs) it runs the handshake and prints the board's serial number, firmware, clock and
battery, and which ``[[boards]]`` table of ``--config`` it is (by ``serial``, else by
``port``). Ports that do not answer are listed with the reason and the fix; configured
boards that no port answered for are listed last. Run it while ``dgtcast run`` is
stopped: a running daemon holds its boards' ports.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from dataclasses import dataclass

from broadcast.feed.pgn import format_clock
from daemon.config.model import BoardConfig, Config, load_config_or_report
from daemon.shell import runtime
from drivers.dgt.aio.ports import PortSpec, serial_ports
from drivers.dgt.aio.probe import (
    FIX_BUSY,
    BoardFound,
    PortProblem,
    ProbeResult,
    explain_path,
    probe_ports,
)
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import BatteryStatus, ClockTimes

__all__ = ["BoardListing", "add_arguments", "list_boards", "render", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``--config``, ``--port`` (repeatable)."""
    parser.add_argument("--config", help="name the configured board of each port found")
    parser.add_argument(
        "--port",
        action="append",
        default=[],
        help="also try these paths or globs (repeatable), e.g. /dev/dgt-*",
    )


def run(args: argparse.Namespace) -> int:
    """Probe the ports, print the table; exit code 2 on a bad configuration."""
    config: Config | None = None
    if args.config is not None:
        config = load_config_or_report(args.config)
        if config is None:
            return 2
    listing = runtime.run(list_boards(config, args.port))
    print(render(listing))
    return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardListing:
    """What ``dgtcast boards`` found.

    Attributes:
        results: one per port tried, in port order.
        owners: the configured board of each port that answered, by port.
        missing: configured e-boards no answering port belongs to, with the reason.
    """

    results: tuple[ProbeResult, ...]
    owners: dict[str, BoardConfig]
    missing: tuple[tuple[BoardConfig, str], ...]


async def list_boards(
    config: Config | None, patterns: Sequence[str], *, timeouts: DeviceTimeouts | None = None
) -> BoardListing:
    """Probe every port and match the answers with the configured boards."""
    configured = () if config is None else tuple(b for b in config.boards if b.has_eboard)
    extra = [*patterns, *(b.port for b in configured if b.port is not None)]
    results = tuple(await probe_ports(serial_ports(extra), timeouts=timeouts))
    owners: dict[str, BoardConfig] = {}
    for result in results:
        if isinstance(result, BoardFound):
            owner = owner_of(result, configured)
            if owner is not None:
                owners[result.port] = owner
    claimed = {board.number for board in owners.values()}
    missing = tuple(
        (board, _why_missing(board, results)) for board in configured if board.number not in claimed
    )
    return BoardListing(results=results, owners=owners, missing=missing)


def owner_of(found: BoardFound, boards: Sequence[BoardConfig]) -> BoardConfig | None:
    """The configured board that ``found`` is: by serial number, else by port."""
    for board in boards:
        if board.serial is not None and board.serial == found.serial:
            return board
    for board in boards:
        if board.serial is None and board.port is not None and _port_matches(board.port, found):
            return board
    return None


def _port_matches(port: str, found: BoardFound) -> bool:
    return os.path.realpath(found.port) in PortSpec.from_str(port).candidates()


def _why_missing(board: BoardConfig, results: Sequence[ProbeResult]) -> str:
    if board.serial is not None:
        seen = sorted(r.serial for r in results if isinstance(r, BoardFound))
        answered = ", ".join(seen) if seen else "none"
        where = "any port" if board.port is None else board.port
        text = f"no board with serial {board.serial} answers on {where} (serials found: {answered})"
        busy = [r.port for r in results if isinstance(r, PortProblem) and r.fix == FIX_BUSY]
        if not busy:
            return text
        # which board a port in use holds is not known (a running daemon holds its boards')
        verb = "is" if len(busy) == 1 else "are"
        return f"{text}; {', '.join(busy)} {verb} in use by another program and may hold it"
    assert board.port is not None
    spec = PortSpec.from_str(board.port)
    if not spec.is_glob and (problem := explain_path(board.port)) is not None:
        return f"{problem.reason}: {problem.fix}"
    paths = set(spec.candidates())
    problems = [
        r for r in results if isinstance(r, PortProblem) and os.path.realpath(r.port) in paths
    ]
    if problems:
        return f"{problems[0].reason}: {problems[0].fix}"
    return f"no DGT board answers on {board.port}"


def render(listing: BoardListing) -> str:
    """The table and the notes, as printed."""
    header = ("PORT", "SERIAL", "FIRMWARE", "CLOCK", "BATTERY", "BOARD")
    rows: list[tuple[str, ...]] = []
    notes: list[str] = []
    for result in listing.results:
        if isinstance(result, BoardFound):
            owner = listing.owners.get(result.port)
            rows.append(
                (
                    result.port,
                    result.serial,
                    result.version,
                    _clock_text(result.clock),
                    _battery_text(result.battery),
                    "not configured" if owner is None else f"board {owner.number}",
                )
            )
        else:
            notes.append(f"{result.port}: {result.reason}; {result.fix}")
    lines = _table(header, rows) if rows else ["no DGT board answers on any serial port"]
    lines += notes
    lines += [f"board {board.number}: {why}" for board, why in listing.missing]
    return "\n".join(lines)


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]


def _clock_text(clock: ClockTimes | None) -> str:
    if clock is None:
        return "no answer"
    if clock.no_clock:
        return "none"
    return f"{format_clock(clock.left.total_seconds)} | {format_clock(clock.right.total_seconds)}"


def _battery_text(battery: BatteryStatus | None) -> str:
    if battery is None:
        return "-"
    state = " charging" if battery.charging else ""
    return f"{battery.percent}%{state}"
