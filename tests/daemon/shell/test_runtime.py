"""The event loop and stop signals of each platform (daemon/shell/runtime.py)."""

from __future__ import annotations

import asyncio
import os
import selectors
import signal
import sys

import pytest

from daemon import cli
from daemon.commands import demo
from daemon.commands import emulate as emulate_cmd
from daemon.shell import runtime
from drivers.dgt.aio.device import DgtDevice
from drivers.dgt.device_core import DeviceTimeouts
from drivers.dgt.events import BoardDump
from drivers.emulator.device import EmulatedBoard

TIMEOUTS = DeviceTimeouts(reply=2.0, long_serial=1.0, clock_ack=0.5, quiet=10.0, probe=2.0)


@pytest.mark.parametrize("loop_handlers", [True, False], ids=["loop", "portable"])
async def test_ctrl_c_sets_the_stop_event(loop_handlers: bool) -> None:
    """The loop's own handlers (Linux, macOS) and the portable path (Windows) agree."""
    stop = asyncio.Event()
    before = signal.getsignal(signal.SIGINT)
    remove = runtime.install_signal_handlers(stop, loop_handlers=loop_handlers)
    try:
        os.kill(os.getpid(), signal.SIGINT)
        async with asyncio.timeout(10):
            await stop.wait()
    finally:
        remove()
    if not loop_handlers:  # the loop puts back the default handler, the portable path its own
        assert signal.getsignal(signal.SIGINT) == before


async def test_sigterm_stops_too() -> None:
    stop = asyncio.Event()
    remove = runtime.install_signal_handlers(stop)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        async with asyncio.timeout(10):
            await stop.wait()
    finally:
        remove()


@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_each_platform_gets_a_loop_that_can_watch_its_sockets(
    platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    loop = runtime.new_event_loop()
    try:
        assert isinstance(loop, asyncio.SelectorEventLoop)
    finally:
        loop.close()


def test_the_macos_select_loop_reads_a_board(monkeypatch: pytest.MonkeyPatch) -> None:
    """macOS gets a select() loop (kqueue misses tty devices): a real handshake and board
    dump over a pty work on it."""
    monkeypatch.setattr(sys, "platform", "darwin")

    async def dump() -> BoardDump:
        loop = asyncio.get_running_loop()
        assert isinstance(getattr(loop, "_selector", None), selectors.SelectSelector)
        async with EmulatedBoard() as board:
            device = await DgtDevice.open(str(board.path), timeouts=TIMEOUTS)
            try:
                return (await device.handshake()).board
            finally:
                await device.close()

    dumped = runtime.run(dump())
    assert sum(1 for code in dumped.squares if code) == 32  # the start position


@pytest.mark.parametrize("command", ["demo", "emulate"])
def test_without_ptys_the_emulator_commands_say_why(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    message = "virtual DGT boards need a POSIX pseudo-terminal"
    for module in (demo, emulate_cmd):
        monkeypatch.setattr(module, "UNSUPPORTED", message)
    argv = [command] if command == "demo" else [command, "--pgn", "x.pgn"]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"dgtcast {command}: {message}\n"
