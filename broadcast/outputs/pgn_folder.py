"""Keep a folder of PGN files in the layout broadcast uploaders watch.

Uploaders (the lichess Broadcaster app and the like) watch one folder per round holding
``game-N.pgn`` per board and ``games.pgn`` with every game (docs/integrations.md, "PGN folder")::

    <path>/round-3/game-1.pgn          single-section event
    <path>/round-3/games.pgn
    <path>/U12/round-3/game-41.pgn     one folder per section when sections are named

The round folder takes the round number from ``BoardState.round`` (``"3"`` or the
``"3.1"`` round.board form both give ``round-3``). Every file is replaced atomically: the
new text goes to a hidden temporary file in the same folder, is flushed to disk
(``fsync``), then renamed over the old file, so a watcher never reads half a game. Only
files whose text changed are written.

:class:`PgnFolderLayout` is the pure core (which file holds what, what changed);
:class:`PgnFolderWriter` is the asyncio shell, writing in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from base.atomic_file import write_atomically
from base.backoff import Backoff, BackoffPolicy
from broadcast.feed.messages import BoardState
from broadcast.feed.pgn import public_pgn
from broadcast.outputs.output import BoardOutput, WorkLoop

__all__ = [
    "FolderLayout",
    "PgnFolderLayout",
    "PgnFolderSettings",
    "PgnFolderWriter",
    "round_folder",
]

log = logging.getLogger(__name__)

_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


#: The default retry timing (seconds).
_WRITE_RETRY = BackoffPolicy(initial=1.0, maximum=30.0)


@dataclass(frozen=True, slots=True, kw_only=True)
class PgnFolderSettings:
    """Where the PGN folder is.

    Attributes:
        path: the folder that holds the round folders (created when missing).
        retry: the delays before writing again after a failed write
            (disk full, folder removed, no permission).
    """

    path: Path
    retry: BackoffPolicy = _WRITE_RETRY


def _safe_name(text: str, fallback: str) -> str:
    """``text`` as one harmless path component (no separators, no leading dots)."""
    name = _UNSAFE.sub("-", text.strip()).strip("-.")
    return name or fallback


def round_folder(section: str, round_: str) -> PurePosixPath:
    """The folder of a round, relative to the output path."""
    number = _safe_name(round_.split(".", 1)[0], "unknown")
    folder = PurePosixPath(f"round-{number}")
    return PurePosixPath(_safe_name(section, "section")) / folder if section else folder


class PgnFolderLayout:
    """Pure core: the files the folder should hold, and which of them changed.

    Call :meth:`receive_board` for every snapshot, then :meth:`changed_files`; after
    writing a file, report it with :meth:`receive_written`.
    """

    def __init__(self) -> None:
        # round folder -> board -> game text
        self._rounds: dict[PurePosixPath, dict[int, str]] = {}
        self._written: dict[PurePosixPath, str] = {}

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot; then call :meth:`changed_files`."""
        pgn = public_pgn(state).strip()
        games = self._rounds.setdefault(round_folder(state.section, state.round), {})
        if pgn:
            games[state.board] = pgn + "\n"
        else:
            games.pop(state.board, None)

    def files(self) -> dict[PurePosixPath, str]:
        """Every file with its text: each game first, then its round's ``games.pgn``."""
        files: dict[PurePosixPath, str] = {}
        for folder, games in self._rounds.items():
            if not games:
                continue
            ordered = [games[board] for board in sorted(games)]
            for board in sorted(games):
                files[folder / f"game-{board}.pgn"] = games[board]
            files[folder / "games.pgn"] = "\n".join(ordered)
        return files

    def changed_files(self) -> dict[PurePosixPath, str]:
        """The files whose text differs from what was last written."""
        return {
            path: text for path, text in self.files().items() if self._written.get(path) != text
        }

    def receive_written(self, path: PurePosixPath, text: str) -> None:
        """``text`` is now on disk at ``path``."""
        self._written[path] = text


class FolderLayout(Protocol):
    """The pure core of a folder of files kept up to date from board states.

    :class:`PgnFolderLayout` is one; the LiveChess 2 folder
    (:mod:`broadcast.livechess.folder`) is another, written by the same writer.
    """

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot; then :meth:`changed_files` says what to write."""

    def changed_files(self) -> dict[PurePosixPath, str]:
        """The files whose text differs from what was last written."""

    def receive_written(self, path: PurePosixPath, text: str) -> None:
        """``text`` is now on disk at ``path``."""


class PgnFolderWriter(BoardOutput):
    """Writes the PGN folder on every change; run :meth:`run` as a task.

    :meth:`publish_board` never blocks; :meth:`write_pending` writes synchronously (for a
    final flush at shutdown, or a command-line export). ``layout`` says which files hold
    what (default: :class:`PgnFolderLayout`).
    """

    def __init__(self, settings: PgnFolderSettings, layout: FolderLayout | None = None) -> None:
        self._root = settings.path
        self._layout = layout or PgnFolderLayout()
        self._work = WorkLoop()
        self._backoff = Backoff(settings.retry)

    @property
    def root(self) -> Path:
        """The output folder."""
        return self._root

    def publish_board(self, state: BoardState) -> None:
        """A board changed: rewrite its files soon."""
        self._layout.receive_board(state)
        self._work.wake()

    async def wait_idle(self) -> None:
        """Wait until every change is on disk (while :meth:`run` runs)."""
        await self._work.wait_idle()

    def write_pending(self) -> list[Path]:
        """Write every changed file now; returns the paths written."""
        changes = self._layout.changed_files()
        self._write(changes)
        for relative, text in changes.items():
            self._layout.receive_written(relative, text)
        return [self._root / relative for relative in changes]

    async def run(self) -> None:
        """Write changes until cancelled; a failed write is logged and retried."""
        await self._work.run(self._write_changes)

    async def _write_changes(self) -> bool:
        """Write what changed since the last write; False when nothing did."""
        changes = self._layout.changed_files()
        if not changes:
            return False
        try:
            await asyncio.to_thread(self._write, changes)
        except OSError as exc:
            delay = self._backoff.next_delay()
            log.error("= pgn folder %s: %s; retry in %.0fs", self._root, exc, delay)
            await asyncio.sleep(delay)
            return True
        self._backoff.reset()
        for relative, text in changes.items():
            self._layout.receive_written(relative, text)
        return True

    def _write(self, changes: dict[PurePosixPath, str]) -> None:
        for relative, text in changes.items():
            # 0644: an uploader may run as another user
            write_atomically(self._root / relative, text.encode(), new_mode=0o644)
            log.debug("> wrote %s", relative)
