"""Hardware drivers: sans-I/O protocols (L0) and their asyncio links (L1)."""

__all__: list[str] = []
