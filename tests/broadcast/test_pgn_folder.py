"""The PGN folder: layout, real games, atomic replacement, the asyncio writer."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import stat
import threading
from collections.abc import AsyncIterator
from pathlib import Path, PurePosixPath

import chess.pgn
import pytest

from base.atomic_file import write_atomically
from base.backoff import BackoffPolicy
from broadcast.feed.hub import Hub
from broadcast.feed.messages import BoardState
from broadcast.outputs.pgn_folder import (
    PgnFolderLayout,
    PgnFolderSettings,
    PgnFolderWriter,
    round_folder,
)


def game(board: int, moves: str = "1. e4 *", *, section: str = "", round_: str = "3") -> BoardState:
    pgn = f'[Event "Club Open"]\n[Round "{round_}.{board}"]\n[Result "*"]\n\n{moves}\n'
    return BoardState(board=board, section=section, round=round_, pgn=pgn)


def real_games(games_dir: Path) -> list[BoardState]:
    """The six Kasparov - Deep Blue games of 1997 as boards 1..6 of round 1."""
    states: list[BoardState] = []
    with (games_dir / "kasparov-deep-blue-1997.pgn").open() as file:
        while (parsed := chess.pgn.read_game(file)) is not None:
            text = parsed.accept(chess.pgn.StringExporter(headers=True, variations=False))
            states.append(BoardState(board=len(states) + 1, round="1", pgn=text))
    return states


def mainlines(text: str) -> list[list[str]]:
    games = []
    stream = io.StringIO(text)
    while (parsed := chess.pgn.read_game(stream)) is not None:
        games.append([move.uci() for move in parsed.mainline_moves()])
    return games


@pytest.mark.parametrize(
    ("section", "round_", "folder"),
    [
        ("", "3", "round-3"),
        ("", "3.1", "round-3"),
        ("U12", "5", "U12/round-5"),
        ("Under 16 / Girls", "2", "Under-16-Girls/round-2"),
        ("../../etc", "1", "etc/round-1"),
        ("..", "../x", "section/round-unknown"),
        ("", "", "round-unknown"),
    ],
)
def test_round_folders(section: str, round_: str, folder: str) -> None:
    assert round_folder(section, round_) == PurePosixPath(folder)


def test_layout_holds_one_file_per_board_and_the_round() -> None:
    layout = PgnFolderLayout()
    for board in (2, 1):
        layout.receive_board(game(board))
    layout.receive_board(game(41, section="U12"))
    layout.receive_board(BoardState(board=3, round="3"))  # no game yet: no file
    files = layout.files()
    assert sorted(map(str, files)) == [
        "U12/round-3/game-41.pgn",
        "U12/round-3/games.pgn",
        "round-3/game-1.pgn",
        "round-3/game-2.pgn",
        "round-3/games.pgn",
    ]
    assert files[PurePosixPath("round-3/games.pgn")] == (
        files[PurePosixPath("round-3/game-1.pgn")]
        + "\n"
        + files[PurePosixPath("round-3/game-2.pgn")]
    )


def test_only_changed_files_are_due() -> None:
    layout = PgnFolderLayout()
    layout.receive_board(game(1))
    layout.receive_board(game(2))
    for path, text in layout.changed_files().items():
        layout.receive_written(path, text)
    assert layout.changed_files() == {}
    layout.receive_board(game(2, "1. d4 *"))
    assert sorted(map(str, layout.changed_files())) == ["round-3/game-2.pgn", "round-3/games.pgn"]


def test_a_new_round_gets_its_own_folder_and_the_old_one_stays(tmp_path: Path) -> None:
    writer = PgnFolderWriter(PgnFolderSettings(path=tmp_path))
    writer.publish_board(game(1, round_="3"))
    writer.write_pending()
    writer.publish_board(game(1, "1. c4 *", round_="4"))
    written = writer.write_pending()
    assert sorted(p.relative_to(tmp_path).as_posix() for p in written) == [
        "round-4/game-1.pgn",
        "round-4/games.pgn",
    ]
    assert "1. e4 *" in (tmp_path / "round-3/game-1.pgn").read_text()


def test_real_games_are_written_and_read_back(tmp_path: Path, games_dir: Path) -> None:
    states = real_games(games_dir)
    assert len(states) == 6
    writer = PgnFolderWriter(PgnFolderSettings(path=tmp_path))
    for state in states:
        writer.publish_board(state)
    writer.write_pending()
    folder = tmp_path / "round-1"
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [f"game-{n}.pgn" for n in range(1, 7)] + ["games.pgn"]
    )
    expected = [mainlines(state.pgn)[0] for state in states]
    assert mainlines((folder / "games.pgn").read_text()) == expected
    for board, moves in enumerate(expected, start=1):
        assert mainlines((folder / f"game-{board}.pgn").read_text()) == [moves]
    mode = stat.S_IMODE((folder / "game-1.pgn").stat().st_mode)
    assert mode == 0o644


def test_replacement_is_atomic_for_a_concurrent_reader(tmp_path: Path) -> None:
    """A reader polling the file sees one whole version or the other, never a part."""
    path = tmp_path / "round-1" / "game-1.pgn"
    versions = [b"1. e4 *\n", b"1. d4 d5 2. c4 " * 20_000 + b"*\n"]
    write_atomically(path, versions[0])
    seen: set[bytes] = set()
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            seen.add(path.read_bytes())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        inodes = set()
        for i in range(200):
            write_atomically(path, versions[i % 2])
            inodes.add(path.stat().st_ino)
    finally:
        done.set()
        reader.join()
    assert seen <= set(versions)
    assert len(inodes) > 1  # replaced by rename, not rewritten in place
    assert sorted(p.name for p in path.parent.iterdir()) == ["game-1.pgn"]  # no temp left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "games.pgn"
    write_atomically(path, b"old\n")
    with pytest.raises(TypeError):
        write_atomically(path, "text, not bytes: the write fails")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["games.pgn"]


@contextlib.asynccontextmanager
async def writing(writer: PgnFolderWriter) -> AsyncIterator[PgnFolderWriter]:
    task = asyncio.create_task(writer.run())
    try:
        yield writer
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_the_writer_task_writes_every_change(tmp_path: Path) -> None:
    async with writing(PgnFolderWriter(PgnFolderSettings(path=tmp_path))) as writer:
        writer.publish_board(game(1))
        async with asyncio.timeout(10):
            await writer.wait_idle()
        assert (tmp_path / "round-3/game-1.pgn").read_text().endswith("1. e4 *\n")
        writer.publish_board(game(1, "1. e4 e5 *"))
        async with asyncio.timeout(10):
            await writer.wait_idle()
    assert (tmp_path / "round-3/games.pgn").read_text().endswith("1. e4 e5 *\n")


async def test_a_write_error_is_retried(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "out"
    blocker.write_text("a file where the folder should be")
    settings = PgnFolderSettings(path=blocker, retry=BackoffPolicy(initial=0.01, maximum=0.05))
    async with writing(PgnFolderWriter(settings)) as writer:
        writer.publish_board(game(1))
        async with asyncio.timeout(10):
            while not any(r.levelno == logging.ERROR for r in caplog.records):  # noqa: ASYNC110
                await asyncio.sleep(0.01)  # a log record has no event to wait on
        blocker.unlink()
        async with asyncio.timeout(10):
            await writer.wait_idle()
    assert (blocker / "round-3/game-1.pgn").is_file()
    caplog.clear()  # the error was expected


async def test_following_the_hub(tmp_path: Path) -> None:
    hub = Hub()
    writer = PgnFolderWriter(PgnFolderSettings(path=tmp_path))
    hub.publish_board(game(7))
    task = asyncio.create_task(writer.serve(hub))
    try:
        async with asyncio.timeout(10):
            while not (tmp_path / "round-3/game-7.pgn").exists():  # noqa: ASYNC110
                await asyncio.sleep(0.01)  # a file has no event to wait on
            hub.publish_board(game(7, "1. f4 *"))
            for name in ("game-7.pgn", "games.pgn"):  # both files are written in turn
                while "1. f4" not in (tmp_path / "round-3" / name).read_text():  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
            await writer.wait_idle()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert sorted(os.listdir(tmp_path / "round-3")) == ["game-7.pgn", "games.pgn"]
