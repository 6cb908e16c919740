"""The operator's live console: the table of every board and the open alerts, and its keys (L4).

``view`` (what the console shows, rendered with ``rich``), ``keys`` (the result keys:
``s`` sets, ``c`` confirms; a pure prompt), ``link`` (the console fed from a running
``Daemon``, its keys carried out on it). May import everything below ``daemon.commands``.
"""

__all__: list[str] = []
