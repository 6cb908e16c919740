"""Game reconstruction: pure, vendor-neutral chess logic (layer L2, no I/O)."""

__all__: list[str] = []
