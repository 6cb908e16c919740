"""Taking everything a list has gathered, leaving the list in place.

The sans-I/O cores gather events and commands in lists that their shells drain after
every input. Swapping in a new empty list (``items, self._items = self._items, []``)
leaves a fresh object behind at every drain: at hundreds of boards these are thousands
of young objects alive at once, which every young pass of the garbage collector walks
(docs/performance.md, "The collector"). :func:`drain` keeps the gathering list and hands out
a copy that dies with its reader.
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["drain"]

T = TypeVar("T")


def drain(items: list[T]) -> list[T]:
    """Everything in ``items``, oldest first; ``items`` is left empty."""
    if not items:
        return []
    taken = items.copy()
    items.clear()
    return taken
