"""Configuration: the TOML file read once, checked, and turned into settings (layer L2, pure).

``tables`` (each table's keys and types), ``errors`` (one line per problem; the one TOML
reader), ``boards`` (checks across boards), ``lichess`` (the ``[[lichess]]`` rounds),
``sections`` (each section's event, boards and pairing), ``prizes`` (``[prizes]``: the
prize groups), ``model`` (``Config``: the cross-key checks), ``relay`` (a relay's file).
May import ``base``, ``daemon.game``, the broadcast layer's value types, the prize rules
(``daemon.prizes``) and the tie-break codes (``daemon.pairing``); no I/O but reading the
file.
"""

__all__: list[str] = []
