"""DGT e-board and clock driver (see ../shared/spec/dgt-protocol.md and docs/protocol.md).

Layer L0, sans-I/O: ``events`` (board → PC messages), ``commands`` (PC → board),
``protocol`` (framing, ``DgtProtocol``), ``boardside`` (the board's side of the wire),
``observe`` (DGT → vendor-neutral observations). Layer L1, asyncio: ``link``, ``device``,
``supervisor``. Import from the modules; this package re-exports nothing.
"""

__all__: list[str] = []
