"""Outputs that push to the world: MQTT, lichess, the PGN folder, the webhook (layer L2, I/O).

``mqtt_client`` (the one client set-up and link), ``mqtt`` (topics, payloads, outbox),
``mqtt_rounds`` (past rounds and standings for relays),
``lichess`` (routing and the push planner, pure) and ``lichess_push`` (the shell),
``lichess_refusal``, ``outgoing`` (HTTP POSTs), ``pgn_folder``, ``webhook``, ``output``
and ``output_alerts`` (what every output shares), ``kinds`` (the table of output kinds
a daemon and a relay start their outputs from). May import ``broadcast.feed`` and
``base``.
"""

__all__: list[str] = []
