"""DGT e-board and clock driver (see docs/protocol.md).

Layer L0, sans-I/O, in this package: ``events`` (board → PC messages), ``commands`` (PC →
board), ``protocol`` (framing, ``DgtProtocol``), ``boardside`` (the board's side of the
wire), ``eeprom`` and ``memory`` (the board's memory), ``device_core``, ``refresh`` and
``battery`` (the device's decisions), ``observe`` (DGT → vendor-neutral observations).
Layer L1, asyncio: :mod:`drivers.dgt.aio`. Import from the modules; this package
re-exports nothing. Imports nothing above ``drivers`` but ``base``.
"""

__all__: list[str] = []
