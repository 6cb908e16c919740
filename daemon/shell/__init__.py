"""The asyncio shell: sessions, the round service, the app (layers L3-L4).

``pipeline`` (one ``BoardSession`` per e-board), ``service`` (``RoundService``: journal
first, then the core, then the hub), ``rounds`` (round changes), ``app`` (``Daemon``: one
``asyncio.TaskGroup``), ``board_check`` (why a board is missing), ``flood`` (a flooding
board), ``console`` and ``console_link`` (the operator's live table), ``limits``,
``logs``, ``runtime`` (the event loop and signals of each platform). May import every
other ``daemon`` package but ``daemon.commands``.
"""

__all__: list[str] = []
