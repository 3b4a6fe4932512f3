"""Position keys and the legal successors of a game position, for O(1) matching.

The engine keeps the physical board as 64 squares plus a Zobrist key updated by XOR on every
square change, so "which legal move, if any, explains what is on the board now?" is one dict
look-up instead of trying every legal move (the snapshot matcher that bridges before us use).
Pure: python-chess decides legality; this module only describes what each legal move changes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Final

import chess

UNKNOWN_PIECE: Final = 12
"""Index used for a piece the board cannot identify."""

_RNG: Final = random.Random(0x43_48_45_53_53)  # fixed seed: keys are stable across runs
ZOBRIST: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(_RNG.getrandbits(64) for _ in range(64)) for _ in range(13)
)


def piece_index(piece: chess.Piece | None) -> int:
    """0..11 for a known piece (white pawn..king, then black), UNKNOWN_PIECE for ``None``."""
    if piece is None:
        return UNKNOWN_PIECE
    return piece.piece_type - 1 + (0 if piece.color else 6)


def square_key(square: chess.Square, piece: chess.Piece | None) -> int:
    """The key contribution of ``piece`` standing on ``square``."""
    return ZOBRIST[piece_index(piece)][square]


def placement_key(squares: list[chess.Piece | None] | tuple[chess.Piece | None, ...]) -> int:
    """Key of a whole placement given as 64 entries (``None`` = empty)."""
    key = 0
    for square, piece in enumerate(squares):
        if piece is not None:
            key ^= ZOBRIST[piece_index(piece)][square]
    return key


def board_key(board: chess.Board) -> int:
    """Key of the placement of a python-chess board (side to move and rights are not part)."""
    key = 0
    for square, piece in board.piece_map().items():
        key ^= ZOBRIST[piece_index(piece)][square]
    return key


Change = tuple[chess.Square, chess.Piece | None]
"""A square and what stands on it after a move (``None`` = empty)."""


@dataclass(frozen=True, slots=True)
class Successor:
    """One legal move of a position: what it changes on the board and the key after it.

    ``ambiguous`` is true when the same piece could still be on its way: another legal move of the
    same piece goes further along the line through ``move.to_square`` (a slide passing by), or the
    move is the rook half of a legal castling (rook first). Such a match only counts as a release
    after a dwell time or a clock press; an unambiguous match counts at once.
    """

    move: chess.Move
    changes: tuple[Change, ...]
    key: int
    ambiguous: bool


def move_changes(board: chess.Board, move: chess.Move) -> tuple[Change, ...]:
    """The squares a legal ``move`` changes, with what stands on them afterwards."""
    mover = board.piece_at(move.from_square)
    assert mover is not None, f"no piece on {chess.square_name(move.from_square)} in {board.fen()}"
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        # python-chess encodes standard castling as the king's two-square move (e1g1).
        rook_from = chess.square(7 if kingside else 0, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        rook = chess.Piece(chess.ROOK, mover.color)
        return (
            (move.from_square, None),
            (rook_from, None),
            (king_to, mover),
            (rook_to, rook),
        )
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    changes: list[Change] = [(move.from_square, None), (move.to_square, placed)]
    if board.is_en_passant(move):
        victim = move.to_square + (-8 if mover.color == chess.WHITE else 8)
        changes.append((victim, None))
    return tuple(changes)


def successors(board: chess.Board, key: int) -> dict[int, Successor]:
    """Every legal move of ``board`` keyed by the placement key it leads to.

    ``key`` is ``board_key(board)``, passed in because the caller keeps it incrementally.
    """
    moves = list(board.legal_moves)
    by_from: dict[chess.Square, int] = {}
    for move in moves:
        by_from[move.from_square] = (
            by_from.get(move.from_square, 0) | chess.BB_SQUARES[_reach(board, move)]
        )
    castle_rook_moves: set[tuple[chess.Square, chess.Square]] = set()
    for move in moves:
        if board.is_castling(move):
            rank = chess.square_rank(move.from_square)
            kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
            castle_rook_moves.add(
                (chess.square(7 if kingside else 0, rank), chess.square(5 if kingside else 3, rank))
            )
    result: dict[int, Successor] = {}
    for move in moves:
        changes = move_changes(board, move)
        new_key = key
        for square, piece in changes:
            old = board.piece_at(square)
            if old is not None:
                new_key ^= square_key(square, old)
            if piece is not None:
                new_key ^= square_key(square, piece)
        ambiguous = bool(_BEYOND[move.from_square][move.to_square] & by_from[move.from_square]) or (
            (move.from_square, move.to_square) in castle_rook_moves
        )
        result[new_key] = Successor(move, changes, new_key, ambiguous)
    return result


def _reach(board: chess.Board, move: chess.Move) -> chess.Square:
    """Where the moving piece itself ends up (the king's square for castling)."""
    if board.is_castling(move):
        rank = chess.square_rank(move.from_square)
        kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
        return chess.square(6 if kingside else 2, rank)
    return move.to_square


def _line_beyond(origin: chess.Square, square: chess.Square) -> int:
    """Squares on the line from ``origin`` through ``square`` that lie past ``square``."""
    if origin == square or not chess.ray(origin, square):
        return 0
    df = _sign(chess.square_file(square) - chess.square_file(origin))
    dr = _sign(chess.square_rank(square) - chess.square_rank(origin))
    mask = 0
    f, r = chess.square_file(square) + df, chess.square_rank(square) + dr
    while 0 <= f < 8 and 0 <= r < 8:
        mask |= chess.BB_SQUARES[chess.square(f, r)]
        f += df
        r += dr
    return mask


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


_BEYOND: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(_line_beyond(origin, square) for square in chess.SQUARES) for origin in chess.SQUARES
)
