"""The LiveChess 2 PGN folder: the layout the lichess Broadcaster reads (pure).

docs/integrations.md, "The LiveChess 2 PGN folder" (as a real LiveChess 2.2.5 export)::

    <folder>/tournament.json            {"id", "name", "rounds": [{"count", "live"}, ...]}
    <folder>/round-4/index.json         {"pairings": [{"white", "black", "result", "live"}]}
    <folder>/round-4/game-1.pgn         one per board of the tournament, numbered from 1
    <folder>/round-4/games.pgn          every game of the round, in board order

With several sections, each is a LiveChess tournament in a folder of its own
(``<folder>/U12/tournament.json``, ``<folder>/U12/round-4/game-1.pgn``, ...; names made
safe as in the plain PGN folder). ``game-K.pgn`` is the section's K-th board, as in
``index.json`` and LiveChess's own numbering; the ``Round`` tag keeps dgtcast's
round.board, the same in every output, which lichess matches games on.

Each game starts with ``[ePGN "0.1;dgtcast"]``, then the game's tags (without the
clock tags of the last reading, which change every second), and its moves carry
``{[%clk 00:15:19]} {[%emt 00:00:02]}`` as LiveChess writes them. A position accepted by
the arbiter (an illegal move that stood, FIDE 7.5) is written as ``SetUp``/``FEN`` tags
and the moves from there, with a comment naming the moves before it, so the file stays
valid PGN and goes on updating (Broadcaster issues #63, #67).

The files are written by :class:`~broadcast.outputs.pgn_folder.PgnFolderWriter` (atomic
replacement, only what changed, retries): :func:`livechess_folder_writer`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

import chess

from broadcast.feed.messages import PGN_RESULTS, BoardState, MoveInfo
from broadcast.feed.pgn import format_clock, game_pgn
from broadcast.livechess.eboards import start_fen
from broadcast.livechess.resources import Tournament, index_player_json, is_live
from broadcast.outputs.pgn_folder import PgnFolderSettings, PgnFolderWriter, round_folder

__all__ = [
    "EPGN",
    "LiveChessFolderLayout",
    "livechess_folder_writer",
    "livechess_pgn",
]

#: The first tag of every game, as LiveChess writes ``0.1;DGT LiveChess/2.2.5``.
EPGN = "0.1;dgtcast"
_TAG = re.compile(r'^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\.)*)"\]$')
_CLOCK_TAGS = frozenset({"WhiteClock", "BlackClock"})
_LINE = 80


def _hms(seconds: float) -> str:
    """``00:15:19``: LiveChess writes two-digit hours."""
    return format_clock(seconds).zfill(8)


def _comments(move: MoveInfo) -> list[str]:
    comments = [] if move.clock is None else [f"{{[%clk {_hms(move.clock)}]}}"]
    if move.emt is not None:
        comments.append(f"{{[%emt {_hms(move.emt)}]}}")
    return comments


def _move_tokens(moves: tuple[MoveInfo, ...], first_ply: int) -> list[str]:
    """Move numbers, SAN and comments; ``first_ply`` plies were played before (a FEN)."""
    tokens: list[str] = []
    for index, move in enumerate(moves):
        ply = first_ply + index
        if ply % 2 == 0:
            tokens.append(f"{ply // 2 + 1}.")
        elif index == 0 or tokens[-1].endswith("}"):
            tokens.append(f"{ply // 2 + 1}...")
        tokens.append(move.san)
        tokens.extend(_comments(move))
    return tokens


def _wrap(tokens: list[str]) -> list[str]:
    """Tokens in lines of at most 80 characters (PGN export format)."""
    lines: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > _LINE:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines


def _split(pgn: str) -> tuple[list[str], str]:
    """The tag lines and the movetext of one game's PGN."""
    tags: list[str] = []
    lines = pgn.strip().split("\n")
    for index, line in enumerate(lines):
        if not _TAG.match(line):
            return tags, "\n".join(lines[index:]).strip()
        tags.append(line)
    return tags, ""


def _leading_comment(movetext: str) -> str | None:
    """The game's comment before the first move (the accepted position's note)."""
    if not movetext.startswith("{"):
        return None
    end = movetext.find("}")
    return movetext[: end + 1].replace("\n", " ") if end > 0 else None


def _first_ply(fen: str) -> int:
    return chess.Board(fen).ply()


def _placeholder(state: BoardState) -> str:
    """The tags of a board the daemon has not described yet (an empty game)."""
    tags = {"Round": state.round, "White": state.white, "Black": state.black}
    quoted = {
        name: (value or "?").replace("\\", "\\\\").replace('"', '\\"')
        for name, value in tags.items()
    }
    lines = [f'[{name} "{value}"]' for name, value in quoted.items()]
    result = PGN_RESULTS.get(state.result, state.result)
    return "\n".join([*lines, f'[Result "{result}"]', "", result]) + "\n"


