"""Commands from the keyboard: what ``dgtcast result`` and the live console's keys mean (pure).

Both send the arbiter page's commands (``set_result``, ``confirm_result``;
``rebuild_from_memory`` and ``accept_position`` for a board out of sync) to the running
daemon: ``dgtcast result`` and ``dgtcast sync`` over its arbiter channel
(daemon/commands/result.py, sync.py), the console straight to the daemon it shows
(daemon/console/link.py).

The console's keys (docs/daemon.md, "The live console"):

* ``s``: set a result. Type the board and the result, ``12 1-0`` (``1/2`` is a draw,
  ``+-``, ``-+``, ``--`` forfeits, ``*`` clears it), then Enter.
* ``c``: confirm a result. Type the board, or ``all`` (``all U12``: one section's),
  then Enter.
* ``r``: rebuild a board's record from its memory (read again now); ``a``: accept the
  position on a board (the game goes on from it). Type the board, then Enter.
* Esc cancels, Backspace deletes a character.

:func:`press` is the prompt's state machine: a key in, the next prompt and, on Enter, a
:class:`Request` (or the line's problem in words) out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from broadcast.feed.commands import AcceptPosition, ConfirmResult, RebuildFromMemory, SetResult
from broadcast.feed.messages import RESULTS, BoardState

__all__ = [
    "HINT",
    "ConfirmRequest",
    "KeyPrompt",
    "KeyRequest",
    "Request",
    "SetRequest",
    "SyncRequest",
    "confirmable",
    "contradictions",
    "keys_in",
    "parse_result",
    "press",
    "refusal",
    "section_problem",
    "summary",
]

#: Other ways to write a result, as arbiters type them (the forfeits as words: a shell
#: takes ``-+`` and ``--`` for options).
_ALIASES = {
    "1/2": "1/2-1/2",
    "½-½": "1/2-1/2",
    "=": "1/2-1/2",
    "0.5-0.5": "1/2-1/2",
    "white-by-forfeit": "+-",
    "black-by-forfeit": "-+",
    "double-forfeit": "--",
}

#: The console's line while no prompt is open.
HINT = (
    "keys: s set a result · c confirm a result (a board, or all) · r rebuild a board from"
    " its memory · a accept a board's position"
)

_ASKS = {
    "set": "set result (board and result, e.g. 12 1-0; Enter sends, Esc cancels): ",
    "confirm": "confirm (a board, all, or all SECTION; Enter sends, Esc cancels): ",
    "rebuild": "rebuild from the board's memory (a board; Enter sends, Esc cancels): ",
    "accept": "accept the board's position (a board; Enter sends, Esc cancels): ",
}
_KEYS = {"s": "set", "c": "confirm", "r": "rebuild", "a": "accept"}
_ENTER = ("\r", "\n")
_ESCAPE = "\x1b"
_BACKSPACE = ("\x7f", "\b")


def parse_result(text: str) -> str:
    """A result as the daemon takes it: ``1-0``, ``0-1``, ``1/2-1/2``, ``+-``, ``-+``,
    ``--``, ``*`` (``1/2`` or ``=`` for a draw; ``white-by-forfeit``,
    ``black-by-forfeit``, ``double-forfeit`` for the forfeits).

    Raises:
        ValueError: anything else (the line says what is accepted).
    """
    value = _ALIASES.get(text.strip().lower(), text.strip())
    if value not in RESULTS:
        accepted = ", ".join(sorted(RESULTS))
        raise ValueError(
            f"{text!r} is no result: write one of {accepted} (1/2 for a draw;"
            " white-by-forfeit, black-by-forfeit, double-forfeit for +-, -+, --)"
        )
    return value


@dataclass(frozen=True, slots=True)
class SetRequest:
    """Set ``result`` on ``board`` (provisional until confirmed)."""

    board: int
    result: str

    def commands(self) -> list[SetResult]:
        return [SetResult(board=self.board, result=self.result)]


@dataclass(frozen=True, slots=True)
class ConfirmRequest:
    """Confirm ``board``'s result; ``board`` None: every provisional one (of ``section``)."""

    board: int | None
    section: str = ""

    def commands(self, states: Sequence[BoardState]) -> list[ConfirmResult]:
        if self.board is not None:
            return [ConfirmResult(board=self.board)]
        return [ConfirmResult(board=board) for board in confirmable(states, self.section)[0]]


@dataclass(frozen=True, slots=True)
class SyncRequest:
    """A board out of sync: ``rebuild`` its record from its memory, or ``accept`` its
    position."""

    board: int
    action: str

    def commands(self) -> list[RebuildFromMemory | AcceptPosition]:
        if self.action == "rebuild":
            return [RebuildFromMemory(board=self.board)]
        return [AcceptPosition(board=self.board)]


#: What ``dgtcast result`` sends.
Request = SetRequest | ConfirmRequest
#: What the console's keys send.
KeyRequest = SetRequest | ConfirmRequest | SyncRequest


def confirmable(states: Sequence[BoardState], section: str = "") -> tuple[list[int], list[int]]:
    """The boards (of ``section``; "" every one) whose result awaits confirmation, and
    those with no result yet. Confirmed ones are in neither."""
    mine = [s for s in states if not section or s.section == section]
    waiting = sorted(s.board for s in mine if s.result != "*" and not s.result_final)
    missing = sorted(s.board for s in mine if s.result == "*")
    return waiting, missing


