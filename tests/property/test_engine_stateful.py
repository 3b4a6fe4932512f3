"""Random games played by random human hands, clean and irregular: the engine records the game.

Games start from the initial position or from one where both sides can castle, have lost the
right to, or would castle through check. Moves are made in random styles (captures either way,
slides, castling king first, promotion through the pawn), with sensor flicker and adjustments of
pieces that oblige nothing (pieces that cannot move, opponent's pieces that cannot be captured).
Among them come irregular actions, each put right afterwards: a piece knocked off its square
during a move, a piece fallen onto a square where it cannot go during a move, a knocked board,
an illegal move (castling without the right or through check among them) completed by the
press, two moves in one turn, and presses without a move. A game holds a few irregular actions,
never so many illegal moves that they end it, so that clean play goes on long enough to be
judged. Invariants: the recorded moves equal the game, every emitted move is legal where it was
emitted, clean play raises no alert at all, and each irregular action raises exactly the alert
it calls for - never a wrong illegal move.
"""

from __future__ import annotations

import chess
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from bridge.arbiter import dead, positions
from bridge.arbiter.facts import AlertRaised, Fact, MovePlayed
from bridge.arbiter.state import State
from drivers.choreography import Lift, Place, Step, Style, steps
from tests.unit.test_laws import Table

EDITIONS = ["fide-2018", "fide-1997", "fide-2018-blitz", "fide-1997-blitz", "fide-1997-rapid"]

CASTLING = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8"
STARTS = [
    chess.STARTING_FEN,
    CASTLING,  # both sides may castle either way
    CASTLING.replace(" KQkq ", " - "),  # the way is clear, the right is lost
    "r3k2r/ppp2ppp/2n5/8/2b2B2/2N5/PPP2PPP/R3K2R w KQkq - 0 1",  # f1 and d8 attacked
]
IRREGULAR_PER_GAME = 4
"""Irregular actions in one game: enough to mix them with play, few enough to leave play."""


