"""``[lichess]`` / ``[[lichess]]``: where each board's games are pushed on lichess.

One table per lichess destination. The old single table names one push URL::

    [lichess]
    enabled = true
    push_url = "https://lichess.org/api/broadcast/round/Ab12Cd34/push"

Tables with ``rounds`` name the lichess round of every event round, for a section or a
board range (a lichess round keeps at most 100 games), and push unless ``enabled =
false``::

    [[lichess]]
    section = "Open"
    boards = "1-100"
    rounds = { 1 = "Ab12Cd34", 2 = "Ef56Gh78" }

Cross-key problems come out one line each, naming the table (``lichess`` when there is
one, ``lichess[2]`` otherwise) and why. :func:`lichess_targets` turns the tables into the
broadcast layer's :class:`~broadcast.outputs.lichess.LichessTarget`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from broadcast.outputs.lichess import MAX_GAMES, LichessTarget
from daemon.config.tables import LichessConfig

__all__ = ["check_lichess", "lichess_targets"]


def check_lichess(
    tables: Sequence[LichessConfig],
    *,
    token: str | None,
    boards: Mapping[int, str] | None,
    env_name: str,
) -> tuple[tuple[LichessConfig, ...], list[str]]:
    """The enabled tables with their token, and one line per problem.

    Args:
        tables: as read.
        token: the environment's token (it overrides every table's).
        boards: every configured board and its section; None for a relay (it knows no
            boards: the board checks are skipped).
        env_name: the token's environment variable, for the error lines.
    """
    problems: list[str] = []
    kept: list[LichessConfig] = []
    claimed: dict[tuple[int, str], int] = {}  # (board, round) -> table position
    for position, table in enumerate(tables, start=1):
        where = "lichess" if len(tables) == 1 else f"lichess[{position}]"
        table = table.model_copy(update={"token": token or table.token})
        if not table.is_enabled:
            continue
        problems += _check_table(table, where, env_name)
        if boards is not None:
            problems += _check_boards(table, where, boards, claimed, position)
        kept.append(table)
    return tuple(kept), problems


def _check_table(table: LichessConfig, where: str, env_name: str) -> list[str]:
    problems = []
    if table.push_url is None and table.rounds is None:
        problems.append(f"{where}.push_url: required when {where}.enabled = true")
    if table.push_url is not None and table.rounds is not None:
        problems.append(f"{where}.rounds: give rounds or push_url, not both")
    if table.token is None:
        problems.append(f"{where}.token: required when {where}.enabled = true (or set {env_name})")
    return problems


def _check_boards(
    table: LichessConfig,
    where: str,
    boards: Mapping[int, str],
    claimed: dict[tuple[int, str], int],
    position: int,
) -> list[str]:
    sections = sorted(set(boards.values()) - {""})
    if table.section is not None and table.section not in sections:
        known = ", ".join(f'"{s}"' for s in sections) or "none: there is no [[sections]]"
        return [f'{where}.section: no section "{table.section}" (sections: {known})']
    mine = [
        number
        for number, section in sorted(boards.items())
        if (table.section is None or section == table.section)
        and (table.boards is None or table.boards[0] <= number <= table.boards[1])
    ]
    if not mine:
        span = "" if table.boards is None else f" in {table.boards[0]}-{table.boards[1]}"
        return [f"{where}.boards: no configured board{span}"]
    if len(mine) > MAX_GAMES:
        return [
            f"{where}.boards: {len(mine)} boards would go to one lichess round, which keeps"
            f" {MAX_GAMES} games: split them over several [[lichess]] tables with boards ="
            f' "{mine[0]}-{mine[MAX_GAMES - 1]}" and so on'
        ]
    for round_key in table.rounds or {"any": ""}:
        for number in mine:
            other = claimed.setdefault((number, round_key), position)
            if other != position:
                shown_round = "" if round_key == "any" else f" in round {round_key}"
                return [
                    f"{where}.boards: board {number}{shown_round} is pushed by lichess[{other}] too"
                ]
    return []


def lichess_targets(tables: Sequence[LichessConfig]) -> list[LichessTarget]:
    """The push targets of the enabled, checked tables."""
    targets = []
    for table in tables:
        assert table.token is not None
        targets.append(
            LichessTarget(
                token=table.token,
                rounds=table.rounds or {},
                push_url=table.push_url,
                section=table.section,
                boards=table.boards,
                base_url=table.server,
            )
        )
    return targets
