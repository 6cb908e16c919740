"""The asyncio shell: sessions, the round service, the app (layers L3-L4).

``pipeline`` (one ``BoardSession`` per e-board), ``service`` (``RoundService``: journal
first, then the core, then the hub), ``rounds`` (round changes), ``app`` (``Daemon``: one
``asyncio.TaskGroup``), ``startup`` (the round opened and replayed), ``outputs`` (the
daemon's outputs from one table of kinds), ``faults`` (a part that fails is reported and
restarted), ``clock_set`` (setting the e-board clocks), ``snapshot_job`` (when a snapshot
is due; pickled off the loop),
``board_check`` (why a board is missing), ``flood`` (a flooding board), ``limits``,
``logs``, ``runtime`` (the event loop and signals of each platform). May import every
other ``daemon`` package but ``daemon.console`` and ``daemon.commands``.
"""

__all__: list[str] = []
