"""The arbiter's desk: alerts and results, deterministic (layer L2, pure).

``watch`` (what is followed per board: clock and late-arrival checks as drafts), ``drafts``
(what every other alert says), ``book`` (every alert and its life cycle), ``engine``
(``AlertEngine``: raises, acknowledges and settles alerts), ``decisions`` (its settings
and the records it journals), ``results`` (who may set, propose and confirm a result).
May import ``base``, ``daemon.game``, ``daemon.config`` and ``broadcast.feed`` (the
messages).
"""

__all__: list[str] = []
