"""How long a process's event loop stalls, and how long its garbage collections take.

:class:`LoopWatch` runs in the measured process (the daemon child of ``bench/latency.py``):
a task asks to be woken every ``period`` seconds and notes how late it was woken. A
wake-up can only be late by as long as the loop was busy with something else (one
callback, one batch of ready sockets, a snapshot, a collection), so the largest delay
is the loop's longest pause, to within ``period``. ``gc.callbacks`` times every
collection of the cyclic garbage collector as well. For each pause the process's CPU
time during it is noted too: a pause the process spent computing (a callback, a
collection) uses about as much CPU as it lasts; a pause with little CPU is time the
process was not running at all (other processes had the cores, or it waited on the
disk).

Each pause over 10 ms is put down to what took half of it or more: a full collection,
younger ones, work marked with :meth:`mark` (the daemon's snapshot fork, its journal
commits), or other work (a burst of inputs, fan-out) when none of those did. The marked
work's durations are spread out too (count, median, p99, max).
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

__all__ = ["LoopWatch"]


class LoopWatch:
    """The loop's pauses and the collector's, from :meth:`start` to :meth:`stop`."""

    def __init__(self, period: float = 0.002) -> None:
        self.period = period
        self.lags: list[float] = []
        self.worst = (0.0, 0.0)  # (the longest pause, the CPU the process used in it)
        self.collections: list[tuple[int, float]] = []  # (generation, seconds)
        self._spans: list[tuple[str, float, float]] = []  # (cause, start, end), monotonic
        self._long: list[tuple[float, float]] = []  # pauses over 10 ms (start, end)
        self._task: asyncio.Task[None] | None = None
        self._gc_started = 0.0

    def start(self) -> None:
        """Begin watching (in the running loop)."""
        self.lags.clear()
        self.collections.clear()
        self._spans.clear()
        self._long.clear()
        self.worst = (0.0, 0.0)
        gc.callbacks.append(self._collected)
        self._task = asyncio.get_running_loop().create_task(self._watch())

    def stop(self) -> dict[str, Any]:
        """Stop; the figures: longest pause, pauses over 5 / 10 / 50 ms, collections."""
        if self._task is not None:
            self._task.cancel()
            self._task = None
        if self._collected in gc.callbacks:
            gc.callbacks.remove(self._collected)
        lags = sorted(self.lags)
        full = [s for g, s in self.collections if g == 2]
        return {
            "loop_max_ms": lags[-1] * 1000 if lags else 0.0,
            "loop_max_cpu_ms": self.worst[1] * 1000,
            "loop_p999_ms": lags[int(len(lags) * 0.999)] * 1000 if lags else 0.0,
            "pauses_over": {str(ms): sum(lag > ms / 1000 for lag in lags) for ms in (5, 10, 50)},
            "gc_count": len(self.collections),
            "gc_max_ms": max((s for _, s in self.collections), default=0.0) * 1000,
            "gc_full_count": len(full),
            "gc_full_max_ms": max(full, default=0.0) * 1000,
            "gc_full_ms": [round(s * 1000, 1) for s in full],
            "pauses_by_cause": self._causes(),
            "gc_young": _spread([s for g, s in self.collections if g < 2]),
            "marked": self._marked(),
        }

    def mark(self, cause: str, start: float, end: float) -> None:
        """Note that ``cause`` ran from ``start`` to ``end`` (``time.monotonic()``)."""
        self._spans.append((cause, start, end))

    def _marked(self) -> dict[str, dict[str, float]]:
        """The durations of each kind of marked work."""
        kinds: dict[str, list[float]] = {}
        for cause, start, end in self._spans:
            if not cause.endswith(" collection"):
                kinds.setdefault(cause, []).append(end - start)
        return {cause: _spread(seconds) for cause, seconds in kinds.items()}

    def _causes(self) -> dict[str, int]:
        """Pauses over 10 ms by what took half of them or more (else "other work")."""
        counts = {"full collection": 0, "young collection": 0, "snapshot": 0}
        counts |= {cause: 0 for cause, _, _ in self._spans} | {"other work": 0}
        for start, end in self._long:
            took: dict[str, float] = {}
            for cause, s, e in self._spans:
                took[cause] = took.get(cause, 0.0) + max(0.0, min(e, end) - max(s, start))
            cause, longest = max(took.items(), key=lambda item: item[1], default=("", 0.0))
            counts[cause if longest >= (end - start) / 2 else "other work"] += 1
        return counts

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.period
            cpu = time.process_time()
            await asyncio.sleep(self.period)
            lag = max(0.0, loop.time() - due)
            self.lags.append(lag)
            if lag > 0.010:
                self._long.append((due, due + lag))
            if lag > self.worst[0]:
                self.worst = (lag, time.process_time() - cpu)

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.monotonic()
        else:
            ended = time.monotonic()
            generation = int(info["generation"])
            self.collections.append((generation, ended - self._gc_started))
            cause = "full collection" if generation == 2 else "young collection"
            self._spans.append((cause, self._gc_started, ended))


def _spread(seconds: list[float]) -> dict[str, float]:
    """Count, median, p99 and max of durations (ms)."""
    ordered = sorted(seconds)
    if not ordered:
        return {"count": 0}
    return {
        "count": len(ordered),
        "median_ms": ordered[len(ordered) // 2] * 1000,
        "p99_ms": ordered[int(len(ordered) * 0.99)] * 1000,
        "max_ms": ordered[-1] * 1000,
    }
