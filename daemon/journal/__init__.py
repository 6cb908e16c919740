"""The journal: every input of the round core, in SQLite (WAL), so a restart loses nothing (L2).

``records`` (entries, the round identity, errors), ``file`` (schema, opening read-only or
for writing), ``lock`` (one daemon per journal), ``store`` (``Journal``: append, read),
``hold`` (appends held while the disk refuses them), ``identity`` (the journal belongs to
this configuration), ``inputs`` (the input records and their payloads). May import
``base``, ``drivers`` (observations) and ``daemon.config``.
"""

__all__: list[str] = []
