"""The ``[livechess]`` table turned into the LiveChess API's settings (layer L4).

The broadcast layer knows messages, not the configuration: this maps each section of the
event to a LiveChess tournament (:class:`~broadcast.livechess.resources.Tournament`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the LiveChess API is imported when it is on (daemon/shell/app.py)
    from broadcast.livechess.resources import Pairing, Tournament
    from broadcast.livechess.server import LiveChessSettings
    from broadcast.outputs.pgn_folder import PgnFolderWriter
    from daemon.config.model import BoardConfig, Config
    from daemon.config.sections import Section

__all__ = ["livechess_folder", "livechess_off", "livechess_settings", "tournaments"]


def _pairing(board: BoardConfig) -> Pairing:
    from broadcast.livechess.resources import Pairing, Player

    return Pairing(
        board=board.number,
        white=Player(name=board.white, title=board.white_title, fide_id=board.white_fide_id),
        black=Player(name=board.black, title=board.black_title, fide_id=board.black_fide_id),
    )


def _tournament(section: Section) -> Tournament:
    from broadcast.livechess.resources import Tournament

    event = section.event
    return Tournament(
        name=event.name,
        section=section.name,
        site=event.site,
        date=event.date.isoformat(),
        round=event.round,
        pairings=tuple(_pairing(board) for board in section.boards),
    )


def tournaments(config: Config) -> tuple[Tournament, ...]:
    """One LiveChess tournament per section, boards in the section's order."""
    return tuple(_tournament(section) for section in config.sections)


def livechess_settings(config: Config) -> LiveChessSettings | None:
    """The API's settings; None unless ``[livechess]`` has ``enabled = true``."""
    table = config.livechess
    if table is None or not table.enabled:
        return None
    from broadcast.livechess.server import LiveChessSettings

    return LiveChessSettings(
        host=table.host,
        port=table.port,
        tournaments=tournaments(config),
        allowed_origins=tuple(table.allowed_origins),
    )


def livechess_off(config: Config) -> str | None:
    """The start-up note for a ``[livechess]`` table that names an address but is not
    ``enabled``: nothing listens there, and the file does not look like it."""
    table = config.livechess
    if table is None or table.enabled or not {"host", "port"} & table.model_fields_set:
        return None
    return (
        f"[livechess] names {table.host}:{table.port} but is off (enabled = false):"
        " the LiveChess API is not served; add enabled = true to serve it"
    )


def livechess_folder(config: Config) -> PgnFolderWriter | None:
    """The LiveChess 2 PGN folder's writer; None unless ``[livechess]`` names a ``folder``."""
    table = config.livechess
    if table is None or table.folder is None:
        return None
    from broadcast.livechess.folder import livechess_folder_writer

    return livechess_folder_writer(table.folder, tournaments(config))
