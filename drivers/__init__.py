"""Hardware drivers: sans-I/O protocols (L0) and their asyncio links (L1).

``observations`` and ``memory``: what any e-board driver reports to the game layer,
vendor-neutral. ``dgt``: the DGT board and clock; ``emulator``: a DGT board + clock from
the board's side of the wire. Imports nothing from ``daemon`` or ``broadcast``.
"""

__all__: list[str] = []
