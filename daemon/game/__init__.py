"""Game reconstruction: pure, vendor-neutral chess logic (layer L2, no I/O).

Observations in (``observations``), :class:`~daemon.game.tracker.GameTracker` events out
(``events``), the PGN record built from them (``record``); docs/reconstruction.md.
"""

__all__: list[str] = []
