"""A DGT e-board + clock emulator speaking the wire protocol from the board's side."""

__all__: list[str] = []
