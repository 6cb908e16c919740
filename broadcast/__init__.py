"""Broadcast: hub, websocket + HTTP server, MQTT, lichess push, PGN folder (layer L2, I/O)."""

__all__: list[str] = []
