"""What the engine saw of the hands while moves were made: the changes read on each square, and
whether a line of moves agrees with them.

Each lift and place read while the board is watched is kept (``Seen``, by square: ``Places``).
A line of legal moves made before the engine's eyes lifts each move's piece before it lands and
lands each player's moves in the order he made them (``landing``), and every piece put down
meanwhile is one of its moves' - landing, or sliding on its way - or put back where a piece
stood (``accounts``). ``Watch`` is what a search for such lines (``lines``) is told. Pure: no
I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final, NamedTuple

import chess
import msgspec

from bridge.arbiter import positions

Line = tuple[chess.Move, ...]

PASSING: Final = 1 / 1.6
"""A piece slid across a square shows there for about a scan at most; the dwell is a scan and a
half (``engine.DEFAULT_DWELL``): one lifted again within this part of the dwell was passing."""


class Seen(msgspec.Struct, frozen=True, gc=False):
    """A change read on a square while the board was watched (made on every lift and place:
    a struct, quick to make)."""

    at: float
    put: bool
    """A piece put down; else one lifted."""
    piece: chess.Piece | None = None
    """The piece put down; ``None`` when the board cannot name it (occupancy only)."""


Places = dict[chess.Square, list[Seen]]
"""What was seen on each square, oldest first; the squares in the order of their last change
(the latest last), so that what changed since a moment is read from the end."""


class Watch(NamedTuple):
    """What the engine saw of the hands while the moves it looks for were made.

    A line of moves made before its eyes changes no square outside ``within``; it lifts each
    move's piece before it lands and lands each player's moves in the order he made them - one
    hand, one move after another; the other player's may come between (two hands on the
    board); and every piece put down after ``since`` is one of its moves' (landing, or sliding
    on its way) or put back where a piece stood: a piece put where no move of the line goes is
    a move the line leaves out.
    """

    within: int = chess.BB_ALL
    """A mask of the squares the moves may change."""
    places: Places | None = None
    """What was seen on each square; ``None``: nobody watched (a board read whole)."""
    since: float = float("-inf")
    after: tuple[float, float] = (float("-inf"), float("-inf"))
    """When Black's and White's moves before the line landed (``chess.BLACK`` is 0)."""
    scan: float = 0.0
    """Seconds between two readings of a board that reads itself whole at a slow pace (about
    a second); 0 for a board that reports each change. There a piece put down and taken again
    within one reading is never seen: a landing is the change seen at the next reading (of any
    piece), up to a reading late."""
    dwell: float = float("inf")
    """A piece resting this long on a square a move only passes was let go there (``accounts``)."""
    rivals: bool = True
    """Look for a line a ply longer that agrees with the hands too (``lines.search``): not with
    a clock, whose presses tell whose turn each move was (a player's two moves around the
    other's would want a press between them)."""
    unheard: bool = False
    """The board was read whole at ``since`` (a restart, a reconnect) and watched from then on:
    the line may open with moves made before, that nobody saw (in any order, on any square),
    and goes on with moves seen landing."""

    @property
    def hands(self) -> bool:
        """The hands were seen at work (one of each player's may be held: two hands)."""
        return self.places is not None


UNWATCHED: Final = Watch()
"""Nobody watched: any square, any order (a board read whole after a restart)."""


def accounts(
    board: chess.Board, line: Line, places: Places, since: float, dwell: float = float("inf")
) -> bool:
    """Whether ``line`` (from ``board``) accounts for every piece seen put down after ``since``:
    on a square one of its moves changes or slides across (a piece there for less than
    ``dwell``: one resting longer was let go there), or put back where a piece stood."""
    # Most of the time nothing was put down since but the line's own pieces: said at once.
    landed = {move.to_square for move in line}
    puts: list[tuple[chess.Square, list[chess.Piece | None]]] = []
    for square, seen in reversed(places.items()):
        if not seen or seen[-1].at <= since:
            break  # the squares before it changed earlier still
        if square in landed:
            continue
        put = [change.piece for change in seen if change.put and change.at > since]
        if put:
            puts.append((square, put))
    if not puts:
        return True
    reached = changes(board, line)
    passed = 0
    for move in line:
        passed |= chess.between(move.from_square, move.to_square)
    for square, put in puts:
        if reached & chess.BB_SQUARES[square]:
            continue
        if passed & chess.BB_SQUARES[square] and _slid(places[square], since, dwell):
            continue
        stood = board.piece_at(square)
        if stood is None or any(piece not in (None, stood) for piece in put):
            return False
    return True


def changes(board: chess.Board, line: Line) -> int:
    """A mask of the squares the moves of ``line`` (from ``board``) change."""
    reached = 0
    after = board.copy(stack=False)
    for move in line:
        for square, _ in positions.move_changes(after, move):
            reached |= chess.BB_SQUARES[square]
        after.push(move)
    return reached


def passed(seen: Sequence[Seen], put: float, dwell: float) -> bool:
    """Whether the piece put down at ``put`` was lifted again within a scan (``PASSING``)."""
    lifted = next((change.at for change in seen if not change.put and change.at > put), None)
    return lifted is not None and lifted - put < dwell * PASSING


def _slid(seen: Sequence[Seen], since: float, dwell: float) -> bool:
    """Whether each piece put on a square after ``since`` was lifted again within ``dwell``:
    a piece passing on its way, not one let go there."""
    for i, change in enumerate(seen):
        if change.put and change.at > since:
            lifted = next((later.at for later in seen[i + 1 :] if not later.put), None)
            if lifted is None or lifted - change.at >= dwell:
                return False
    return True


def landing(
    places: Places,
    board: chess.Board,
    move: chess.Move,
    after: float,
    scan: float = 0.0,
    *,
    used: Collection[tuple[chess.Square, float]] = (),
) -> float | None:
    """When the piece of the legal ``move`` of ``board`` was put on its square: the first time
    at or after ``after`` (the player's move before landed) and after it was lifted - one hand
    lifts a piece after its move before has landed, and puts it down after that. ``None``: it
    was not seen to. ``scan``: on a board read about once a second, the landing is any change
    seen on the square, and the move before may have landed up to a reading before it was
    seen (``Watch.scan``). ``used``: the landings of other moves. A castling lands when its
    rook has too.
    """
    piece = board.piece_at(move.from_square)
    if piece is None:
        return None
    if move.promotion:
        piece = chess.Piece(move.promotion, piece.color)
    floor = after - scan
    landed = _put_after(places, move.from_square, move.to_square, piece, floor, scan, used)
    if landed is not None and board.is_castling(move):
        # The rook too: lifted, then put on its square (a piece put there before the rook
        # left is the king passing, or another piece).
        rank = move.from_square & ~7
        kingside = board.is_kingside_castling(move)
        rook = chess.Piece(chess.ROOK, piece.color)
        rook_from, rook_to = rank + (7 if kingside else 0), rank + (5 if kingside else 3)
        if _put_after(places, rook_from, rook_to, rook, floor, scan, ()) is None:
            return None
    return landed


def _put_after(
    places: Places,
    origin: chess.Square,
    target: chess.Square,
    piece: chess.Piece,
    floor: float,
    scan: float,
    used: Collection[tuple[chess.Square, float]],
) -> float | None:
    """When ``piece`` was first put on ``target`` after it was lifted from ``origin`` at or
    after ``floor`` (``landing``)."""
    lifts = places.get(origin)
    lands = places.get(target)
    if not lifts or not lands:
        return None  # its piece did not leave its square, or nothing was put where it goes
    for seen in lifts:
        if seen.at >= floor and (scan or not seen.put):
            lifted = seen.at
            break
    else:
        return None  # its piece did not leave its square since
    for seen in lands:
        if (
            seen.put
            and seen.at >= lifted
            and (scan or seen.piece is None or seen.piece == piece)
            and (not used or (target, seen.at) not in used)
        ):
            return seen.at
    return None
