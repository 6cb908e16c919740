"""The round's deterministic core: every board's game, clock, alerts and result (pure).

One :class:`RoundCore` holds a :class:`~daemon.game.tracker.GameTracker` per e-board and
the shared :class:`~daemon.arbiter.engine.AlertEngine`. It takes the round's typed inputs
(:mod:`daemon.round.inputs`, journalled as :mod:`daemon.round.codec` writes them) one at a
time and answers with what changed: boards to republish, alerts to publish, decisions to
journal. It never reads a clock or does I/O, so replaying the journal through a fresh core
rebuilds the round exactly (docs/architecture.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import assert_never

import chess

from broadcast.feed.alerts import Alert
from broadcast.feed.commands import (
    AcceptPosition,
    AckAlert,
    ArbiterCommand,
    ChooseLine,
    ConfirmResult,
    NextRound,
    RebuildFromMemory,
    SetClocks,
    SetResult,
)
from broadcast.feed.messages import BoardState, ClockReading
from daemon.arbiter.decisions import AlertSettings, Decision
from daemon.arbiter.engine import AlertEngine
from daemon.arbiter.results import CommandRefused
from daemon.arbiter.watch import BoardRules
from daemon.config.model import BoardConfig, Config
from daemon.config.sections import Section
from daemon.game.events import (
    GameEvent,
    PositionAccepted,
)
from daemon.game.record import GameRecord
from daemon.game.recovery import memory_needed
from daemon.game.state import TrackerSettings, TrackerState
from daemon.game.tracker import GameTracker
from daemon.round.board_game import (
    BoardGame,
    apply_event,
    game_headers,
    make_tracker,
    moves_recovered,
    note_move,
    note_press,
)
from daemon.round.board_recovery import replay_memory, setting_sent
from daemon.round.change import RoundChange, section_after
from daemon.round.gap_fill import clock_after_gap, fill_gap
from daemon.round.inputs import (
    ArbiterInput,
    BatteryInput,
    BoardInput,
    ClockInput,
    FloodInput,
    JournalInput,
    LinkInput,
    PlacementInput,
    RecoveryInput,
    RoundChangeInput,
    RoundInput,
    StartInput,
    TickInput,
)
from daemon.round.link_silence import LinkSilence
from daemon.round.shown import board_state, clock_reading
from drivers.observations import LinkObserved, LinkState

__all__ = ["Outcome", "RoundCore"]


@dataclass(slots=True)
class Outcome:
    """What one input changed."""

    boards: set[int] = field(default_factory=set)
    alerts: list[Alert] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    game_events: list[tuple[int, GameEvent]] = field(default_factory=list)


class RoundCore:
    """Every board of the round, driven by its inputs.

    Args:
        config: the validated configuration (its ``round_start`` already fixed).
        tracker_settings: timers of the game trackers (tests shorten them).
    """

    def __init__(self, config: Config, tracker_settings: TrackerSettings | None = None) -> None:
        self.config = config
        self.engine = AlertEngine(AlertSettings.from_config(config))
        self.games: dict[int, BoardGame] = {}
        self._deadlines: dict[int, float] = {}  # by board, trackers with a timer running
        #: E-boards not heard since the daemon's last start (``start`` inputs).
        self.links = LinkSilence()
        #: The time of the latest input: until then the daemon was watching.
        self.seen_until = -math.inf
        base = self._tracker_base = tracker_settings or TrackerSettings()
        for section in config.sections:
            for board in section.boards:
                self.games[board.number] = BoardGame(
                    config=board,
                    section=section,
                    tracker=make_tracker(board, section, base),
                    record=GameRecord(game_headers(board, section)),
                    serial=board.serial,  # known before the board is heard, if configured
                )

    # -- inputs ------------------------------------------------------------------------

    def apply(self, item: RoundInput) -> Outcome:
        """Act on one input; returns what changed.

        Raises:
            CommandRefused: an arbiter command that cannot be carried out, or an input
                for a board without e-board (nothing changed).
        """
        outcome = Outcome()
        at = item.at
        seen, self.seen_until = self.seen_until, max(self.seen_until, at)
        try:
            match item:
                case (
                    ClockInput() | PlacementInput() | LinkInput() | RecoveryInput() | BatteryInput()
                ):
                    self._observe(item, outcome)
                case TickInput():
                    self._tick(at, outcome)
                case ArbiterInput():
                    self._command(item.command, at, outcome)
                case RoundChangeInput():
                    self._change_round(item.change, at, outcome)
                case StartInput():
                    self._start(item.silence, at, seen, outcome)
                case FloodInput():
                    self.engine.receive_flood(item.board, item.flooding, at)
                case JournalInput():
                    self.engine.receive_journal(item.written, item.reason, item.held, at)
                case _:
                    assert_never(item)
        finally:
            self._note_deadlines(self.games if type(item) is TickInput else (item.board,))
        self._drain_engine(outcome)
        return outcome

    def next_deadline(self) -> float | None:
        """When a ``tick`` input is due next (None: no timer runs)."""
        due = min(self._deadlines.values(), default=math.inf)  # asked after every input
        for other in (self.engine.next_deadline(), self.links.next_deadline()):
            if other is not None and other < due:
                due = other
        return due if due != math.inf else None

    def _note_deadlines(self, boards: Iterable[int]) -> None:
        """Keep the next deadline of the trackers an input reached (only those change)."""
        for number in boards:
            game = self.games.get(number)
            deadline = game.tracker.next_deadline() if game and game.tracker else None
            if deadline is None:
                self._deadlines.pop(number, None)
            else:
                self._deadlines[number] = deadline

    def _observe(self, item: BoardInput, outcome: Outcome) -> None:
        board = item.board
        game = self.games[board]
        tracker = game.tracker
        if tracker is None:
            raise CommandRefused(f"board {board} has no e-board")
        match item:
            case ClockInput():
                self._clock(game, tracker, item, outcome)
            case PlacementInput():
                game.placement = item.sensed
                tracker.receive_placement(item.sensed)
            case LinkInput():
                self._link(game, tracker, item)
                outcome.boards.add(board)
            case RecoveryInput():
                self._recover(board, tracker, item, outcome)
                outcome.boards.add(board)
            case BatteryInput():
                game.battery = item.battery
                outcome.boards.add(board)
            case _:
                assert_never(item)
        self._drain_tracker(board, outcome)

    def _clock(
        self, game: BoardGame, tracker: GameTracker, item: ClockInput, outcome: Outcome
    ) -> None:
        board, reading = item.board, item.reading
        game.reading = reading
        # a press since the clock as the game last had it (a memory's replay included)
        note_press(game.ledger, tracker.last_clock, reading, clock_set=item.clock_set)
        if item.clock_set:
            game.setting = setting_sent(game, tracker, item)
        elif reading.connected:
            game.setting = None
        if reading.connected:  # what the clock still lacks (none: the session gave it)
            game.clock_owed = dict(item.lacking)
        game.clock_adds = item.increments == "clock"
        refused = item.increments == "refused"
        if refused or item.clock_set:
            self.engine.receive_clock_mode(board, refused, item.at)
        tracker.receive_clock(reading)
        self.engine.receive_clock_link(board, reading.connected, item.at)
        if game.gap_clock is not None:
            self._drain_tracker(board, outcome, extra=clock_after_gap(game, reading, item.at))

    def _link(self, game: BoardGame, tracker: GameTracker, item: LinkInput) -> None:
        board = item.board
        tracker.receive_link(item.link)
        game.online = item.link.state is LinkState.ONLINE
        if not game.online and game.setting is not None:
            game.setting = dataclasses.replace(game.setting, cut=True)
        game.catching_up = False
        self.links.receive_heard(board)
        if game.online:
            if item.serial is not None:
                game.serial = item.serial
            if item.port is not None:
                game.port = item.port
        self.engine.receive_link(board, game.online, item.at)

    def memory_needed(self, board: int, placement: chess.BaseBoard) -> bool:
        """Whether a board coming online with ``placement`` needs its memory read."""
        game = self.games.get(board)
        if game is None or game.tracker is None:
            return False
        return memory_needed(game.tracker, placement)

    def _recover(
        self, board: int, tracker: GameTracker, item: RecoveryInput, outcome: Outcome
    ) -> None:
        """Catching up from the board's memory (:mod:`daemon.round.board_recovery`)."""
        game = self.games[board]
        self.engine.receive_gap(board, unseen=True)  # the memory's presses: no clock check
        anchored, corrected = replay_memory(game, tracker, item)
        self._drain_tracker(board, outcome, recovered="memory", extra=corrected)
        # A log that holds the game covers the gap: what the board shows beyond it is a
        # move on its way or a square still wrong, live input's business (no search, which
        # may take a second of the loop). Searched: a log that could not, or none.
        read = item.state == "read"
        found = None if anchored and read else fill_gap(game, tracker, item)
        if found is not None:
            self._drain_tracker(board, outcome, recovered="search", extra=found)
        self.engine.receive_gap(board, unseen=False)
        if read and tracker.state is TrackerState.OUT_OF_SYNC and not found:
            self.engine.receive_memory_unsure(board, item.at)  # the memory could not heal it

    def _choose_line(self, board: int, line: int, at: float, outcome: Outcome) -> None:
        game = self._game(board)
        tracker = game.tracker
        if tracker is None or not 1 <= line <= len(game.candidates):
            raise CommandRefused(f"board {board}: no candidate line {line}")
        moves = [chess.Move.from_uci(uci) for uci in game.candidates[line - 1]]
        if not tracker.play_line(moves, at):
            raise CommandRefused(f"board {board}: line {line} no longer fits the game")
        game.candidates = ()
        self.engine.choose_line(board, line, at)
        self._drain_tracker(board, outcome, recovered="search")

    def _change_round(self, change: RoundChange, at: float, outcome: Outcome) -> None:
        """A section moves on to another round (daemon/round/change.py).

        Each of its boards starts a new game record with the new players, a tracker
        waiting for the start position (fed the board's last placement and clock
        reading, so a board already set up needs no touch), no result, and its open
        alerts about the old game resolved (docs/alerts.md). Boards the new round adds
        join the section.

        Raises:
            CommandRefused: no such section, or a board number another section uses.
        """
        index = next(
            (i for i, s in enumerate(self.config.sections) if s.name == change.section), None
        )
        if index is None:
            raise CommandRefused(f'no section "{change.section}"')
        section = section_after(self.config.sections[index], change)
        for board in section.boards:
            owner = self.games.get(board.number)
            if owner is not None and owner.section.name != section.name:
                raise CommandRefused(
                    f"board {board.number} belongs to section {owner.section.name!r}"
                )
        sections = list(self.config.sections)
        sections[index] = section
        self.config = dataclasses.replace(self.config, sections=tuple(sections))
        for board in section.boards:
            self._restart_board(board, section, at, outcome)

    def _restart_board(
        self, board: BoardConfig, section: Section, at: float, outcome: Outcome
    ) -> None:
        old = self.games.get(board.number)
        tracker = make_tracker(board, section, self._tracker_base)
        game = BoardGame(
            config=board,
            section=section,
            tracker=tracker,
            record=GameRecord(game_headers(board, section)),
        )
        if old is not None:
            game.online, game.serial, game.port = old.online, old.serial, old.port
            game.placement, game.reading = old.placement, old.reading
            game.battery = old.battery
        self.games[board.number] = game
        event = section.event
        rules = BoardRules.of_event(
            event,
            has_eboard=board.has_eboard and bool(board.white or board.black),
            section=section.name,
        )
        self.engine.new_round(board.number, rules, at)
        outcome.boards.add(board.number)
        if tracker is not None:
            if game.online is False:
                tracker.receive_link(LinkObserved(state=LinkState.OFFLINE, at=at))
            if game.placement is not None:
                tracker.receive_placement(dataclasses.replace(game.placement, at=at))
            if game.reading is not None:
                tracker.receive_clock(dataclasses.replace(game.reading, at=at))
            self._drain_tracker(board.number, outcome)
        self._note_deadlines((board.number,))

    def _tick(self, now: float, outcome: Outcome) -> None:
        for number, game in self.games.items():
            if game.tracker is not None:
                game.tracker.receive_tick(now)
                self._drain_tracker(number, outcome)
        for number, when in self.links.receive_tick(now):  # silent since the start
            self.games[number].online = False
            self.engine.receive_link(number, False, when)
            outcome.boards.add(number)
        self.engine.receive_tick(now)

    def _start(self, silence: float, at: float, seen: float, outcome: Outcome) -> None:
        """The daemon (re)started: no e-board's link is known until it is heard again.

        Nobody watched the boards since ``seen`` (the last input before the stop): their
        games are paused as of then, like an offline board's, so no timer fires for the
        time the daemon was down. A move on its way when it stopped is completed by its
        lever press (live, or from the board's memory), with the clock after that press
        as its ``[%clk]``, not by a settle time that nobody saw pass.
        """
        eboards = [number for number, game in self.games.items() if game.tracker is not None]
        self.links.silence = silence
        self.links.receive_start(eboards, at)
        paused = LinkObserved(state=LinkState.OFFLINE, at=min(seen, at))
        for number in eboards:
            game = self.games[number]
            if game.online:
                game.online = None  # the journal's `online` is from before the stop
            if game.setting is not None:  # never confirmed: the stop may have cut it
                game.setting = dataclasses.replace(game.setting, cut=True)
            if math.isfinite(seen):
                assert game.tracker is not None
                game.tracker.receive_link(paused)
                self._drain_tracker(number, outcome)
            self.engine.receive_gap(number, unseen=False)  # nobody saw the clocks meanwhile
            outcome.boards.add(number)
        self._note_deadlines(eboards)

    def _command(self, command: ArbiterCommand, at: float, outcome: Outcome) -> None:
        match command:
            case AckAlert(id=alert_id):
                self.engine.acknowledge(alert_id, at)
            case SetResult(board=board, result=result):
                self._game(board)
                self.engine.set_result(board, result, at)
                outcome.boards.add(board)
            case ConfirmResult(board=board):
                self._game(board)
                self.engine.confirm_result(board, at)
                outcome.boards.add(board)
            case AcceptPosition(board=board):
                self._accept_position(board, at, outcome)
            case RebuildFromMemory(board=board):
                self._tracker(board)  # the board's session reads its memory (``recovery``
                # inputs follow); journalled for the record
            case ChooseLine(board=board, line=line):
                self._choose_line(board, line, at, outcome)
            case SetClocks():
                pass  # carried out by the service on the links; journalled for the record
            case NextRound():
                pass  # carried out by the round keeper as ``round`` records (never journalled)
            case _:
                assert_never(command)

    def _tracker(self, board: int) -> GameTracker:
        tracker = self._game(board).tracker
        if tracker is None:
            raise CommandRefused(f"board {board} has no e-board")
        return tracker

    def _accept_position(self, board: int, at: float, outcome: Outcome) -> None:
        """The game goes on from the board as it stands; the alert engine hears of the
        jump (how many plies the record lacks) before the game's events."""
        tracker = self._tracker(board)
        if not tracker.accept_position(at):
            raise CommandRefused(f"board {board}: no position to accept")
        events = tracker.events_received()
        jump = next((e for e in events if isinstance(e, PositionAccepted)), None)
        self.engine.accept_position(board, at, jump)
        self._drain_tracker(board, outcome, extra=events)

    def _game(self, board: int) -> BoardGame:
        game = self.games.get(board)
        if game is None:
            raise CommandRefused(f"no board {board}")
        return game

    # -- outputs -----------------------------------------------------------------------

    def _drain_tracker(
        self, board: int, outcome: Outcome, *, recovered: str = "", extra: Sequence[GameEvent] = ()
    ) -> None:
        """Apply the tracker's events (then ``extra``); ``recovered`` names the source of the
        moves made."""
        game = self.games[board]
        assert game.tracker is not None
        events = game.tracker.events_received()
        if recovered:
            events += moves_recovered(events, recovered)
        events += extra
        for event in events:
            note_move(game, event, source=recovered)
            apply_event(game, event)
            self.engine.receive_game_event(board, event)
            outcome.game_events.append((board, event))
            outcome.boards.add(board)

    def _drain_engine(self, outcome: Outcome) -> None:
        outcome.decisions.extend(self.engine.decisions_made())
        for alert in self.engine.alerts_raised():
            outcome.alerts.append(alert)
        for decision in outcome.decisions:
            if decision.board in self.games:
                outcome.boards.add(decision.board)

    def clock_reading(self, board: int) -> ClockReading | None:
        """The board's clocks as :meth:`board_state` shows them (None: no reading yet)."""
        return clock_reading(self.games[board], self.engine, board)

    def board_state(self, board: int, now: float) -> BoardState:
        """The board as the broadcast should show it now (:mod:`daemon.round.shown`)."""
        return board_state(
            self.games[board], self.engine, board, now, unheard=self.links.is_unheard(board)
        )
