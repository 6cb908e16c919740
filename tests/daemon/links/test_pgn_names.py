"""Names in PGN tags, through the real daemon (issue 17.5).

A quote or a backslash in a name is escaped as PGN §8.1.1 says, so ``round.pgn`` reads
back as one game per board with every name intact; a newline or a control character in
a name (from the configuration or the tournament's TRF) is refused at start in one line,
before it could split a game in two for lichess, the PGN folder and ``round.pgn``.
"""

from __future__ import annotations

import asyncio
import io
import re
import urllib.request
from pathlib import Path

import chess.pgn

from tests.daemon.config_file import example_round
from tests.daemon.support import BoardSpec, refused_start, running_daemon, write_config

#: A tag pair as PGN §8.1.1 writes it: a symbol, a string token, on one line.
TAG_LINE = re.compile(r'\[([A-Za-z0-9_]+) "((?:[^"\\]|\\["\\])*)"\]')

NAMES = {
    1: ('Nakamura, Hikaru "Hik"', "Back\\Slash, Anna"),
    2: ('"', "\\"),
    3: ("Ding, Liren", 'Carlsen, Magnus \\"M\\"'),
}


def _unescape(value: str) -> str:
    return re.sub(r"\\([\"\\])", r"\1", value)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return str(reply.read().decode())


async def test_quotes_and_backslashes_in_names_are_escaped(tmp_path: Path) -> None:
    boards = [BoardSpec(n, None, white=white, black=black) for n, (white, black) in NAMES.items()]
    config = write_config(tmp_path, boards)
    async with running_daemon(config) as daemon:
        assert {n: (daemon.config.board(n).white, daemon.config.board(n).black) for n in NAMES} == (
            NAMES
        )
        pgn = await asyncio.to_thread(_get, f"http://127.0.0.1:{daemon.server.port}/round.pgn")
    tags = [line for line in pgn.splitlines() if line.startswith("[")]
    bad = [line for line in tags if not TAG_LINE.fullmatch(line)]
    assert not bad, f"tag lines that are not PGN string tokens: {bad}"
    games = []
    handle = io.StringIO(pgn)
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append(game)
    assert len(games) == len(NAMES)
    read = {
        int(g.headers["Round"].split(".")[1]): (
            _unescape(g.headers["White"]),
            _unescape(g.headers["Black"]),
        )
        for g in games
    }
    assert read == NAMES


def test_a_newline_in_a_configured_name_is_one_line_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, [BoardSpec(1, None, white="Two\nLines", black="Lines")])
    assert refused_start(config).splitlines() == [
        f"{config}: boards[1].white: must be one line of text; it holds a newline at position 4"
    ]
    assert not (tmp_path / "journal.db").exists()


def test_a_control_character_in_a_trf_name_is_reported(tmp_path: Path) -> None:
    config = example_round(tmp_path, [BoardSpec(1, None)])
    trf = tmp_path / "tournament-example.trf"
    trf.write_bytes(trf.read_bytes().replace(b"Tanaka, Hiroshi ", b"Tanaka,\x0bHiroshi "))
    err = refused_start(config)
    line = next(n for n, t in enumerate(trf.read_text().split("\n"), 1) if "Tanaka" in t)
    assert err.splitlines() == [
        f"{trf}:{line}:15: player name must be one line of text; it holds a control"
        " character (U+000B) at position 8 (PGN tags are one line)"
    ]