class HumanGame(RuleBasedStateMachine):
    """A game at a table with a clock, played by people who sometimes get it wrong."""

    def __init__(self) -> None:
        super().__init__()
        self.table = Table()
        self.model = chess.Board()
        self.replay = chess.Board()
        self.checked = 0
        self.seen = 0
        self.touched: list[chess.Square] = []
        """Pieces touched in illegal moves: 4.3 applies to the move replacing them (7.5.1)."""
        self.irregular = 0

    @initialize(edition=st.sampled_from(EDITIONS), fen=st.sampled_from(STARTS))
    def start(self, edition: str, fen: str) -> None:
        self.table = Table(fen, rules_label=edition)
        self.model = chess.Board(fen)
        self.replay = chess.Board(fen)

    def _live(self) -> bool:
        return not self.model.is_game_over() and self.table.arbiter.result is None

    def _may_err(self) -> bool:
        """An irregular action may come: the game is on, and it would not end by illegal moves."""
        arbiter = self.table.arbiter
        loses_at = arbiter.edition.illegal_loses_at
        count = arbiter.illegal_counts[self.model.turn]
        return (
            self._live()
            and self.irregular < IRREGULAR_PER_GAME
            and (loses_at is None or count + 1 < loses_at)
        )

    def _legal_moves(self) -> list[chess.Move]:
        """The moves the player may make: with the piece touched in his illegal move, if any."""
        legal = list(self.model.legal_moves)
        touched, self.touched = self.touched, []
        for square in touched:  # the first piece touched that can move must move
            moves = [m for m in legal if m.from_square == square]
            if moves:
                return moves
        return legal

    @precondition(lambda self: not self._live())
    @rule()
    def after_the_game(self) -> None:
        self.table.wait(1.0)

    def _new(self) -> list[Fact]:
        """The facts since the last rule."""
        facts = self.table.facts[self.seen :]
        self.seen = len(self.table.facts)
        return facts

    def _expect(self, *kinds: str) -> None:
        """The last action raised exactly these alerts (in this order)."""
        raised = [f.kind for f in self._new() if isinstance(f, AlertRaised)]
        assert raised == list(kinds), f"expected {kinds}, got {raised} in {self.model.fen()}"

    # -- clean play ------------------------------------------------------------------------

    @precondition(lambda self: self._live())
    @rule(data=st.data(), count=st.integers(1, 4))
    def move(self, data: st.DataObject, count: int) -> None:
        for _ in range(count):  # a few moves at a time: games long enough to judge play
            if not self._live():
                return
            move = data.draw(st.sampled_from(self._legal_moves()), label="move")
            style = data.draw(st.sampled_from(list(Style)), label="style")
            color = self.model.turn
            seq = steps(self.model, move, style)
            self.model.push(move)
            self.table.do(seq, interval=data.draw(st.sampled_from([0.1, 0.2, 0.3]), label="pace"))
            if data.draw(st.booleans(), label="rest before pressing"):
                self.table.wait(1.0)
            self.table.press(color)
            self._expect()

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
        self._expect()

    @precondition(lambda self: self._live())
    @rule(data=st.data())
    def sensor_flicker(self, data: st.DataObject) -> None:
        square = data.draw(st.sampled_from(list(self.model.piece_map())), label="flicker")
        piece = self.model.piece_at(square)
        assert piece is not None
        self.table.do([Lift(square), Place(square, piece)], interval=0.05)
        self._expect()

    # -- irregular actions, each put right ------------------------------------------------------

    @precondition(lambda self: self._may_err())
    @rule(data=st.data())
    def move_with_a_piece_knocked_off(self, data: st.DataObject) -> None:
        self.irregular += 1
        board = self.model
        move = data.draw(st.sampled_from(self._legal_moves()), label="move")
        mover = board.piece_at(move.from_square)
        assert mover is not None
        involved = {sq for step in steps(board, move) for sq in [step.square]}
        others = [
            sq
            for sq, piece in board.piece_map().items()
            if sq not in involved
            and piece.piece_type not in (mover.piece_type, chess.KING)
            and not _en_passant_victim(board, move, sq)
            and not _may_promote(piece, sq)  # a pawn about to promote could explain the move
        ]
        if not others:
            return
        knocked = data.draw(st.sampled_from(others), label="knocked")
        piece = board.piece_at(knocked)
        assert piece is not None
        color = board.turn
        seq = steps(board, move)
        self.model.push(move)
        self.table.do([Lift(knocked), *seq])
        self.table.press(color)
        if positions.holds(self.model, [knocked], other=False):
            # A piece the opponent may hold after the move, his own or one he can capture: his
            # hand, reaching for his reply before the move landed (two hands on the board).
            self._expect()
        else:
            self._expect("displaced_pieces")
        self.table.do([Place(knocked, piece)], interval=0.5)
        self._expect()

    @precondition(lambda self: self._may_err())
    @rule(data=st.data())
    def move_with_a_piece_fallen(self, data: st.DataObject) -> None:
        self.irregular += 1
        board = self.model
        move = data.draw(st.sampled_from(self._legal_moves()), label="move")
        mover = board.piece_at(move.from_square)
        assert mover is not None
        after = board.copy()
        after.push(move)
        after.push(chess.Move.null())
        involved = {step.square for step in steps(board, move)}
        falls = [
            (square, target)
            for square, piece in board.piece_map().items()
            if piece.color == board.turn
            and square not in involved
            and piece.piece_type not in (mover.piece_type, chess.KING)
            and not _may_promote(piece, square)
            for target in chess.SQUARES
            if target not in involved
            and board.piece_at(target) is None
            and not board.is_pseudo_legal(chess.Move(square, target))
            and not after.is_pseudo_legal(chess.Move(square, target))
            and not (piece.piece_type == chess.PAWN and chess.square_rank(target) in (0, 7))
        ]
        if not falls:
            return
        square, target = data.draw(st.sampled_from(falls), label="fallen")
        piece = board.piece_at(square)
        assert piece is not None
        color = board.turn
        seq = steps(board, move)
        fall: list[Step] = [Lift(square), Place(target, piece)]
        self.model.push(move)
        if data.draw(st.booleans(), label="falls first"):
            self.table.do(fall, interval=0.02)
            self.table.do(seq)
        else:
            self.table.do(seq)
            self.table.do(fall, interval=0.02)
        self.table.press(color)
        self._expect("displaced_pieces")
        self.table.do([Lift(target), Place(square, piece)], interval=0.5)
        self._expect()

    @precondition(lambda self: self._may_err())
    @rule(data=st.data())
    def knocked_board(self, data: st.DataObject) -> None:
        self.irregular += 1
        pieces = self.model.piece_map()
        squares = data.draw(
            st.lists(st.sampled_from(sorted(pieces)), min_size=3, max_size=5, unique=True),
            label="knocked",
        )
        self.table.do([Lift(sq) for sq in squares], interval=0.015)
        self.table.wait(0.5)
        self.table.do([Place(sq, pieces[sq]) for sq in squares])
        self._expect("displaced_pieces")

    @precondition(lambda self: self._may_err() and not self.touched)
    @rule(data=st.data())
    def illegal_move_then_put_right(self, data: st.DataObject) -> None:
        board = self.model
        color = board.turn
        tries: list[list[Step]] = []
        for square, piece in board.piece_map().items():
            if piece.color != color or piece.piece_type == chess.KING:
                continue
            for target in chess.SQUARES:
                move = chess.Move(square, target)
                last = chess.square_rank(target) in (0, 7)
                if (
                    board.piece_at(target) is None
                    and not board.is_pseudo_legal(move)
                    and not (piece.piece_type == chess.PAWN and last)
                ):
                    tries.append([Lift(square), Place(target, piece)])
        self._illegal_then_put_right(data.draw(st.sampled_from(tries), label="illegal"))

    @precondition(
        lambda self: (
            self._may_err()
            and not self.touched  # a piece of his last illegal move must move (7.5.1: 4.3 applies)
            and _illegal_castling(self.model) is not None
        )
    )
    @rule(data=st.data())
    def illegal_castling_then_put_right(self, data: st.DataObject) -> None:
        castling = _illegal_castling(self.model)
        assert castling is not None
        if data.draw(st.booleans(), label="rook first"):
            castling = castling[2:] + castling[:2]
        self._illegal_then_put_right(castling)

    def _illegal_then_put_right(self, seq: list[Step]) -> None:
        self.irregular += 1
        color = self.model.turn
        self.touched.append(seq[0].square)
        self.table.do(seq)
        self.table.press(color)
        self._expect_illegal(color)
        self.table.do(_undo(seq))
        self.table.press(not color)  # the opponent hands the clock back
        self._expect()

    @precondition(lambda self: self._may_err())
    @rule(data=st.data())
    def two_moves_in_one_turn(self, data: st.DataObject) -> None:
        self.irregular += 1
        board = self.model
        color = board.turn
        first = data.draw(st.sampled_from(self._legal_moves()), label="first")
        after = board.copy()
        after.push(first)
        if after.is_game_over() or dead.is_blockade(after):
            return
        after.push(chess.Move.null())  # the same player moves again
        # A second move is one a hand makes: a legal move of his in the position after the first
        # (a piece put where it cannot go fell there: see move_with_a_piece_fallen).
        seconds: list[list[Step]] = [
            [Lift(move.from_square), Place(move.to_square, piece)]
            for move in after.legal_moves
            if (piece := after.piece_at(move.from_square)) is not None
            and piece.piece_type != chess.KING
            and move.from_square != first.to_square
            and after.piece_at(move.to_square) is None
            and move.to_square != first.from_square  # the board could not tell which piece moved
            and move.promotion is None
            and not after.is_en_passant(move)
        ]
        if not seconds:
            return
        second = data.draw(st.sampled_from(seconds), label="second")
        seq = steps(board, first)
        self.model.push(first)
        self.table.do(seq)
        self.table.wait(1.0)  # the first is released and recorded
        self._expect()
        self.table.do(second)
        self.table.press(color)
        self._expect_illegal(color)
        self.table.do(_undo(second))
        self._expect()

    @precondition(lambda self: self._may_err())
    @rule()
    def press_without_a_move(self) -> None:
        self.irregular += 1
        color = self.model.turn
        self.table.press(color)
        if self.table.arbiter.edition.year >= 2018:
            self._expect_illegal(color)
        else:
            self._expect("press_without_move")
        self.table.press(not color)  # the opponent hands the clock back
        self._expect()

    def _expect_illegal(self, color: chess.Color) -> None:
        new = self._new()
        raised = [f for f in new if isinstance(f, AlertRaised)]
        assert [a.kind for a in raised] == ["illegal_move"], [a.message for a in raised]
        assert raised[0].color == color
        count = self.table.arbiter.illegal_counts[color]
        assert raised[0].details["count"] == count

    # -- invariants ---------------------------------------------------------------------------

    @invariant()
    def emitted_moves_are_legal_and_the_game(self) -> None:
        for fact in self.table.facts[self.checked :]:
            if isinstance(fact, AlertRaised) and "retracted" in fact.details:
                self.replay.pop()  # the rook of an illegal castling, recorded on its own
            if isinstance(fact, MovePlayed):
                assert not fact.supersedes, f"a move was superseded: {fact}"
                legal = self.replay.is_legal(fact.move)
                assert legal, f"{fact.move} illegal in {self.replay.fen()}"
                self.replay.push(fact.move)
        self.checked = len(self.table.facts)
        assert self.table.arbiter.board.move_stack == self.model.move_stack

    @invariant()
    def the_named_state_agrees_with_the_game(self) -> None:
        arbiter = self.table.arbiter
        state = arbiter.state
        assert (state is State.OVER) == (arbiter.result is not None)
        if state is State.AT_REST:
            assert not arbiter.differing()
        if state is State.HAND_AT_WORK:
            assert arbiter.differing()


