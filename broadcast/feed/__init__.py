"""What the daemon hands to spectators, and the words for it (layer L2, no sockets).

``messages`` (``BoardState``, ``Evaluation``, untrusted JSON), ``inbound`` (messages
from the broker, bounded and checked), ``alerts`` (``Alert`` and its wire form),
``commands`` (the arbiter commands and their codec), ``events`` (feed events, their
JSON, ``diff_states``), ``hub`` (latest states, the event ring), ``subscriptions`` (a
consumer's cursor into the hub, board watches), ``pgn`` (the round's PGN,
``format_clock``), ``delay`` (the public delay), ``public_results``, ``signing`` (the
event key's signatures). Imports only ``base`` and libraries.
"""

__all__: list[str] = []
