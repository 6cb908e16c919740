"""Snapshots of the round's state, so that a restart replays only what came after one.

The journal keeps every input for good; a snapshot is an *addition* to it: the pickled
state of the :class:`~daemon.round.core.RoundCore` after every record up to a sequence number
(``snapshots`` table, :meth:`~daemon.journal.store.Journal.write_snapshot`). A restart loads
the newest usable snapshot and replays the inputs after it; the core being deterministic,
that gives the state a replay of the whole journal gives (tests/daemon/round/test_snapshots.py
checks it at random cut points).

A snapshot is used only by the same code on the same configuration: its *fingerprint*
hashes the configuration, the tracker settings, python-chess's version and the source of
the ``daemon`` and ``broadcast`` packages. Anything else (an upgrade, an edited TOML, a
snapshot that fails to load) falls back to replaying every input, which always works.

Snapshots are pickles. They are read only from the daemon's own journal, whose records
are chained by digests and whose file the daemon alone writes; a journal from elsewhere
should be treated like any program file from elsewhere.
"""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import io
import os
import pickle
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess

from daemon.config.model import Config
from daemon.game.state import TrackerSettings
from daemon.round.core import RoundCore

__all__ = [
    "ChildDump",
    "SnapshotPolicy",
    "dump_in_child",
    "dump_state",
    "fingerprint",
    "load_state",
]

#: Bumped when the snapshot's layout changes in a way the source hash would miss.
FORMAT = 3

_PACKAGES = ("daemon", "broadcast", "drivers", "base")


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotPolicy:
    """When the service takes a snapshot: as soon as a restart would take too long.

    A restart replays the inputs after the last snapshot through the same core that
    applied them live, so the time the core took for them live is what their replay
    will take (a little more: live, it also rendered what it published). Clock readings
    cost little and moves much (a move is matched, played, checked and rendered), so
    counting inputs alone leaves a move-heavy stretch of the round slow to restart.

    Attributes:
        replay_seconds: after the inputs since the last snapshot took this long to
            apply and render live. At 500 boards of classical chess with running clocks
            that is about one a minute (docs/performance.md, row 7).
        every_inputs: or after this many inputs since the last one.
        every_seconds: or after this long, if any input came since.
    """

    replay_seconds: float = 1.0
    every_inputs: int = 30_000
    every_seconds: float = 600.0

    def due(self, inputs: int, seconds: float, cost: float = 0.0) -> bool:
        """Whether a snapshot is due after ``inputs`` inputs, ``seconds`` seconds and
        ``cost`` seconds of the core's time since the last one."""
        if inputs <= 0:
            return False
        return (
            cost >= self.replay_seconds
            or inputs >= self.every_inputs
            or seconds >= self.every_seconds
        )


def fingerprint(config: Config, tracker: TrackerSettings | None) -> str:
    """What a snapshot must have been made with to be loaded (see the module docstring)."""
    digest = hashlib.sha256(f"{FORMAT}\n{chess.__version__}\n".encode())
    digest.update(repr(config).encode())
    digest.update(repr(tracker).encode())
    digest.update(_source_digest())
    return digest.hexdigest()


def dump_state(core: RoundCore) -> bytes:
    """The core's whole state as bytes (about 7 KiB per board of a long game).

    Compressed (zlib, fastest level: a fifth of the size): a snapshot written late in a
    round lies scattered over the file's free pages, and a restart then reads a few
    hundred of them instead of thousands.
    """
    out = io.BytesIO()
    with _no_gc():
        _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(vars(core))
    return zlib.compress(out.getbuffer(), 1)


@dataclass(frozen=True, slots=True)
class ChildDump:
    """A forked child pickling the core (:func:`dump_in_child`); :meth:`collect` the bytes."""

    pid: int
    fd: int

    def collect(self) -> bytes:
        """Read what the child writes until it exits (blocks: call it from a thread).

        Raises:
            RuntimeError: the child failed (nothing usable was written).
            OSError: the pipe could not be read.
        """
        chunks = []
        try:
            while chunk := os.read(self.fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.fd)
            _, status = os.waitpid(self.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise RuntimeError(f"the snapshot's child process failed ({status})")
        return b"".join(chunks)


def dump_in_child(core: RoundCore) -> ChildDump:
    """:func:`dump_state` in a forked child, so that the caller's thread goes on at once.

    The child gets a copy-on-write image of the process as it is now: the core as it
    stands after the inputs applied so far, whatever the parent does next. It pickles
    and compresses it, writes it to a pipe and exits without running any clean-up (it
    shares the parent's files and sockets and must not touch them).

    Raises:
        OSError: no pipe or no fork (too many processes, no memory; Windows has none).
    """
    if sys.platform == "win32":
        raise OSError("Windows cannot fork: snapshots are taken in the daemon itself")
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        raise
    if pid == 0:  # pragma: no cover - the child (its exit code is checked by collect)
        code = 1
        try:
            os.close(read_fd)
            view = memoryview(dump_state(core))
            while view:
                view = view[os.write(write_fd, view) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    return ChildDump(pid, read_fd)


def load_state(core: RoundCore, data: bytes) -> None:
    """Put the state :func:`dump_state` made into ``core`` (all of it, or nothing).

    Raises:
        Exception: whatever unpickling raises; ``core`` is then unchanged.
    """
    with _no_gc():
        state = pickle.loads(zlib.decompress(data))
    if not isinstance(state, dict) or set(state) != set(vars(core)):
        raise ValueError("the snapshot does not hold a round's state")
    vars(core).update(state)


@contextmanager
def _no_gc() -> Iterator[None]:
    """Millions of small objects: the cyclic collector would run hundreds of times."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_SOURCE: bytes | None = None


def _source_digest() -> bytes:
    global _SOURCE
    if _SOURCE is None:
        digest = hashlib.sha256()
        root = Path(__file__).resolve().parents[2]
        for package in _PACKAGES:
            for path in sorted((root / package).rglob("*.py")):
                digest.update(path.relative_to(root).as_posix().encode())
                digest.update(path.read_bytes())
        _SOURCE = digest.digest()
    return _SOURCE


# -- compact pickling of the many small objects of a game ---------------------------------

_FIELDS: dict[type, tuple[str, ...]] = {}


def _frozen(cls: type, values: tuple[Any, ...]) -> Any:
    obj: Any = object.__new__(cls)
    names = _fields_of(cls)
    if names is None:
        raise TypeError(f"{cls.__qualname__} is no longer a slotted dataclass")
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)
    return obj


def _fields_of(cls: type) -> tuple[str, ...] | None:
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(cls) and "__slots__" in vars(cls):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class _Pickler(pickle.Pickler):
    """Moves and slotted dataclasses as plain tuples (smaller, faster); python-chess's boards
    as python-chess pickles them (its version is part of the fingerprint)."""

    def reducer_override(self, obj: Any) -> tuple[Callable[..., Any], tuple[Any, ...]] | Any:
        kind = type(obj)
        if kind is chess.Move:
            return chess.Move, (obj.from_square, obj.to_square, obj.promotion, obj.drop)
        names = _fields_of(kind)
        if names:
            return _frozen, (kind, tuple(getattr(obj, name) for name in names))
        return NotImplemented
