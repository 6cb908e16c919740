"""The websocket + HTTP server: viewer, feed, arbiter channel (layer L2, I/O).

``server`` (``BroadcastServer``), ``http`` (pages and resources), ``arbiter_channel``
(``/ws/arbiter``), ``arbiter_guard`` (the wrong-token throttle), ``connection_limits``,
``request_check`` (GET only, each header once), ``listen`` (binding a port). May import
``broadcast.feed`` and ``base``.
"""

__all__: list[str] = []