def _undo(seq: list[Step]) -> list[Step]:
    """The lifts and places that put back what ``seq`` (lifts then places) moved."""
    lifted = [s for s in seq if isinstance(s, Lift)]
    placed = [s for s in seq if isinstance(s, Place)]
    out: list[Step] = [Lift(p.square) for p in placed]
    for lift, place in zip(lifted, placed, strict=True):
        out.append(Place(lift.square, place.piece))
    return out


def _illegal_castling(board: chess.Board) -> list[Step] | None:
    """King-first castling steps for a side where the way is clear but castling is illegal."""
    color = board.turn
    rank = 0 if color == chess.WHITE else 7
    king = board.king(color)
    if king != chess.square(4, rank):
        return None
    for rook_file, king_file, rook_to_file in ((7, 6, 5), (0, 2, 3)):
        rook = chess.square(rook_file, rank)
        between = chess.between(king, rook)
        if board.piece_at(rook) != chess.Piece(chess.ROOK, color) or board.occupied & between:
            continue
        if board.is_legal(chess.Move(king, chess.square(king_file, rank))):
            continue
        return [
            Lift(king),
            Place(chess.square(king_file, rank), chess.Piece(chess.KING, color)),
            Lift(rook),
            Place(chess.square(rook_to_file, rank), chess.Piece(chess.ROOK, color)),
        ]
    return None


def _may_promote(piece: chess.Piece, square: chess.Square) -> bool:
    seventh = 6 if piece.color == chess.WHITE else 1
    return piece.piece_type == chess.PAWN and chess.square_rank(square) == seventh


def _en_passant_victim(board: chess.Board, move: chess.Move, square: chess.Square) -> bool:
    return board.is_en_passant(move) and square == move.to_square + (
        -8 if board.turn == chess.WHITE else 8
    )


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
    max_examples=40,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestHumanGame = HumanGame.TestCase
