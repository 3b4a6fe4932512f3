"""Dead positions by a pawn blockade: a sound test that never calls a live position dead.

2018 5.2.2 / 1997 9.6: the game is drawn at once when no series of legal moves can checkmate.
python-chess's ``is_insufficient_material`` finds the dead positions of bare material (king
against king, a lone minor piece, bishops all on one colour). This module finds those of a
blockade: a closed pawn chain that no piece can ever break, with nothing left that could give
check. It proves deadness; when it cannot, it says "not dead" (the game goes on), never the
reverse.

What it proves dead. Only kings, pawns and bishops stand on the board, with at least one pawn,
and the side to move is not in check; then all of these hold:

1. Every pawn has a pawn (of either colour) directly in front of it, no pawn attacks an enemy
   pawn, and no en passant capture is possible: no pawn can move as long as nothing is captured.
2. Each king's *area* - every square it could ever walk to: a flood fill from its square over
   squares with no pawn and not attacked by an enemy pawn, ignoring the other king and all
   bishops (which only over-estimates it) - borders no enemy pawn that another enemy pawn does
   not guard: no king can ever capture a pawn.
3. Each bishop's area - a flood fill along diagonals over squares with no pawn, passing through
   kings and bishops - holds no square attacked by an enemy pawn (the pawn could capture it),
   borders no enemy pawn (it could capture it) and meets no square of the enemy king's area (it
   could give check).

Then pawns never move and are never captured, a king is never attacked by a pawn (pawn attacks
are fixed and a king may not step into them) nor by a bishop (3), and kings cannot give check:
nobody can ever be in check, so nobody can ever be checkmated.

What it cannot see (reported as not dead): positions with knights, rooks or queens, even when
they are shut out behind the chain; a king that could capture a pawn only by walking into a
loss; pawns blocked by pieces rather than pawns; a bishop that could give check only on squares
its king would never allow; and every dead position that needs a search of the moves (such as
positions where all play is forced). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

import chess

_NOT_FILE_A: Final = ~chess.BB_FILE_A & chess.BB_ALL
_NOT_FILE_H: Final = ~chess.BB_FILE_H & chess.BB_ALL
_DIAGONAL_STEPS: Final = tuple(
    chess.BB_KING_ATTACKS[sq]
    & ~chess.BB_RANKS[chess.square_rank(sq)]
    & ~chess.BB_FILES[chess.square_file(sq)]
    for sq in chess.SQUARES
)
"""The (up to four) squares diagonally next to each square."""


def is_blockade(board: chess.Board) -> bool:
    """Whether ``board`` is dead by a pawn blockade, as the module docstring defines it."""
    pawns = board.pawns
    if not pawns or board.knights | board.rooks | board.queens:
        return False  # the cheap filter: almost every position of a game stops here
    white = pawns & board.occupied_co[chess.WHITE]
    black = pawns & board.occupied_co[chess.BLACK]
    if (white << 8) & ~pawns & chess.BB_ALL or (black >> 8) & ~pawns:
        return False  # a pawn can advance
    if _pawn_attacks(white, chess.WHITE) & black or _pawn_attacks(black, chess.BLACK) & white:
        return False  # a pawn can capture
    if board.is_check() or (board.ep_square is not None and board.has_legal_en_passant()):
        return False
    areas: dict[chess.Color, int] = {}
    for color in chess.COLORS:
        king = board.king(color)
        if king is None:
            return False
        enemy = black if color == chess.WHITE else white
        attacked = _pawn_attacks(enemy, not color)
        area = _king_area(king, pawns | attacked)
        guarded = attacked  # an enemy pawn guarded by another enemy pawn cannot be taken
        if _neighbours(area) & enemy & ~guarded:
            return False
        areas[color] = area
    for square in chess.SquareSet(board.bishops):
        owner = board.color_at(square)
        assert owner is not None
        enemy = black if owner == chess.WHITE else white
        area = _bishop_area(square, pawns)
        if area & _pawn_attacks(enemy, not owner):
            return False
        if _diagonal_neighbours(area) & enemy or area & areas[not owner]:
            return False
    return True


def _pawn_attacks(pawns: int, color: chess.Color) -> int:
    if color == chess.WHITE:
        return (((pawns & _NOT_FILE_A) << 7) | ((pawns & _NOT_FILE_H) << 9)) & chess.BB_ALL
    return ((pawns & _NOT_FILE_A) >> 9) | ((pawns & _NOT_FILE_H) >> 7)


def _neighbours(squares: int) -> int:
    out = 0
    for square in chess.SquareSet(squares):
        out |= chess.BB_KING_ATTACKS[square]
    return out


def _diagonal_neighbours(squares: int) -> int:
    out = 0
    for square in chess.SquareSet(squares):
        out |= _DIAGONAL_STEPS[square]
    return out & ~squares


def _king_area(start: chess.Square, walls: int) -> int:
    area = chess.BB_SQUARES[start]
    frontier = area
    while frontier:
        grown = _neighbours(frontier) & ~walls & ~area
        area |= grown
        frontier = grown
    return area


def _bishop_area(start: chess.Square, walls: int) -> int:
    area = chess.BB_SQUARES[start]
    frontier = area
    while frontier:
        grown = 0
        for square in chess.SquareSet(frontier):
            grown |= _DIAGONAL_STEPS[square]
        grown &= ~walls & ~area
        area |= grown
        frontier = grown
    return area
