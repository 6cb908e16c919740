"""PGN tag values: escaped as the standard says, and names that can be one.

PGN §8.1.1: a tag value is a string token; inside it a quote is written ``\\"`` and a
backslash ``\\\\``; a string holds printing characters only, and the whole tag pair
sits on one line. A name with a newline would split the game in two for every reader
(lichess, the PGN folder, ``round.pgn``), so names are checked where they come in (the
configuration, the tournament's TRF) and escaped where a tag is written.
"""

from __future__ import annotations

import unicodedata

__all__ = ["NAME_LIMIT", "escape_tag_value", "tag_value_problem"]

#: Longest name (player, event, site, section) accepted, in characters.
NAME_LIMIT = 200

#: Unicode categories a tag value may not hold: control characters, line and
#: paragraph separators.
_FORBIDDEN = {"Cc", "Zl", "Zp"}


def escape_tag_value(value: str) -> str:
    """``value`` as the inside of a PGN string token (``"`` and ``\\`` escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def tag_value_problem(value: str, limit: int = NAME_LIMIT) -> str | None:
    """Why ``value`` cannot be a PGN tag value, or None when it can."""
    for index, char in enumerate(value):
        category = unicodedata.category(char)
        if category in _FORBIDDEN:
            if char in "\r\n":
                what = "a newline"
            elif category == "Cc":
                what = f"a control character (U+{ord(char):04X})"
            else:
                what = f"a line break (U+{ord(char):04X})"
            return f"must be one line of text; it holds {what} at position {index + 1}"
    if len(value) > limit:
        return f"must be at most {limit} characters, got {len(value)}"
    return None
