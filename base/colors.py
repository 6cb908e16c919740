"""The two sides of a chess game, as every layer names them."""

from __future__ import annotations

from typing import Literal

__all__ = ["Color"]

#: A side of the board: the game core, the feed and the viewer all use these two words.
Color = Literal["white", "black"]
