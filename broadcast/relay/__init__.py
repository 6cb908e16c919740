"""Relays and commands over MQTT: a whole event served from the broker (layer L2, I/O).

``wire`` (the commands' wire format), ``routing`` (by ownership, pure), ``remote``
(relay and daemon ends), ``ownership`` (the start-up check), ``rounds`` (past rounds and
standings from the broker), ``view`` (the broker's messages into a hub, pure), ``link``
(the relay's MQTT connection), ``server`` (``Relay``). May
import ``broadcast.feed``, ``broadcast.web``, ``broadcast.outputs`` and ``base``.
"""

__all__: list[str] = []
