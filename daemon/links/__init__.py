"""The daemon's links to the outputs and the pairing program, built from the configuration (L3).

``settings`` (the outputs' settings, shared by daemon and relay), ``lichess`` (refusal
alerts, configuration reload), ``livechess`` (the LiveChess server and folder),
``pairing`` (the hand-off and the next round's boards), ``analysis`` (the engine's
evaluation of public positions), ``standings`` (``/standings.json``), ``section_topics``
(past rounds and standings for relays). May import everything below
``daemon.shell``.
"""

__all__: list[str] = []
