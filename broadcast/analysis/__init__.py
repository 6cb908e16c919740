"""The engine's evaluation of public positions, once for all spectators (layer L2).

``plan`` (pure: which position to analyse next, each position once, the latest of each
board first) and ``engine`` (the asyncio shell: one Stockfish process driven through
python-chess's ``chess.engine``, its crashes and restarts). Imports only ``base``,
``broadcast/feed`` and libraries; the daemon builds its settings (``daemon/links``).
"""

__all__: list[str] = []
