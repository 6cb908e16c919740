"""dgtcast daemon: games, clocks, alerts, journal and orchestration (layers L2-L4)."""

__all__: list[str] = []
