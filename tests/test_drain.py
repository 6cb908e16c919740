"""base/drain.py hands out what a list gathered and keeps the list itself."""

from __future__ import annotations

from base.drain import drain


def test_drain_keeps_the_list_and_hands_out_a_copy() -> None:
    gathered = [1, 2, 3]
    kept = gathered
    taken = drain(gathered)
    assert taken == [1, 2, 3]
    assert taken is not gathered
    assert kept is gathered
    assert gathered == []
    gathered.append(4)
    assert taken == [1, 2, 3]  # the reader's copy does not see later items
    assert drain(gathered) == [4]
    assert drain(gathered) == []
