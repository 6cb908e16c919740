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
        self._task: asyncio.Task[None] | None = None
        self._gc_started = 0.0

    def start(self) -> None:
        """Begin watching (in the running loop)."""
        self.lags.clear()
        self.collections.clear()
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
        }

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + self.period
            cpu = time.process_time()
            await asyncio.sleep(self.period)
            lag = max(0.0, loop.time() - due)
            self.lags.append(lag)
            if lag > self.worst[0]:
                self.worst = (lag, time.process_time() - cpu)

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            took = time.perf_counter() - self._gc_started
            self.collections.append((int(info["generation"]), took))