def livechess_pgn(state: BoardState) -> str:
    """One board's game as LiveChess writes it (see the module docstring)."""
    tag_lines, movetext = _split(game_pgn(state) or _placeholder(state))
    tags = [f'[ePGN "{EPGN}"]']
    result = PGN_RESULTS.get(state.result, state.result)
    for line in tag_lines:
        match = _TAG.match(line)
        assert match is not None
        if match.group(1) in _CLOCK_TAGS or match.group(1) == "ePGN":
            continue
        if match.group(1) == "Result":
            result = match.group(2)
        tags.append(line)
    tokens = [] if (comment := _leading_comment(movetext)) is None else [comment]
    tokens += _move_tokens(state.moves, _first_ply(start_fen(state)))
    body = _wrap([*tokens, result])
    return "\n".join([*tags, "", *body]) + "\n"


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


class LiveChessFolderLayout:
    """Pure core: the files of the LiveChess 2 folder, and which of them changed.

    Args:
        tournaments: the event's sections (their boards in order).
        earlier_rounds: ``tournament.json``'s ``rounds`` entries of rounds before the
            current one, by tournament uuid (read from the folder at start; rounds with
            none are written ``{"count": 0, "live": 0}``).
    """

    def __init__(
        self,
        tournaments: tuple[Tournament, ...],
        earlier_rounds: dict[str, list[dict[str, Any]]] | None = None,
    ) -> None:
        self._tournaments = tournaments
        self._earlier = earlier_rounds or {}
        self._states: dict[int, BoardState] = {}
        self._written: dict[PurePosixPath, str] = {}
        self._several = len(tournaments) > 1

    def receive_board(self, state: BoardState) -> None:
        """Take a board snapshot; then call :meth:`changed_files`."""
        self._states[state.board] = state

    def folder_of(self, tournament: Tournament) -> PurePosixPath:
        """The tournament's folder, relative to the output folder."""
        return round_folder(tournament.section if self._several else "", "0").parent

    def files(self) -> dict[PurePosixPath, str]:
        """Every file with its text."""
        files: dict[PurePosixPath, str] = {}
        for tournament in self._tournaments:
            files.update(self._tournament_files(tournament))
        return files

    def changed_files(self) -> dict[PurePosixPath, str]:
        """The files whose text differs from what was last written."""
        return {p: text for p, text in self.files().items() if self._written.get(p) != text}

    def receive_written(self, path: PurePosixPath, text: str) -> None:
        """``text`` is now on disk at ``path``."""
        self._written[path] = text

    def _tournament_files(self, t: Tournament) -> dict[PurePosixPath, str]:
        base = self.folder_of(t)
        folder = base / f"round-{t.round}"
        files: dict[PurePosixPath, str] = {}
        games: list[str] = []
        pairings: list[dict[str, Any]] = []
        for number, pairing in enumerate(t.pairings, start=1):
            state = self._states.get(pairing.board) or BoardState(
                board=pairing.board,
                round=f"{t.round}.{pairing.board}",
                white=pairing.white.name,
                black=pairing.black.name,
            )
            text = livechess_pgn(state)
            files[folder / f"game-{number}.pgn"] = text
            games.append(text)
            pairings.append(
                {
                    "white": index_player_json(pairing.white),
                    "black": index_player_json(pairing.black),
                    "result": state.result,
                    "live": is_live(state),
                }
            )
        files[folder / "games.pgn"] = "\n".join(games)
        files[folder / "index.json"] = _json({"pairings": pairings})
        live = sum(1 for p in pairings if p["live"])
        rounds = list(self._earlier.get(t.uuid, []))[: t.round - 1]
        rounds += [{"count": 0, "live": 0}] * (t.round - 1 - len(rounds))
        rounds.append({"count": len(pairings), "live": live})
        files[base / "tournament.json"] = _json({"id": t.uuid, "name": t.title, "rounds": rounds})
        return files


def _earlier_rounds(
    root: Path, layout: LiveChessFolderLayout, tournaments: tuple[Tournament, ...]
) -> dict[str, list[dict[str, Any]]]:
    """The ``rounds`` entries an earlier run left in each ``tournament.json``."""
    found: dict[str, list[dict[str, Any]]] = {}
    for t in tournaments:
        path = root / layout.folder_of(t) / "tournament.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        rounds = data.get("rounds") if isinstance(data, dict) else None
        if isinstance(rounds, list):
            found[t.uuid] = [r for r in rounds if isinstance(r, dict)]
    return found


def livechess_folder_writer(path: Path, tournaments: tuple[Tournament, ...]) -> PgnFolderWriter:
    """A writer keeping the LiveChess 2 folder at ``path`` (run it with ``serve(hub)``)."""
    probe = LiveChessFolderLayout(tournaments)
    layout = LiveChessFolderLayout(tournaments, _earlier_rounds(path, probe, tournaments))
    return PgnFolderWriter(PgnFolderSettings(path=path), layout)
