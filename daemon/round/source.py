"""Where a section's next round comes from: the pairing program's output, or the TRF.

:func:`plan_round` reads the section's TRF (with the results confirmed so far) and the
round's pairings: the ``pairings`` file of ``[pairing]`` (``{round}`` in its name picks
the round's file; without it the same file is read again, as the pairing program
overwrites it); when that file does not exist, the round's games the TRF already holds
(opponent and colour written, no result yet: pairing programs that write the next
round into the TRF). Boards are numbered from ``first_board`` (default: the
section's lowest board number). TRF games carry no board numbers, so they are put in
the usual board order: higher score first, then the higher sum of scores, then the
better starting rank.

Every problem is a :class:`~daemon.pairing.PairingFileError` with one line per problem;
besides the checks of the pairings file (docs/pairing.md) a pairings file is refused
when two of its players met before (it is most likely the last round's file still).
"""

from __future__ import annotations

from dataclasses import dataclass

from daemon.config.model import BoardConfig, PairingConfig
from daemon.config.sections import Section
from daemon.pairing import PairingFileError, ResultHandoff, Tournament, read_pairings
from daemon.pairing.pairings import Pairing, boards_from_pairings
from daemon.round.change import Pair

__all__ = ["LastRoundPlayed", "RoundPlan", "handoff_from_pairs", "plan_round"]


class LastRoundPlayed(PairingFileError):
    """The section has played the last round of its TRF (``XXR``): nothing comes next.

    Attributes:
        section: the section's name ("" in an event of one section).
        rounds: the TRF's number of rounds.
    """

    def __init__(self, problem: str, *, section: str, rounds: int) -> None:
        super().__init__([problem])
        self.section = section
        self.rounds = rounds


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundPlan:
    """A section's next round, read from its files.

    Attributes:
        boards: each game's board number and players.
        pairs: (board, white rank, black rank or None for the bye).
        source: the file the pairings came from.
        handoff: the round's TRF hand-off (byes not yet saved: call ``save()``).
    """

    boards: tuple[BoardConfig, ...]
    pairs: tuple[Pair, ...]
    source: str
    handoff: ResultHandoff


def first_board(section: Section) -> int:
    """The number of the section's first game."""
    pairing = section.pairing
    if pairing is not None and pairing.first_board is not None:
        return pairing.first_board
    return min((board.number for board in section.boards), default=1)


def plan_round(section: Section, round_number: int) -> RoundPlan:
    """Read the section's round ``round_number`` from its TRF and pairings.

    Raises:
        PairingFileError: no pairing configured, files missing or not fitting (one line
            per problem).
    """
    pairing = section.pairing
    name = section.name or "the event"
    if pairing is None:
        raise PairingFileError(
            [f"{name} has no [pairing]: the players of round {round_number} are not known"]
        )
    tournament = Tournament.from_trf(pairing.trf)
    if tournament.rounds is not None and round_number > tournament.rounds:
        over = "the event is over" if not section.name else f"{name} has played its last round"
        raise LastRoundPlayed(
            f"{pairing.trf}: round {round_number} is past the last round"
            f" ({tournament.rounds_tag} {tournament.rounds}): {over}",
            section=section.name,
            rounds=tournament.rounds,
        )
    path = pairing.pairings_for(round_number)
    start = first_board(section)
    if path is not None and (path.is_file() or not _paired_in_trf(tournament, round_number)):
        pairings = read_pairings(path, tournament=tournament, first_board=start)
        _check_not_met(tournament, round_number, pairings)
        source = str(path)
    else:
        pairings = _pairings_in_trf(tournament, round_number, start)
        source = str(pairing.trf)
    return _plan(tournament, round_number, pairings, pairing, source)


def _plan(
    tournament: Tournament,
    round_number: int,
    pairings: list[Pairing],
    pairing: PairingConfig,
    source: str,
) -> RoundPlan:
    boards = tuple(
        BoardConfig.model_validate({"number": players.board, **players.board_fields()})
        for players in boards_from_pairings(tournament, pairings)
    )
    pairs = tuple((p.board, p.white, p.black) for p in pairings)
    handoff = ResultHandoff(
        tournament, round_number, pairings, pairing.trf, command=pairing.command
    )
    return RoundPlan(boards=boards, pairs=pairs, source=source, handoff=handoff)


def handoff_from_pairs(
    pairing: PairingConfig, round_number: int, pairs: tuple[Pair, ...]
) -> ResultHandoff:
    """The hand-off of a round recorded in the journal (after a restart).

    Raises:
        PairingFileError: the TRF cannot be read or no longer fits the pairs.
    """
    tournament = Tournament.from_trf(pairing.trf)
    source = f"the journal's round {round_number}"
    pairings = [
        Pairing(board=board, white=white, black=black, line=i, source=source)
        for i, (board, white, black) in enumerate(pairs, 1)
    ]
    return ResultHandoff(tournament, round_number, pairings, pairing.trf, command=pairing.command)


def _check_not_met(tournament: Tournament, round_number: int, pairings: list[Pairing]) -> None:
    problems = []
    for pairing in pairings:
        if pairing.black is None:
            continue
        player = tournament.player(pairing.white)
        for earlier in range(1, round_number):
            entry = player.entry(earlier)
            if entry is not None and entry.opponent == pairing.black:
                problems.append(
                    f"{pairing.where}: players {pairing.white} and {pairing.black} already met"
                    f" in round {earlier}: is this still round {earlier}'s pairings file?"
                )
    if problems:
        raise PairingFileError(problems)


def _paired_in_trf(tournament: Tournament, round_number: int) -> bool:
    return any(p.entry(round_number) is not None for p in tournament.players.values())


def _pairings_in_trf(tournament: Tournament, round_number: int, start: int) -> list[Pairing]:
    """The round's games as the TRF holds them, in board order (see the module docstring)."""
    games: list[tuple[int, int]] = []
    byes: list[int] = []
    for rank, player in sorted(tournament.players.items()):
        entry = player.entry(round_number)
        if entry is None:
            continue
        if entry.opponent == 0 and entry.code.upper() == "U":
            byes.append(rank)
        elif entry.opponent and entry.colour == "w":
            games.append((rank, entry.opponent))
    if not games:
        raise PairingFileError(
            [
                f"{tournament.source}: round {round_number} is not paired yet (no games in its"
                " columns): run the pairing program, or name its output in [pairing] pairings"
            ]
        )

    def order(game: tuple[int, int]) -> tuple[float, float, int]:
        white, black = (tournament.player(rank).points for rank in game)
        return (-float(max(white, black)), -float(white + black), min(game))

    source = str(tournament.source)
    ordered = sorted(games, key=order)
    pairings = [
        Pairing(board=board, white=white, black=black, line=0, source=source)
        for board, (white, black) in enumerate(ordered, start)
    ]
    after = start + len(pairings)
    pairings += [
        Pairing(board=after + i, white=rank, black=None, line=0, source=source)
        for i, rank in enumerate(byes)
    ]
    return pairings
