"""The round's deterministic core: journal inputs in, games, alerts and results out (L2, pure).

``core`` (``RoundCore``), ``inputs`` (what it takes, typed) and ``codec`` (the same as
journal records), ``shown`` (a board as the broadcast shows it), ``board_game`` (one
board: tracker, record, clock, link), ``rendered_game`` (its PGN extended move by move),
``board_recovery`` (a board caught up from its memory), ``link_silence`` (a silent link),
``mode23`` (the clocks dgtcast drives), ``change`` and ``source`` (moving to the next
round, its boards from the pairings), ``snapshot`` (the core pickled, for fast restarts).
Never awaits, sleeps or reads a clock. May import ``daemon.game``, ``daemon.config``,
``daemon.journal`` (inputs), ``daemon.pairing``, ``daemon.arbiter``, ``drivers``
(observations, commands), ``broadcast.feed`` and ``base``.
"""

__all__: list[str] = []
