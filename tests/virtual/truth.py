"""What a mode 23 clock should have shown at each press, for the virtual world's checks
(tests/virtual/world.py, ``World.should_have_shown``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

#: Seconds a SETNRUN may give a side less than what it pays (the readings it is computed
#: from are whole seconds, and a late one may have given some of it back already).
_ROUNDING = 1.5


def mode23_truth(
    presses: Sequence[tuple[str, int]],
    press_times: Sequence[float],
    clock_sets: Sequence[tuple[float, float]],
    clock_given: Sequence[dict[str, float]],
    added_after: Callable[[int], int],
) -> list[int]:
    """The time each press should have left its mover: the clock's reading at the press
    plus what that press earned and what the mover's earlier presses earned that the
    clock was never given.

    Args:
        presses: each press's side and the mover's time then, in order.
        press_times: when each was made.
        clock_sets: when dgtcast sent each SETNRUN and when the clock took it.
        clock_given: the seconds each SETNRUN gave each side (time set less time left).
        added_after: what the time control adds after a side's move N.

    A SETNRUN pays the side's presses made before dgtcast sent it: all of them when it
    gave the side what they earned (within rounding), else the latest ones the seconds it
    gave cover (dgtcast did not know of the others: a press it took for one that starts
    the clock). What it gave beyond those pays the side's presses made while it was on its
    way (dgtcast carried out a press the board showed coming: the move on its way when the
    SETNRUN before it set that side running). A press is paid by a SETNRUN the clock took
    before the press in question.
    """
    numbers: list[int] = []  # the move each press completes for its side
    counts: dict[str, int] = {}
    for side, _ in presses:
        counts[side] = counts.get(side, 0) + 1
        numbers.append(counts[side])
    paid_at = [math.inf] * len(presses)  # when the clock took what paid each press
    for (sent, taken), given in zip(clock_sets, clock_given, strict=True):
        for side, seconds in given.items():
            unpaid = [
                index
                for index, ((presser, _), when) in enumerate(zip(presses, press_times, strict=True))
                if presser == side and when < sent and paid_at[index] == math.inf
            ]
            owed = sum(added_after(numbers[index]) for index in unpaid)
            budget = math.inf if seconds >= owed - _ROUNDING else seconds
            for index in reversed(unpaid):
                cost = added_after(numbers[index])
                if budget < cost - _ROUNDING:
                    break
                budget -= cost
                paid_at[index] = taken
            left = seconds - owed if budget == math.inf else budget
            for index, ((presser, _), when) in enumerate(zip(presses, press_times, strict=True)):
                if presser != side or not sent <= when < taken or paid_at[index] != math.inf:
                    continue
                cost = added_after(numbers[index])
                if left < cost - _ROUNDING:
                    break
                left -= cost
                paid_at[index] = taken
    times: list[int] = []
    for index, ((side, seconds), at) in enumerate(zip(presses, press_times, strict=True)):
        unpaid_before = sum(
            added_after(numbers[earlier])
            for earlier in range(index)
            if presses[earlier][0] == side and paid_at[earlier] > at
        )
        times.append(seconds + added_after(numbers[index]) + unpaid_before)
    return times
