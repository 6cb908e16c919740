"""The serial link over a real pty, against the emulated board (docs/protocol.md §1, §2)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from drivers.dgt.aio.link import DgtLink, Inbox, LinkClosed, PortUnavailable
from drivers.dgt.commands import RequestBoard, RequestVersion
from drivers.dgt.events import BoardDump, TimedEvent, Version
from drivers.emulator.device import EmulatedBoard


async def next_event(link: DgtLink) -> TimedEvent:
    """The first event the link hands out (the emulator answers within milliseconds)."""
    [first, *_] = await link.events_received()
    return first


async def test_a_request_is_written_and_its_answer_decoded_with_its_arrival_time(
    board: EmulatedBoard,
) -> None:
    link = await DgtLink.open(str(board.path))
    try:
        before = link.protocol.bytes_received
        link.send(RequestVersion())
        at, event = await next_event(link)
        assert event == Version(major=1, minor=2)
        assert at > 0
        assert link.protocol.bytes_received == before + 5
        assert board.firmware.commands == [RequestVersion()]
    finally:
        await link.close()


async def test_the_trace_log_shows_bytes_sent_received_and_state(
    board: EmulatedBoard, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="drivers.dgt.aio.link")
    link = await DgtLink.open(str(board.path))
    link.send(RequestVersion())
    await next_event(link)
    await link.close()
    lines = [record.getMessage() for record in caplog.records]
    path = str(board.path)
    assert f"{path} = open 9600 8N1" in lines
    assert f"{path} > 4d" in lines
    assert f"{path} < 93 00 05 01 02" in lines
    assert f"{path} = closed: closed by us" in lines


async def test_unplugging_closes_the_link_after_the_buffered_events(
    board: EmulatedBoard,
) -> None:
    link = await DgtLink.open(str(board.path))
    link.send(RequestBoard())
    _, dump = await next_event(link)
    assert isinstance(dump, BoardDump)
    board.unplug()
    with pytest.raises(LinkClosed, match="the cable was pulled or the board is gone"):
        await link.events_received()
    assert link.is_closed
    with pytest.raises(LinkClosed):
        link.send(RequestVersion())
    await link.close()


async def test_a_write_to_an_unplugged_board_closes_the_link_without_an_error_log(
    board: EmulatedBoard, caplog: pytest.LogCaptureFixture
) -> None:
    link = await DgtLink.open(str(board.path))
    board.unplug()
    link.send(RequestVersion())  # EIO inside the transport, before the read side notices
    with pytest.raises(LinkClosed):
        await link.events_received()
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR]
    await link.close()


async def test_a_missing_path_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(PortUnavailable, match="ttyACM9"):
        await DgtLink.open(str(tmp_path / "ttyACM9"))


async def test_a_file_that_is_not_a_tty_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a serial port")
    with pytest.raises(PortUnavailable):
        await DgtLink.open(str(tmp_path / "notes.txt"))


async def test_a_port_is_opened_exclusively_and_released_on_close(board: EmulatedBoard) -> None:
    first = await DgtLink.open(str(board.path))
    with pytest.raises(PortUnavailable, match="lock"):
        await DgtLink.open(str(board.path))
    await first.close()
    await first.close()  # twice is harmless
    second = await DgtLink.open(str(board.path))
    second.send(RequestVersion())
    assert (await next_event(second))[1] == Version(major=1, minor=2)
    await second.close()


async def test_an_inbox_hands_out_batches_then_ends_when_closed() -> None:
    inbox: Inbox[int] = Inbox()
    inbox.put([1, 2])
    inbox.put([3])
    assert await inbox.get_batch() == [1, 2, 3]
    inbox.close("done")
    inbox.put([4])
    assert await inbox.get_batch() == []
    assert inbox.close_reason == "done"


async def test_an_inbox_deadline_ends_the_wait_with_nothing_and_open() -> None:
    inbox: Inbox[int] = Inbox()
    loop = asyncio.get_running_loop()
    assert await inbox.get_batch(loop.time() + 0.01) == []
    assert inbox.close_reason is None
    assert await inbox.get_batch(loop.time() - 1) == []  # already passed: no wait at all
    inbox.put([5])
    assert await inbox.get_batch(loop.time() - 1) == [5]  # items win over a passed deadline


async def test_an_inbox_deadline_moved_while_waiting() -> None:
    inbox: Inbox[int] = Inbox()
    loop = asyncio.get_running_loop()
    waiting = asyncio.create_task(inbox.get_batch(loop.time() + 3600))
    await asyncio.sleep(0)
    inbox.move_deadline(loop.time() + 0.01)  # brought forward: the wait ends then
    assert await asyncio.wait_for(waiting, 5) == []
    waiting = asyncio.create_task(inbox.get_batch(loop.time() + 0.01))
    await asyncio.sleep(0)
    inbox.move_deadline(None)  # no deadline any more: only items end the wait
    await asyncio.sleep(0.05)
    assert not waiting.done()
    inbox.put([7])
    assert await asyncio.wait_for(waiting, 5) == [7]


async def test_a_link_past_its_deadline_returns_nothing_and_stays_open(
    board: EmulatedBoard,
) -> None:
    link = await DgtLink.open(str(board.path))
    loop = asyncio.get_running_loop()
    assert await link.events_received(loop.time() + 0.01) == []
    assert not link.is_closed
    await link.close()
    with pytest.raises(LinkClosed):
        await link.events_received(loop.time() + 0.01)
