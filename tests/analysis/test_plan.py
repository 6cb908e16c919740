"""The pure core of the analysis: the latest position per board, each position once."""

from __future__ import annotations

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from broadcast.analysis.plan import Analysed, AnalysisPlan, Job
from broadcast.feed.messages import BoardState, Evaluation

START = chess.STARTING_FEN


def at(board: int, *sans: str, section: str = "", variant: str = "standard") -> BoardState:
    position = chess.Board()
    for san in sans:
        position.push_san(san)
    return BoardState(board=board, section=section, fen=position.fen(), variant=variant)


SCORE = Analysed(cp=31, depth=12, line=("Nf3", "Nf6"))


def test_a_board_that_moves_on_drops_its_older_position() -> None:
    plan = AnalysisPlan()
    assert plan.receive_state(at(1, "e4")) == []
    assert plan.receive_state(at(1, "e4", "e5")) == []
    assert plan.waiting == 1
    job = plan.next_job()
    assert job == Job(fen=at(1, "e4", "e5").fen)
    assert plan.next_job() is None


def test_boards_wait_in_the_order_they_moved() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "e4"))
    plan.receive_state(at(2, "d4"))
    plan.receive_state(at(1, "e4", "c5"))  # board 1 moved again: it waits behind board 2
    first, second = plan.next_job(), plan.next_job()
    assert first is not None
    assert second is not None
    assert (first.fen, second.fen) == (at(2, "d4").fen, at(1, "e4", "c5").fen)


def test_each_position_is_analysed_once_for_every_board() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "e4"))
    plan.receive_state(at(2, "e4"))
    job = plan.next_job()
    assert job is not None
    answered = plan.receive_result(job, SCORE)
    assert [e.board for e in answered] == [1, 2]
    assert answered[0] == Evaluation(board=1, fen=job.fen, cp=31, depth=12, line=("Nf3", "Nf6"))
    assert plan.next_job() is None  # board 2's position needed no second analysis
    # A third board reaching the same position (by another move order) is answered at once.
    (known,) = plan.receive_state(at(3, "e4"))
    assert (known.board, known.cp) == (3, 31)
    assert plan.analysed == 1


def test_the_same_position_with_other_move_counters_is_the_same_position() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "Nf3", "Nf6", "Ng1", "Ng8"))
    job = plan.next_job()
    assert job is not None
    plan.receive_result(job, SCORE)
    (known,) = plan.receive_state(BoardState(board=2, fen=START))
    assert known.fen == START
    assert known.cp == 31


def test_a_result_for_a_position_left_answers_only_the_boards_still_on_it() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "e4"))
    job = plan.next_job()
    assert job is not None
    plan.receive_state(at(1, "e4", "e5"))
    assert plan.receive_result(job, SCORE) == []
    assert plan.next_job() == Job(fen=at(1, "e4", "e5").fen)


def test_only_the_chosen_boards_and_sections_are_analysed() -> None:
    plan = AnalysisPlan(boards=[2], sections=["U12"])
    assert not plan.follows(at(1))
    assert plan.follows(at(2))
    assert plan.follows(at(7, section="U12"))
    plan.receive_state(at(1, "e4"))
    assert plan.next_job() is None


def test_chess960_positions_are_analysed_as_chess960() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "e4", variant="chess960"))
    plan.receive_state(at(2, "e4"))
    jobs = [plan.next_job(), plan.next_job()]
    assert [j.chess960 for j in jobs if j is not None] == [True, False]


def test_an_engine_down_means_no_evaluation_then_everything_again() -> None:
    plan = AnalysisPlan()
    plan.receive_state(at(1, "e4"))
    plan.receive_state(at(2, "d4"))
    first = plan.next_job()
    assert first is not None
    plan.receive_result(first, SCORE)
    second = plan.next_job()
    assert second is not None
    assert plan.receive_failure(second) == [Evaluation(board=1), Evaluation(board=2)]
    assert not any(e.has_score for e in plan.receive_failure())
    assert plan.waiting == 1  # board 2's position waits again
    back = plan.receive_engine_up()
    assert [(e.board, e.cp) for e in back] == [(1, 31)]  # known: shown again at once
    assert plan.next_job() == second


def test_the_cache_is_bounded() -> None:
    plan = AnalysisPlan(cache_size=2)
    for sans in (("e4",), ("d4",), ("c4",)):
        plan.receive_state(at(1, *sans))
        job = plan.next_job()
        assert job is not None
        plan.receive_result(job, SCORE)
    assert plan.receive_state(at(2, "e4")) == []  # the oldest was forgotten
    assert plan.receive_state(at(3, "c4")) != []


MOVES = ("e4", "e5", "Nf3", "Nc6")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("move"), st.integers(1, 4), st.integers(0, len(MOVES))),
            st.tuples(st.just("analyse"), st.just(0), st.just(0)),
            st.tuples(st.just("fail"), st.just(0), st.just(0)),
            st.tuples(st.just("up"), st.just(0), st.just(0)),
        ),
        max_size=40,
    )
)
def test_the_queue_holds_one_position_per_board_and_answers_only_current_ones(
    steps: list[tuple[str, int, int]],
) -> None:
    plan = AnalysisPlan()
    current: dict[int, str] = {}
    for kind, board, plies in steps:
        told: list[Evaluation] = []
        if kind == "move":
            state = at(board, *MOVES[:plies])
            current[board] = state.fen
            told = plan.receive_state(state)
        elif kind == "analyse" and (job := plan.next_job()) is not None:
            assert job.fen in current.values()  # never a position no board stands on
            told = plan.receive_result(job, SCORE)
        elif kind == "fail":
            told = plan.receive_failure()
        elif kind == "up":
            told = plan.receive_engine_up()
        assert plan.waiting <= len(current)
        for evaluation in told:
            assert not evaluation.has_score or evaluation.fen == current[evaluation.board]
