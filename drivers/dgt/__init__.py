"""DGT e-board and clock driver (see ../shared/spec/dgt-protocol.md)."""

__all__: list[str] = []
