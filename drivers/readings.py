"""Boards that report the whole board each time (Millennium, Certabo, Chessnut): readings in,
square events out.

The engine wants what a DGT board sends: one full board, then a change per square. A board that
sends its whole position on every scan (or on every change) is turned into that here: the first
reading becomes a :class:`~drivers.events.BoardSnapshot`, and each later one the squares that
changed. Within one reading the squares emptied come first, then those newly occupied or
holding another piece, each group in square order: a hand lifts before it places, and a piece
lifted and put down elsewhere between two scans reads as that lift, then that place.

Which of two pieces lifted between the same two readings went first, no reading can say. A
king is reported first: that is the lawful order of castling, so that a board too slow to see
the order never has a player accused of touching the rook before the king (Art. 4.4).
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

from drivers.events import BoardSnapshot, Occupant, SquareEmptied, SquareOccupied

Reading = tuple[Occupant | None, ...]
"""What stands on each square, ``chess.A1`` first (``None``: empty)."""

ReadingEvent = BoardSnapshot | SquareEmptied | SquareOccupied


class Readings:
    """Turns successive full readings of one board into a snapshot and square changes."""

    def __init__(self) -> None:
        self._last: Reading | None = None

    @property
    def last(self) -> Reading | None:
        """The last reading, or ``None`` before the first."""
        return self._last

    def feed(self, squares: Sequence[Occupant | None], at: float) -> list[ReadingEvent]:
        """The events that take the board from the last reading to ``squares``."""
        if len(squares) != len(chess.SQUARES):
            raise ValueError(f"a reading has 64 squares, not {len(squares)}")
        reading = tuple(squares)
        last, self._last = self._last, reading
        if last is None:
            return [BoardSnapshot(squares=reading, at=at)]
        if last == reading:
            return []
        changed = [sq for sq in chess.SQUARES if last[sq] != reading[sq]]
        lifted = sorted(
            (sq for sq in changed if reading[sq] is None),
            key=lambda sq: (not _is_king(last[sq]), sq),
        )
        events: list[ReadingEvent] = [SquareEmptied(square=sq, at=at) for sq in lifted]
        for sq in changed:
            occupant = reading[sq]
            if occupant is not None:
                events.append(SquareOccupied(square=sq, piece=occupant, at=at))
        return events


def _is_king(occupant: Occupant | None) -> bool:
    return isinstance(occupant, chess.Piece) and occupant.piece_type == chess.KING
