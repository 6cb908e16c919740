"""The live console for the person at the laptop: every board and the open alerts.

When ``dgtcast run`` is attached to a terminal (and not under systemd), the terminal
shows, refreshed in place (``rich``'s live display):

* a title line: the event, each section's round, the viewer's address;
* a progress line while something long is read (the journal at start, a board's memory);
* one row per board: number, players, link (the e-board's serial number and whether it
  answers), both clocks (the running one marked ``▸``), the last move, the result
  (``provisional`` until an arbiter confirms it) and the board's state (``to confirm``,
  ``finished`` once a game has a result); on a terminal too narrow for all of it (80
  columns) the link goes and the result is only yellow until confirmed;
* the keys' line: ``s`` sets a result, ``c`` confirms one (or all), the prompt while
  one is typed and the daemon's answer (daemon/console/keys.py);
* the open alerts with what to do, newest last (those an arbiter acknowledged marked so),
  and the last few resolved, each saying by whom and why (docs/alerts.md, "Life cycle").

Log lines (warnings and worse by default) print above it. Not on a terminal, or under
systemd, nothing of this is shown: the log lines are the output (daemon/shell/logs.py).

:func:`render` is pure (states, alerts and ``now`` in, a renderable out);
:class:`LiveConsole` is the shell: it rebuilds the view twice a second on the event loop
and hands it to rich's refresh thread, which also keeps the progress spinner turning
while the event loop is busy (reading a long journal).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from broadcast.feed.alerts import Alert
from broadcast.feed.messages import LOW_BATTERY, BoardState, BoardStatus
from broadcast.feed.pgn import format_clock
from daemon.console.keys import KeyPrompt
from daemon.shell.logs import wanted

__all__ = ["ConsoleFrame", "LiveConsole", "memory_progress", "render", "wanted"]

_STATES = {
    BoardStatus.ONLINE: ("live", "green"),
    BoardStatus.WAITING: ("waiting", "cyan"),
    BoardStatus.CONNECTING: ("connecting", "yellow"),
    BoardStatus.CATCHING_UP: ("catching up", "bold yellow"),
    BoardStatus.OFFLINE: ("OFFLINE", "bold red"),
    BoardStatus.OUT_OF_SYNC: ("out of sync", "bold yellow"),
    BoardStatus.MANUAL: ("no e-board", "dim"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsoleFrame:
    """What one refresh of the console shows.

    Attributes:
        title: the event and its rounds, and where the viewer is.
        boards: every board's latest state, in board order.
        alerts: the open alerts, oldest first.
        progress: what is being read right now, if anything.
        resolved: the last alerts resolved, in the order they were.
        keys: the keyboard's prompt and last answer (daemon/console/keys.py); None
            where keys are not read.
    """

    title: str
    boards: Sequence[BoardState]
    alerts: Sequence[Alert]
    progress: str | None = None
    resolved: Sequence[Alert] = ()
    keys: KeyPrompt | None = None


def memory_progress(states: Sequence[BoardState]) -> str | None:
    """The progress line while e-boards' memories are read, or None (docs/protocol.md §6).

    A board catching up sends the moves it logged while dgtcast could not see it: about
    8 s for its whole memory at 9600 baud.
    """
    boards = [str(state.board) for state in states if state.status is BoardStatus.CATCHING_UP]
    if not boards:
        return None
    which = f"board {boards[0]}" if len(boards) == 1 else f"boards {', '.join(boards)}"
    return f"reading the memory of {which}: the moves played while unseen (about 8 s each)"


def render(frame: ConsoleFrame, now: float) -> RenderableType:
    """The console for ``frame`` at wall-clock time ``now`` (pure)."""
    parts: list[RenderableType] = [Text(frame.title, style="bold")]
    if frame.progress is not None:
        parts.append(Spinner("dots", text=Text(frame.progress, style="yellow")))
    parts.append(_Boards(frame.boards, now))
    if frame.keys is not None:
        parts.extend(_keys(frame.keys))
    parts.append(_alerts(frame.alerts))
    if frame.resolved:
        parts.append(_resolved(frame.resolved))
    return Group(*parts)


def _keys(prompt: KeyPrompt) -> list[RenderableType]:
    line = Text(prompt.line, style="dim" if prompt.action is None else "bold cyan")
    return [line] if not prompt.reply else [line, Text(prompt.reply, style="cyan")]


#: The boards' columns and their least widths on a wide terminal and on a narrow one
#: (0: left out). Narrower than the first need (110 columns or so), Link goes and a
#: provisional result is only yellow (State says ``to confirm``): an 80-column terminal
#: still shows every board's number, players, clocks, last move, result and state.
_COLUMNS = (
    ("Board", 5, 5),
    ("Players", 20, 12),
    ("Link", 10, 0),
    ("Clocks", 17, 17),
    ("Last move", 10, 10),
    ("Result", 19, 7),
    ("State", 10, 10),
)
_SEPARATOR = 3  # " │ " between two columns


@dataclass(frozen=True, slots=True)
class _Boards:
    """The boards' table, laid out for the width it is drawn at."""

    states: Sequence[BoardState]
    now: float

    def __rich_console__(
        self, console: Console, options: ConsoleOptions
    ) -> Iterator[RenderableType]:
        yield _boards(self.states, self.now, options.max_width)


