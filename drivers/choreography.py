"""How people make moves with their hands: a legal move as a sequence of lifts and places.

Used by the demo (to play a real game on the emulated board) and by the tests (to play every way
a person makes a move). Pure: no I/O; the caller performs the steps on a board or an emulator.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess

from drivers.events import SquareEmptied, SquareOccupied


@dataclass(frozen=True, slots=True)
class Lift:
    """Take the piece off ``square``."""

    square: chess.Square


@dataclass(frozen=True, slots=True)
class Place:
    """Put ``piece`` on ``square`` (on an occupied square: replacing what stood there)."""

    square: chess.Square
    piece: chess.Piece


Step = Lift | Place


class Style(enum.Enum):
    """A way to make a move; each applies where it makes sense and falls back to ``PLAIN``."""

    PLAIN = "plain"
    """Lift the piece, put it on its square; a victim is pushed off (the board sees a swap)."""
    VICTIM_FIRST = "victim_first"
    """Capture: remove the victim, then move the capturing piece."""
    VICTIM_AFTER_LIFT = "victim_after_lift"
    """Capture: lift the capturing piece, remove the victim, put the piece down."""
    SLIDE = "slide"
    """Slide the piece across every empty square on its way (the board reports each)."""
    PROMOTE_VIA_PAWN = "promote_via_pawn"
    """Promotion: put the pawn on the last rank first, then swap it for the new piece."""


def steps(board: chess.Board, move: chess.Move, style: Style = Style.PLAIN) -> list[Step]:
    """The lifts and places a person makes for a legal ``move`` in ``style``."""
    mover = board.piece_at(move.from_square)
    assert mover is not None, f"no piece on {chess.square_name(move.from_square)}"
    if board.is_castling(move):
        return _castling(board, move, mover)
    placed = chess.Piece(move.promotion, mover.color) if move.promotion else mover
    victim_square = _victim_square(board, move)
    out: list[Step] = []
    if victim_square is not None and style is Style.VICTIM_FIRST:
        out.append(Lift(victim_square))
    out.append(Lift(move.from_square))
    if victim_square == move.to_square and style is Style.VICTIM_AFTER_LIFT:
        out.append(Lift(victim_square))
    if style is Style.SLIDE and mover.piece_type in (chess.QUEEN, chess.ROOK, chess.BISHOP):
        for square in _path(move.from_square, move.to_square):
            if board.piece_at(square) is None:
                out.extend((Place(square, mover), Lift(square)))
    if move.promotion and style is Style.PROMOTE_VIA_PAWN:
        out.extend((Place(move.to_square, mover), Lift(move.to_square)))
    out.append(Place(move.to_square, placed))
    if victim_square is not None and victim_square != move.to_square:
        # En passant: the victim is not on the target square; it goes last, as people do.
        out.append(Lift(victim_square))
    return out


def _castling(board: chess.Board, move: chess.Move, king: chess.Piece) -> list[Step]:
    rank = chess.square_rank(move.from_square)
    kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
    rook_from = chess.square(7 if kingside else 0, rank)
    rook_to = chess.square(5 if kingside else 3, rank)
    king_to = chess.square(6 if kingside else 2, rank)
    rook = chess.Piece(chess.ROOK, king.color)
    return [Lift(move.from_square), Place(king_to, king), Lift(rook_from), Place(rook_to, rook)]


def _victim_square(board: chess.Board, move: chess.Move) -> chess.Square | None:
    if board.is_en_passant(move):
        return move.to_square + (-8 if board.turn == chess.WHITE else 8)
    if board.piece_at(move.to_square) is not None:
        return move.to_square
    return None


def _path(origin: chess.Square, target: chess.Square) -> list[chess.Square]:
    """Squares strictly between ``origin`` and ``target``, in the order a slide crosses them."""
    squares = list(chess.SquareSet(chess.between(origin, target)))
    return sorted(squares, key=lambda sq: chess.square_distance(origin, sq))


def occupancy_steps(board: chess.Board, seq: list[Step]) -> list[Step]:
    """``seq`` as a board that senses occupancy only sees it: a hand putting a piece on an
    occupied square takes the piece there off first, so the square reads empty for a moment."""
    out: list[Step] = []
    occupied = board.occupied
    for step in seq:
        bit = chess.BB_SQUARES[step.square]
        if isinstance(step, Place) and occupied & bit:
            out.append(Lift(step.square))
        out.append(step)
        occupied = occupied & ~bit if isinstance(step, Lift) else occupied | bit
    return out


def to_events(
    seq: list[Step], start: float, interval: float
) -> list[SquareEmptied | SquareOccupied]:
    """The sensor events a piece-identifying board reports for ``seq``, ``interval`` s apart."""
    out: list[SquareEmptied | SquareOccupied] = []
    for i, step in enumerate(seq):
        at = start + i * interval
        if isinstance(step, Lift):
            out.append(SquareEmptied(square=step.square, at=at))
        else:
            out.append(SquareOccupied(square=step.square, piece=step.piece, at=at))
    return out
