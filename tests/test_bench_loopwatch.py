"""bench/loopwatch.py puts each long pause down to what took half of it or more."""

from __future__ import annotations

import asyncio
import gc
import importlib.util
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def _loopwatch() -> ModuleType:
    spec = importlib.util.spec_from_file_location("loopwatch", ROOT / "bench" / "loopwatch.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hold_the_loop(seconds: float) -> None:
    """Block the event loop, as a callback that computes does."""
    time.sleep(seconds)


async def test_a_blocking_snapshot_and_plain_work_are_told_apart() -> None:
    watch = _loopwatch().LoopWatch(period=0.002)
    watch.start()
    await asyncio.sleep(0.02)
    began = time.monotonic()
    _hold_the_loop(0.05)  # a "snapshot"
    watch.mark("snapshot", began, time.monotonic())
    await asyncio.sleep(0.02)
    _hold_the_loop(0.05)  # work nobody marked
    await asyncio.sleep(0.02)
    figures = watch.stop()
    causes = figures["pauses_by_cause"]
    assert causes["snapshot"] == 1
    assert causes["other work"] >= 1
    assert figures["pauses_over"]["10"] == sum(causes.values())
    snapshots = figures["marked"]["snapshot"]
    assert snapshots["count"] == 1
    assert snapshots["max_ms"] >= 50  # as long as it held the loop
    assert set(figures["marked"]) == {"snapshot"}  # collections are not marked work


async def test_a_full_collection_is_named() -> None:
    watch = _loopwatch().LoopWatch(period=0.002)
    watch.start()
    await asyncio.sleep(0.02)
    garbage: list[list[list[int]]] = [
        [[] for _ in range(50)] for _ in range(20_000)
    ]  # enough for a slow pass
    began = time.monotonic()
    while time.monotonic() - began < 0.03:
        gc.collect()
    del garbage
    await asyncio.sleep(0.02)
    figures = watch.stop()
    assert figures["gc_full_count"] >= 1
    assert figures["pauses_by_cause"]["full collection"] == 1
