"""Speak DGT LiveChess 2: its local API (websocket + HTTP) and its PGN folder layout.

Tools written for LiveChess (lichess's DGT page, the lichess Broadcaster, overlays,
operator scripts) work unchanged against dgtcast (docs/integrations.md,
"DGT LiveChess 2").
"""