def _boards(states: Sequence[BoardState], now: float, width: int) -> Table:
    label = max((len(_number(state)) for state in states), default=0)
    needs = sum(max(label, wide) for _, wide, _ in _COLUMNS)
    wide = needs + _SEPARATOR * (len(_COLUMNS) - 1) <= width
    least = {
        name: max(label, n) if name == "Board" else n
        for name, broad, narrow in _COLUMNS
        if (n := broad if wide else narrow)
    }
    names = list(least)
    table = Table(expand=True, show_edge=False, pad_edge=False, header_style="bold")
    for name in names:
        ratio = 1 if name == "Players" else None  # the players get what is left
        table.add_column(
            name, ratio=ratio, min_width=least[name], no_wrap=True, overflow="ellipsis"
        )
    for state in states:
        shown, style = _state(state)
        cells: dict[str, RenderableType] = {
            "Board": _number(state),
            "Players": f"{state.white or '?'} – {state.black or '?'}",
            "Link": _link(state),
            "Clocks": _clocks(state, now),
            "Last move": _last_move(state),
            "Result": _result(state, wide),
            "State": Text(shown, style=style),
        }
        table.add_row(*(cells[name] for name in names))
    return table


def _state(state: BoardState) -> tuple[str, str]:
    """The State column: a finished game says so, whatever its e-board does since."""
    if state.result != "*":
        return ("finished", "green") if state.result_final else ("to confirm", "bold yellow")
    if state.status is BoardStatus.WAITING and state.serial is None:
        return "no link", "bold red"
    return _STATES.get(state.status, (state.status.value, ""))


def _number(state: BoardState) -> str:
    return f"{state.section} {state.board}" if state.section else str(state.board)


def _link(state: BoardState) -> Text:
    if state.status is BoardStatus.MANUAL:
        return Text("-", style="dim")
    serial = f"#{state.serial}" if state.serial else "not heard"
    if state.status is BoardStatus.OFFLINE:
        return Text(f"{serial} lost", style="red")
    link = Text(serial)
    if state.battery is not None:  # a wireless e-board (docs/integrations.md)
        low = state.battery < LOW_BATTERY and not state.battery_charging
        link.append(f" {state.battery}%", style="bold yellow" if low else "")
    return link


def _clocks(state: BoardState, now: float) -> str:
    if state.white_clock is None or state.black_clock is None:
        return ""
    white, black = state.white_clock, state.black_clock
    if state.running is not None and state.clock_at is not None:
        passed = max(0.0, now - state.clock_at)
        if state.running == "white":
            white -= passed
        else:
            black -= passed
    marks = ("▸" if state.running == "white" else " ", "▸" if state.running == "black" else " ")
    return f"{marks[0]}{format_clock(white)} {marks[1]}{format_clock(black)}"


