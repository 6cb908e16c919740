"""A clock reading that reaches a board session before the first board dump of its
connection waits for that dump (and the memory it may call for).

A daemon that dies leaves the board in update mode: as the next one opens the port, the
board may report the clock (a second ticking, a lever pressed) before it hears the
reset, ahead of the handshake's dump (the field updates sent then are dropped by the
driver, tests/dgt/test_device.py). Applied at once, such a reading completes a move left
pending at the stop with the time of a later press, before the memory is asked.
"""

from __future__ import annotations

from pathlib import Path

from broadcast.feed.hub import Hub
from daemon.config.model import load_config
from daemon.journal.store import Journal
from daemon.round.core import RoundCore
from daemon.shell.pipeline import BoardSession
from daemon.shell.service import RoundService
from drivers.dgt.aio.supervisor import LinkUp
from drivers.dgt.events import BoardDump
from drivers.emulator.clock import ChessClock, ClockSettings
from drivers.emulator.firmware import clock_times
from drivers.emulator.physical import PhysicalBoard
from tests.daemon.support import BoardSpec, write_config


async def test_a_reading_before_the_first_dump_follows_the_dump(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, "/dev/null-board")])
    core = RoundCore(load_config(config, env={}))
    clock = ChessClock(ClockSettings.from_text("3+2"))
    clock.start(0.0)
    with Journal(tmp_path / "j.db") as journal:
        service = RoundService(core, journal, Hub())
        session = BoardSession(core.config.sections[0].boards[0], service)
        session.receive_report(LinkUp(port="/dev/null-board", serial="1", version="1.02"), 1.0)
        session.receive_report(clock_times(clock.reading(1.0)), 1.1)  # before the dump
        assert _inputs(service, journal) == [("link", 1.0)]
        dump = BoardDump(squares=PhysicalBoard().fields())
        session.receive_report(dump, 1.2)
        assert _inputs(service, journal) == [("link", 1.0), ("placement", 1.2), ("clock", 1.2)]
        session.receive_report(clock_times(clock.reading(2.5)), 2.5)  # then live as ever
        assert _inputs(service, journal)[-1] == ("clock", 2.5)


def _inputs(service: RoundService, journal: Journal) -> list[tuple[str, float]]:
    service.commit_group()
    kinds = {"link", "placement", "clock"}
    return [(r.kind, r.at) for r in journal.records(board=1, kinds=kinds)]
