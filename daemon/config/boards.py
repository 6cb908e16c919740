"""The checks across the boards of a configuration: numbers, ports, serials and players.

Every board number, port (unless boards are picked by serial among its ports), serial
number and player appears once in the whole file; section names are unique. One line
per problem, naming the key path (``sections[2].boards[1].port: duplicate port ...``).
"""

from __future__ import annotations

from collections.abc import Sequence

from daemon.config.tables import BoardConfig

__all__ = ["board_problems"]

#: A section as written: its name, its boards, and the key path of its boards array.
SectionBoards = tuple[str, Sequence[BoardConfig], str]


def board_problems(sections: Sequence[SectionBoards]) -> list[str]:
    """Every clash between the boards of ``sections``, one line each."""
    problems: list[str] = []
    numbers: dict[int, str] = {}
    ports: dict[str, int] = {}
    serials: dict[str, int] = {}
    players: dict[str, int] = {}
    if len({name for name, _, _ in sections}) < len(sections):
        problems += _duplicate_section_names(sections)
    for _, boards, array in sections:
        for index, board in enumerate(boards, 1):
            where = f"{array}[{index}]"
            if board.number in numbers:
                problems.append(
                    f"{where}.number: duplicate board number {board.number}"
                    f" (also {numbers[board.number]})"
                )
            numbers.setdefault(board.number, where)
            if board.port is not None and board.serial is None:  # a glob may be shared
                if board.port in ports:
                    problems.append(
                        f'{where}.port: duplicate port "{board.port}"'
                        f" (also board {ports[board.port]})"
                    )
                ports.setdefault(board.port, board.number)
            if board.serial is not None:
                if board.serial in serials:
                    problems.append(
                        f'{where}.serial: duplicate serial "{board.serial}"'
                        f" (also board {serials[board.serial]})"
                    )
                serials.setdefault(board.serial, board.number)
            problems += _player_problems(where, board, players)
    return problems


def _duplicate_section_names(sections: Sequence[SectionBoards]) -> list[str]:
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, (name, _, _) in enumerate(sections, 1):
        if name in seen:
            problems.append(
                f'sections[{index}].name: duplicate section name "{name}"'
                f" (also sections[{seen[name]}])"
            )
        seen.setdefault(name, index)
    return problems


def _player_problems(where: str, board: BoardConfig, players: dict[str, int]) -> list[str]:
    if board.white and board.white == board.black:
        return [f'{where}.black: "{board.black}" cannot play themselves']
    problems: list[str] = []
    for color in ("white", "black"):
        fide_id = getattr(board, f"{color}_fide_id")
        name = getattr(board, color)
        key = f"fide:{fide_id}" if fide_id is not None else f"name:{name}"
        if not name and fide_id is None:
            continue
        if key in players:
            shown = f"FIDE id {fide_id}" if fide_id is not None else f'"{name}"'
            problems.append(f"{where}.{color}: {shown} already plays on board {players[key]}")
        players.setdefault(key, board.number)
    return problems