def _last_move(state: BoardState) -> str:
    if not state.moves:
        return ""
    ply = len(state.moves)
    number = (ply + 1) // 2
    dots = "." if ply % 2 else "..."
    return f"{number}{dots} {state.moves[-1].san}"


def _result(state: BoardState, wide: bool) -> Text:
    """The result; a provisional one in yellow, saying so where there is room (the State
    column says ``to confirm`` anyway)."""
    if state.result == "*":
        return Text("")
    if state.result_final:
        return Text(state.result, style="bold")
    return Text(f"{state.result} provisional" if wide else state.result, style="yellow")


def _alerts(alerts: Sequence[Alert]) -> RenderableType:
    if not alerts:
        return Text("no open alerts", style="dim")
    table = _alert_table()
    for alert in alerts:
        style = "yellow" if alert.acknowledged else "bold red"
        seen = " (acknowledged)" if alert.acknowledged else ""
        head = Text(f"{_clock(alert.at)} #{alert.id} {_kind(alert)}{seen}", style=style)
        table.add_row(head, alert.action or f"board {alert.board}")
    acked = sum(alert.acknowledged for alert in alerts)
    count = f"open alerts: {len(alerts)}" + (f" ({acked} acknowledged)" if acked else "")
    return Group(Text(count, style="bold"), table)


def _resolved(alerts: Sequence[Alert]) -> RenderableType:
    table = _alert_table()
    for alert in reversed(alerts):
        step = next((s for s in reversed(alert.history) if s.step == "resolved"), None)
        when = _clock(alert.at if step is None else step.at)
        why = "resolved" if step is None else f"resolved by {step.by}: {step.note}"
        table.add_row(
            Text(f"{when} #{alert.id} {_kind(alert)}", style="dim"), Text(why, style="dim")
        )
    return Group(Text("resolved lately:", style="dim"), table)


def _alert_table() -> Table:
    table = Table(show_header=False, show_edge=False, pad_edge=False, expand=True, box=None)
    table.add_column(no_wrap=True)
    table.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    return table


def _clock(at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(at))


def _kind(alert: Alert) -> str:
    where = f"board {alert.board}" if alert.board else "event"
    return f"{alert.kind.replace('_', ' ')} ({where})"


class LiveConsole:
    """Shows the console in place on a terminal while the daemon runs.

    Args:
        console: where to draw (default: standard output).
        refresh: seconds between two views.
        wall_clock: time source (epoch seconds).
    """

    def __init__(
        self,
        console: Console | None = None,
        *,
        refresh: float = 0.5,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.console = console or Console()
        self.refresh = refresh
        self._wall_clock = wall_clock
        self._frame = ConsoleFrame(title="dgtcast: starting", boards=(), alerts=())
        self._view: RenderableType = Text("")
        self._live = Live(
            console=self.console,
            get_renderable=lambda: self._view,
            refresh_per_second=1 / refresh,
            redirect_stdout=True,
            redirect_stderr=True,
        )

    @contextmanager
    def shown(self) -> Iterator[LiveConsole]:
        """Show the console from its first view to the end of the block.

        Nothing is drawn before :meth:`show` or :meth:`progress` (a configuration error
        stays the only output).
        """
        try:
            yield self
        finally:
            if self._live.is_started:
                self._live.stop()

    def progress(self, text: str | None) -> None:
        """Show (or, with None, remove) the progress line now."""
        self.show(
            ConsoleFrame(
                title=self._frame.title,
                boards=self._frame.boards,
                alerts=self._frame.alerts,
                progress=text,
                resolved=self._frame.resolved,
            )
        )

    def show(self, frame: ConsoleFrame) -> None:
        """Show ``frame`` from now on."""
        self._frame = frame
        self._view = render(frame, self._wall_clock())
        if not self._live.is_started:
            self._live.start()

    async def follow(self, frames: Callable[[], ConsoleFrame]) -> None:
        """Show ``frames()`` every ``refresh`` seconds until cancelled."""
        while True:
            self.show(frames())
            await asyncio.sleep(self.refresh)
