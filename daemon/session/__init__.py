"""The board sessions' pure core: one e-board's observations in, round inputs out (L2, pure).

``core`` (``SessionCore``: the session's states and transitions as data; the memory read
when a board comes back, the line's backlog behind it, the record healed from the memory
while a board stays out of sync), ``actions`` (what it asks of its shell, and what it reads
of the round), ``view`` (that reading over the round core), ``flood`` (a flooding board).
Never awaits, sleeps or reads a clock; daemon/shell/pipeline.py is the asyncio shell. May
import ``daemon.round`` and the other pure cores, ``drivers`` (observations, commands),
``broadcast.feed`` and ``base``.
"""

__all__: list[str] = []
