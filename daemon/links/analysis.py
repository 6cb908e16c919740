"""The ``[analysis]`` table turned into the engine's analysis of public positions (layer L3).

The analysis follows the public hub (never the live one: the engine sees a position
only once spectators may) and its evaluations go to the public hub's gate and to MQTT.
"""

from __future__ import annotations

from collections.abc import Callable

from broadcast.analysis.engine import DEFAULT_TIME, Analyst, AnalystSettings
from broadcast.feed.evaluations import EvaluationGate
from broadcast.feed.hub import Hub
from broadcast.feed.messages import Evaluation
from daemon.config.model import Config
from daemon.config.tables import AnalysisConfig

__all__ = ["AnalysisLink", "analysis_off", "analysis_settings"]


def analysis_settings(table: AnalysisConfig | None) -> AnalystSettings | None:
    """The engine's settings; None unless ``[analysis]`` has ``enabled = true``."""
    if table is None or not table.enabled:
        return None
    bound = DEFAULT_TIME if table.time is None and table.depth is None else table.time
    return AnalystSettings(
        engine=table.engine,
        time=bound,
        depth=table.depth,
        threads=table.threads,
        hash_mb=table.hash,
        boards=None if table.boards is None else tuple(table.boards),
        sections=None if table.sections is None else tuple(table.sections),
    )


def analysis_off(config: Config) -> str | None:
    """The start-up note for an ``[analysis]`` table that is there but not enabled."""
    if config.analysis is None or config.analysis.enabled:
        return None
    return (
        "[analysis] is off (enabled = false): no engine evaluation is shown;"
        " add enabled = true to analyse the public positions"
    )


class AnalysisLink:
    """The analysis of ``public``'s positions; run :meth:`serve` as one of the daemon's jobs.

    Args:
        public: the spectators' hub.
        settings: the engine and its bound.
        also: more receivers of every evaluation (the MQTT publisher).
    """

    def __init__(
        self,
        public: Hub,
        settings: AnalystSettings,
        also: tuple[Callable[[Evaluation], None], ...] = (),
    ) -> None:
        self.gate = EvaluationGate(public)
        self.analyst = Analyst(public, settings, [self.gate.receive, *also])

    async def serve(self) -> None:
        """Analyse until cancelled (the engine's troubles stay inside)."""
        self.gate.start()
        try:
            await self.analyst.run()
        finally:
            self.gate.close()
