"""Random legal games played by random human hands: the engine records exactly the game.

Moves are made in random styles (captures either way, slides, castling king first, promotion
through the pawn), with sensor flicker and adjustments of pieces that oblige nothing (pieces that
cannot move, opponent's pieces that cannot be captured). Invariants: the recorded moves equal the
game, every emitted move is legal where it was emitted, and clean play raises no alert.
"""

from __future__ import annotations

import chess
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from bridge.arbiter.facts import AlertRaised, MovePlayed
from drivers.choreography import Lift, Place, Style, steps
from tests.unit.test_laws import Table


class HumanGame(RuleBasedStateMachine):
    """A game at a table with a clock, played by people."""

    def __init__(self) -> None:
        super().__init__()
        self.table = Table()
        self.model = chess.Board()
        self.replay = chess.Board()
        self.checked = 0

    def _live(self) -> bool:
        return not self.model.is_game_over() and self.table.arbiter.result is None

    @precondition(lambda self: self._live())
    @rule(data=st.data(), style=st.sampled_from(list(Style)))
    def move(self, data: st.DataObject, style: Style) -> None:
        legal = list(self.model.legal_moves)
        move = data.draw(st.sampled_from(legal), label="move")
        color = self.model.turn
        seq = steps(self.model, move, style)
        self.model.push(move)
        self.table.do(seq, interval=data.draw(st.sampled_from([0.1, 0.2, 0.3]), label="pace"))
        if data.draw(st.booleans(), label="rest before pressing"):
            self.table.wait(1.0)
        self.table.press(color)

    @precondition(lambda self: self._live())
    @rule(data=st.data())
    def adjust_a_piece_that_obliges_nothing(self, data: st.DataObject) -> None:
        board = self.model
        inert = [
            sq
            for sq, piece in board.piece_map().items()
            if (piece.color == board.turn and not _can_move(board, sq))
            or (piece.color != board.turn and not _can_be_captured(board, sq))
        ]
        if not inert:
            return
        square = data.draw(st.sampled_from(inert), label="adjusted")
        piece = board.piece_at(square)
        assert piece is not None
        self.table.do([Lift(square), Place(square, piece)], interval=0.5)

    @precondition(lambda self: self._live())
    @rule(data=st.data())
    def sensor_flicker(self, data: st.DataObject) -> None:
        square = data.draw(st.sampled_from(list(self.model.piece_map())), label="flicker")
        piece = self.model.piece_at(square)
        assert piece is not None
        self.table.do([Lift(square), Place(square, piece)], interval=0.05)

    @invariant()
    def emitted_moves_are_legal_and_the_game(self) -> None:
        for fact in self.table.facts[self.checked :]:
            assert not isinstance(fact, AlertRaised), f"clean play raised {fact}"
            if isinstance(fact, MovePlayed):
                assert not fact.supersedes, f"clean play superseded a move: {fact}"
                legal = self.replay.is_legal(fact.move)
                assert legal, f"{fact.move} illegal in {self.replay.fen()}"
                self.replay.push(fact.move)
        self.checked = len(self.table.facts)
        assert self.table.arbiter.board.move_stack == self.model.move_stack


def _can_move(board: chess.Board, square: chess.Square) -> bool:
    return any(True for _ in board.generate_legal_moves(chess.BB_SQUARES[square]))


def _can_be_captured(board: chess.Board, square: chess.Square) -> bool:
    if any(True for _ in board.generate_legal_moves(to_mask=chess.BB_SQUARES[square])):
        return True
    ep = board.ep_square
    if ep is None:
        return False
    victim = ep + (-8 if board.turn == chess.WHITE else 8)
    return victim == square and board.has_legal_en_passant()


HumanGame.TestCase.settings = settings(
    max_examples=25,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestHumanGame = HumanGame.TestCase
