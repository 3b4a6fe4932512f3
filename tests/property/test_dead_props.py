"""``dead.is_blockade`` is sound: no position it calls dead can ever reach a checkmate.

Random pawn chains (each pawn blocked by an enemy pawn in front of it), random kings and at most
one bishop. For every position called dead, the whole set of positions reachable from it by
legal moves is explored (it is small: the pawns are claimed never to move, so only kings and the
bishop do): none of them may be checkmate, and no move in it may move or capture a pawn.
"""

from __future__ import annotations

from collections import deque

import chess
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from bridge.arbiter import dead

BUDGET = 40_000
"""Positions explored at most; kings alone give at most 64 x 64 x 2 of them."""


@st.composite
def blockades(draw: st.DrawFn) -> chess.Board:
    board = chess.Board(None)
    if draw(st.booleans(), label="a wall"):  # pawns on every other file: the usual blockade
        parity, base = draw(st.integers(0, 1)), draw(st.integers(1, 4))
        files = list(range(parity, 8, 2))
        ranks = [base + draw(st.integers(0, 1)) for _ in files]
    else:
        files = draw(st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True))
        ranks = [draw(st.integers(1, 5)) for _ in files]
    for file, rank in zip(files, ranks, strict=True):
        board.set_piece_at(chess.square(file, rank), chess.Piece(chess.PAWN, chess.WHITE))
        board.set_piece_at(chess.square(file, rank + 1), chess.Piece(chess.PAWN, chess.BLACK))
    free = [sq for sq in chess.SQUARES if board.piece_at(sq) is None]
    low = [sq for sq in free if chess.square_rank(sq) < min(ranks)]
    high = [sq for sq in free if chess.square_rank(sq) > max(ranks) + 1]
    on_sides: bool = draw(st.booleans(), label="each king on its side")
    kings: list[chess.Square]
    if low and high and on_sides:
        kings = [draw(st.sampled_from(low)), draw(st.sampled_from(high))]
    else:
        kings = draw(st.lists(st.sampled_from(free), min_size=2, max_size=2, unique=True))
    board.set_piece_at(kings[0], chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(kings[1], chess.Piece(chess.KING, chess.BLACK))
    if draw(st.booleans()):
        free = [sq for sq in free if sq not in kings]
        square = draw(st.sampled_from(free))
        board.set_piece_at(square, chess.Piece(chess.BISHOP, draw(st.booleans())))
    board.turn = draw(st.booleans())
    return board


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(board=blockades())
def test_a_position_called_dead_never_reaches_checkmate(board: chess.Board) -> None:
    assume(board.is_valid())
    if not dead.is_blockade(board):
        event("not proved dead")
        return
    event("dead")
    seen = {board.fen()}
    queue = deque([board])
    while queue:
        position = queue.popleft()
        assert not position.is_checkmate(), f"{board.fen()} reaches mate {position.fen()}"
        for move in position.legal_moves:
            moved = position.piece_type_at(move.from_square)
            assert moved != chess.PAWN, f"{board.fen()}: a pawn moves in {position.fen()}"
            assert not position.is_capture(move) or (
                position.piece_type_at(move.to_square) == chess.BISHOP
            ), f"{board.fen()}: {move} captures in {position.fen()}"
            after = position.copy(stack=False)
            after.push(move)
            after.halfmove_clock = after.fullmove_number = 1
            key = after.fen()
            if key not in seen:
                seen.add(key)
                queue.append(after)
        assume(len(seen) < BUDGET)
