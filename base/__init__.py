"""Words every layer shares (layer L0, no I/O of its own beyond an atomic file write).

``colors`` (the two sides), ``pgn_tags`` (PGN tag values made safe), ``fen`` (FEN text,
quickly), ``drain`` (taking what a list gathered, the list kept), ``backoff`` (the one
retry timing of every reconnecting part), ``atomic_file`` (the one atomic file writer).
Imports nothing from ``drivers``, ``broadcast`` or ``daemon``.
"""

__all__: list[str] = []
