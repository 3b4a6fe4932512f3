"""The arbiter's named states and its one table of transitions (``bridge.arbiter.state``)."""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter.engine import Arbiter
from bridge.arbiter.state import TRANSITIONS, State, StateError, Trigger, Turn
from drivers.choreography import Lift, Place
from tests.unit.test_laws import Table


def assert_state(machine: Turn | Arbiter, expected: State) -> None:
    """A call, not an inline ``is``: mypy narrows ``state`` and would call the next check dead."""
    assert machine.state is expected


def test_every_trigger_has_its_row_in_the_table() -> None:
    assert set(TRANSITIONS) == set(Trigger)
    for sources, targets in TRANSITIONS.values():
        assert sources
        assert targets


def test_a_transition_the_table_does_not_hold_is_refused() -> None:
    turn = Turn()
    with pytest.raises(StateError, match="PRESSED from AT_REST"):
        turn.pressed(differs=False)  # no press is awaited at rest
    assert_state(turn, State.AT_REST)


def test_the_states_of_a_turn_follow_the_table() -> None:
    turn = Turn()
    turn.board_changed(differs=True)
    assert_state(turn, State.HAND_AT_WORK)
    turn.recorded(chess.WHITE, differs=False, completed=False, clock_running=True)
    assert (turn.state, turn.awaiting) == (State.AWAITING_PRESS, chess.WHITE)
    turn.board_changed(differs=True)  # the opponent's hand: the press is still awaited
    assert_state(turn, State.AWAITING_PRESS)
    turn.pressed(differs=True)
    assert (turn.state, turn.awaiting) == (State.HAND_AT_WORK, None)
    turn.recorded(chess.BLACK, differs=False, completed=False, clock_running=False)
    assert_state(turn, State.REVISABLE)
    turn.mismatch(since=1.0)
    assert_state(turn, State.MISMATCH)
    turn.explained()
    assert_state(turn, State.REVISABLE)


def test_a_game_on_a_board_with_a_clock_goes_through_the_named_states() -> None:
    table = Table()
    arbiter = table.arbiter
    assert_state(arbiter, State.AT_REST)
    table.do([Lift(chess.G1)])
    assert_state(arbiter, State.HAND_AT_WORK)
    table.do([Place(chess.G1, chess.Piece(chess.KNIGHT, chess.WHITE))])
    assert_state(arbiter, State.AT_REST)  # put back: an adjustment
    table.play("e4", press=False)
    assert_state(arbiter, State.AWAITING_PRESS)  # released; the clock runs
    table.press(chess.WHITE)
    assert_state(arbiter, State.AT_REST)
    table.do([Lift(chess.D8), Place(chess.D6, chess.Piece(chess.QUEEN, chess.BLACK))])
    table.press(chess.BLACK)  # the queen cannot go through d7: an illegal move
    assert_state(arbiter, State.IRREGULAR)
    table.do([Lift(chess.D6), Place(chess.D8, chess.Piece(chess.QUEEN, chess.BLACK))])
    assert_state(arbiter, State.AT_REST)  # the position before it is back


def test_checkmate_ends_in_the_state_over() -> None:
    table = Table()
    for san in ("f3", "e5", "g4"):
        table.play(san)
    table.play("Qh4#")
    assert table.arbiter.state is State.OVER
    assert table.arbiter.result is not None


def test_a_clockless_move_stays_revisable_until_the_opponent_moves() -> None:
    table = Table(clock=False)
    table.play("e4", press=False)
    assert table.arbiter.state is State.REVISABLE
    table.play("e5", press=False)
    assert table.arbiter.state is State.REVISABLE