def section_problem(states: Sequence[BoardState], section: str, board: int | None) -> str | None:
    """Why ``section`` (and ``board`` in it) is not what the daemon plays, or None."""
    known = sorted({s.section for s in states if s.section})
    if section and section not in known:
        names = ", ".join(known) or "none: the event has one"
        return f"no section {section!r} (sections: {names})"
    if board is None:
        return None
    state = next((s for s in states if s.board == board), None)
    if state is None:
        return f"no board {board} in this round"
    if section and state.section != section:
        return f"board {board} plays in {state.section or 'no section'}, not {section}"
    return None


def contradictions(details: Mapping[str, Any]) -> list[str]:
    """What a reply's alerts say of a result set contrary to the board (a mate, a flag,
    the kings): the ``result_contradicts_board`` alerts still open (docs/alerts.md)."""
    alerts = details.get("alerts") or []
    return [
        str(alert.get("action", ""))
        for alert in alerts
        if isinstance(alert, Mapping)
        and alert.get("kind") == "result_contradicts_board"
        and alert.get("state", "open") == "open"
    ]


def summary(
    request: KeyRequest, answers: Sequence[tuple[int, str | None]], missing: Sequence[int] = ()
) -> str:
    """One line for the console: what the daemon did with ``request``.

    Args:
        answers: per command, its board and the refusal's reason (None: done).
        missing: boards left without a result (``all``).
    """
    done = [board for board, reason in answers if reason is None]
    refused = [(b, reason) for b, reason in answers if reason is not None]
    parts: list[str] = []
    if isinstance(request, SetRequest) and done:
        parts.append(f"board {request.board}: {request.result} set (provisional until confirmed)")
    elif isinstance(request, SyncRequest) and done:
        parts.append(f"board {request.board}: {_SYNC_DONE[request.action]}")
    elif done:
        parts.append(f"confirmed: board{'s' if len(done) > 1 else ''} {_listed(done)}")
    elif request.board is None and not refused:
        parts.append("nothing to confirm")
    parts += [refusal(board, reason) for board, reason in refused]
    if missing:
        parts.append(f"no result yet: board{'s' if len(missing) > 1 else ''} {_listed(missing)}")
    return "; ".join(parts)


_SYNC_DONE = {
    "rebuild": "its memory is being read again",
    "accept": "the game goes on from the board's position",
}


def refusal(board: int, reason: str) -> str:
    """The daemon's refusal of a command for ``board``, naming the board once."""
    return reason if reason.startswith(f"board {board}") else f"board {board}: {reason}"


def _listed(boards: Sequence[int]) -> str:
    return ", ".join(str(board) for board in boards)


@dataclass(frozen=True, slots=True)
class KeyPrompt:
    """The console's prompt: which question is open and what is typed so far.

    Attributes:
        action: ``"set"``, ``"confirm"``, ``"rebuild"``, ``"accept"``, or None (no
            prompt open).
        text: what was typed.
        reply: the last answer (or problem) to show.
    """

    action: str | None = None
    text: str = ""
    reply: str = ""

    @property
    def line(self) -> str:
        """What the console shows of it."""
        if self.action is None:
            return HINT
        return _ASKS[self.action] + self.text + "▏"


#: What a terminal sends for arrow, function and other special keys: ignored.
_SEQUENCE = re.compile(r"\x1b(?:\[[0-9;?]*[@-~]|O.)")


def keys_in(text: str) -> list[str]:
    """The keys a terminal sent, its escape sequences (arrows, F-keys) left out; a lone
    Esc stays a key."""
    return list(_SEQUENCE.sub("", text))


def press(prompt: KeyPrompt, key: str) -> tuple[KeyPrompt, KeyRequest | None]:
    """The prompt after ``key``, and the request when Enter sends a good line."""
    if prompt.action is None:
        action = _KEYS.get(key.lower())
        return (prompt if action is None else KeyPrompt(action=action, reply=prompt.reply)), None
    if key == _ESCAPE:
        return KeyPrompt(reply=prompt.reply), None
    if key in _BACKSPACE:
        return replace(prompt, text=prompt.text[:-1]), None
    if key in _ENTER:
        try:
            request = _request(prompt.action, prompt.text)
        except ValueError as exc:
            return replace(prompt, reply=str(exc)), None
        return KeyPrompt(reply=prompt.reply), request
    if key.isprintable() and len(prompt.text) < 40:
        return replace(prompt, text=prompt.text + key), None
    return prompt, None


def _request(action: str, text: str) -> KeyRequest:
    words = text.split()
    if action == "set":
        if len(words) != 2:
            raise ValueError("type the board and the result, e.g. 12 1-0")
        return SetRequest(board=_board(words[0]), result=parse_result(words[1]))
    if action in ("rebuild", "accept"):
        if len(words) != 1:
            raise ValueError("type a board number")
        return SyncRequest(board=_board(words[0]), action=action)
    if words and words[0].lower() == "all" and len(words) <= 2:
        return ConfirmRequest(board=None, section=words[1] if len(words) == 2 else "")
    if len(words) != 1:
        raise ValueError("type a board number, all, or all and a section")
    return ConfirmRequest(board=_board(words[0]))


def _board(word: str) -> int:
    if not (word.isascii() and word.isdigit()) or int(word) < 1:  # not ٣
        raise ValueError(f"{word!r} is no board number")
    return int(word)
