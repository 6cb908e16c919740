"""Running dgtcast's event loop on Linux, macOS and Windows, and stopping it on request.

:func:`run` picks the event loop each platform needs:

* Linux: asyncio's default (epoll).
* macOS: a ``select()`` loop. macOS's kqueue does not report serial and pseudo-terminal
  devices reliably (CPython bpo-32517, python/cpython#84433), and a DGT board is one.
* Windows: a selector loop instead of the default proactor, because the MQTT client
  (aiomqtt over paho) needs ``add_reader``; serial ports are polled by
  pyserial-asyncio-fast there, which works on any loop.

Stopping: on Linux and macOS the event loop watches SIGINT and SIGTERM itself
(``loop.add_signal_handler``). Windows has no such loop API: there the C-level handlers
of SIGINT (Ctrl-C) and SIGBREAK (Ctrl-Break, also sent by ``taskkill`` without ``/F``)
hand the request to the loop with ``call_soon_threadsafe``. Either way the caller gets
one ``asyncio.Event`` that is set on the first request.
"""

from __future__ import annotations

import asyncio
import selectors
import signal
import sys
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any, TypeVar

__all__ = ["STOP_SIGNALS", "install_signal_handlers", "new_event_loop", "run"]

T = TypeVar("T")

#: The signals that ask dgtcast to stop cleanly on this platform.
STOP_SIGNALS: tuple[signal.Signals, ...]
if sys.platform == "win32":
    STOP_SIGNALS = (signal.SIGINT, signal.SIGBREAK)
else:
    STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new event loop of the kind this platform needs (see the module docstring)."""
    if sys.platform == "darwin":
        return asyncio.SelectorEventLoop(selectors.SelectSelector())
    if sys.platform == "win32":
        return asyncio.SelectorEventLoop()
    return asyncio.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on :func:`new_event_loop`: every command's entry point."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)


def install_signal_handlers(
    stop: asyncio.Event, *, loop_handlers: bool | None = None
) -> Callable[[], None]:
    """Make each of :data:`STOP_SIGNALS` set ``stop``; returns a function undoing it.

    Call it from inside the running loop.

    Args:
        stop: set on the first stop request.
        loop_handlers: use the loop's signal API (the default where it exists, i.e. not
            on Windows); False forces the portable ``signal.signal`` path.
    """
    loop = asyncio.get_running_loop()
    if loop_handlers is None:
        loop_handlers = sys.platform != "win32"
    if loop_handlers:
        return _install_on_loop(loop, stop)
    return _install_portable(loop, stop)


def _install_on_loop(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> Callable[[], None]:
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)

    def remove() -> None:
        for sig in STOP_SIGNALS:
            loop.remove_signal_handler(sig)

    return remove


def _install_portable(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> Callable[[], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(stop.set)

    previous = {sig: signal.signal(sig, handle) for sig in STOP_SIGNALS}

    def remove() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return remove
