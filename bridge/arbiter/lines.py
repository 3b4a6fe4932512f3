"""Lines of legal moves that lead from the game to a board read whole: moves made unheard.

A daemon restarted mid-game (or a board reconnected) reads the board whole and finds it ahead of
the game it last published: the players went on meanwhile. ``search`` looks for the lines of
legal moves from the game's position that leave exactly the board read, shortest first, up to
``MAX_PLIES``. A line is only useful when it is the one line of its length: two lines that
leave the same board (two captures with the same piece, two moves made in either order) cannot
be told apart, and the arbiter settles them.

The search is bounded: every ply of a side puts at most one of its pieces on a square where the
board read has it and the position has not (two when castling), so a position that needs more
arrivals than its side has plies left is dropped; when a side has no ply to spare, only moves
that land on such a square are tried; positions that lead nowhere are remembered by their
public bitboards. It gives up after ``BUDGET`` moves tried, so that a board nothing explains
does not stall the table (the budget's cost is in docs/benchmarks.md).

Boards that sense occupancy only (a Pegasus; a Certabo tag not learnt) say a square holds *a*
piece: such squares are ``unknown``, and a line fits when it leaves them occupied. A promotion
onto such a square is tried as a queen only. Pure: no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from typing import Final, NamedTuple

import chess

MAX_PLIES: Final = 8
"""The longest line looked for: four moves of each side."""

BUDGET: Final = 3_000
"""Moves tried before the search gives up: a board nothing explains must not stall the table
(the bar is 100 ms; ``bench/lines_bench.py`` measures it, docs/benchmarks.md)."""

_COLORED: Final = tuple((pt, c) for c in chess.COLORS for pt in chess.PIECE_TYPES)
_CASTLING_TO: Final = chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8
"""python-chess masks castling moves by the rook's square."""

Line = tuple[chess.Move, ...]


class Found(NamedTuple):
    """What ``search`` found."""

    lines: tuple[Line, ...]
    """No line, the one line, or two of the lines (two or more) of ``plies`` plies."""
    plies: int
    """The length of the lines found, or the longest length searched in full."""
    exhausted: bool
    """The budget ran out: a longer line, or a second one, may exist."""
    tried: int = 0
    """Moves tried."""

    @property
    def line(self) -> Line | None:
        """The one line that explains the board, if there is exactly one and it is certain."""
        return self.lines[0] if len(self.lines) == 1 and not self.exhausted else None


class _ExhaustedError(Exception):
    pass


class _Goal:
    """The board read: a mask per coloured piece type on the squares it identifies."""

    __slots__ = ("known", "masks", "occupied", "unknown")

    def __init__(self, squares: Sequence[chess.Piece | None], unknown: Collection[int]) -> None:
        self.unknown = 0
        for sq in unknown:
            self.unknown |= chess.BB_SQUARES[sq]
        self.known = chess.BB_ALL & ~self.unknown
        masks = dict.fromkeys(_COLORED, 0)
        occupied = self.unknown
        for sq, piece in enumerate(squares):
            if piece is not None and not self.unknown & chess.BB_SQUARES[sq]:
                masks[piece.piece_type, piece.color] |= chess.BB_SQUARES[sq]
                occupied |= chess.BB_SQUARES[sq]
        self.masks = masks
        self.occupied = occupied

    def reached(self, board: chess.Board) -> bool:
        if board.occupied != self.occupied:
            return False
        known = self.known
        return all(board.pieces_mask(pt, c) & known == mask for (pt, c), mask in self.masks.items())

    def arrivals(self, board: chess.Board, color: chess.Color) -> int:
        """Squares where the board read has a piece of ``color`` that ``board`` has not."""
        mask = 0
        for pt in chess.PIECE_TYPES:
            mask |= self.masks[pt, color] & ~board.pieces_mask(pt, color)
        return mask

    def count(self, color: chess.Color) -> int:
        """How many pieces of ``color`` the board read identifies."""
        return sum(chess.popcount(self.masks[pt, color]) for pt in chess.PIECE_TYPES)

    def material_fits(self, board: chess.Board, color: chess.Color) -> bool:
        """The pieces of ``color`` read could come from ``board``'s by captures and promotions."""
        pawns = chess.popcount(board.pieces_mask(chess.PAWN, color))
        promoted = pawns - chess.popcount(self.masks[chess.PAWN, color])
        for pt in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
            promoted -= max(
                chess.popcount(self.masks[pt, color])
                - chess.popcount(board.pieces_mask(pt, color)),
                0,
            )
        return promoted >= 0

    def departures(self, board: chess.Board, color: chess.Color) -> int:
        """Squares where ``board`` has a piece of ``color`` that the board read has not."""
        mask = 0
        for pt in chess.PIECE_TYPES:
            mask |= board.pieces_mask(pt, color) & self.known & ~self.masks[pt, color]
        return mask


def search(
    board: chess.Board,
    squares: Sequence[chess.Piece | None],
    unknown: Collection[chess.Square] = (),
    *,
    max_plies: int = MAX_PLIES,
    budget: int = BUDGET,
) -> Found:
    """The shortest lines of legal moves of ``board`` that leave ``squares`` (a1 first).

    ``unknown``: squares the board reads as occupied by a piece it cannot identify.
    """
    goal = _Goal(squares, unknown)
    if goal.reached(board):
        return Found(((),), 0, False)
    walk = _Walk(board.copy(stack=False), goal, budget)
    for plies in range(1, max_plies + 1):
        try:
            walk.walk(plies)
        except _ExhaustedError:
            return Found(tuple(walk.lines), plies, True, budget)
        if walk.lines:
            return Found(tuple(walk.lines), plies, False, budget - walk.budget)
    return Found((), max_plies, False, budget - walk.budget)


class _Walk:
    """A depth-first walk through the lines of one length (see the module docstring)."""

    def __init__(self, board: chess.Board, goal: _Goal, budget: int) -> None:
        self.board = board
        self.goal = goal
        self.budget = budget
        self.lines: list[Line] = []
        self.line: list[chess.Move] = []
        self.dead: set[tuple[int, ...]] = set()

    def walk(self, plies: int) -> None:
        board = self.board
        if plies == 0:
            if self.goal.reached(board):
                self.lines.append(tuple(self.line))
            return
        key = (
            board.pawns,
            board.knights,
            board.bishops,
            board.rooks,
            board.queens,
            board.kings,
            board.occupied_co[chess.WHITE],
            board.turn,
            board.castling_rights,
            board.ep_square or -1,
            plies,
        )
        if key in self.dead:
            return
        moves = self._moves(plies)
        found = len(self.lines)
        for move in moves:
            self.budget -= 1
            if self.budget < 0:
                raise _ExhaustedError
            board.push(move)
            self.line.append(move)
            self.walk(plies - 1)
            self.line.pop()
            board.pop()
            if len(self.lines) > 1:
                return
        if len(self.lines) == found:
            self.dead.add(key)

    def _moves(self, plies: int) -> list[chess.Move]:
        """The moves worth trying with ``plies`` plies left (none when the goal is too far)."""
        board, goal = self.board, self.goal
        mover = board.turn
        own_plies, other_plies = (plies + 1) // 2, plies // 2
        from_mask = to_mask = chess.BB_ALL
        for color, left in ((mover, own_plies), (not mover, other_plies)):
            arrivals = goal.arrivals(board, color)
            castling = 1 if board.has_castling_rights(color) else 0
            # Castling takes the king two squares and the rook one: three steps in one ply.
            needed = _journeys(board, goal, color, arrivals) - 2 * castling
            if not goal.unknown:
                # A square left by ``color`` is left by its own ply, or its piece is captured;
                # each capture is a ply of the other side.
                captured = chess.popcount(board.occupied_co[color]) - goal.count(color)
                takes = chess.popcount(board.occupied_co[not color]) - goal.count(not color)
                if captured < 0 or takes < 0 or not goal.material_fits(board, color):
                    return []  # pieces never appear (but by promotion)
                leaves = chess.popcount(goal.departures(board, color)) - captured - castling
                needed = max(needed, leaves, takes)
            if needed > left:
                return []
            if color == mover and chess.popcount(arrivals) - castling >= left:
                # As many squares to fill as plies left: each ply fills one (castling two), so
                # it lands on one, from a square the board read does not have its piece on
                # (a piece moved off a right square would have to come back).
                from_mask = goal.departures(board, color)
                to_mask = arrivals | (_CASTLING_TO if castling else 0)
        fills = chess.popcount(goal.unknown & ~board.occupied)
        if fills > plies + 2:  # castling fills two squares, once a side
            return []
        if plies == 1:
            # The last ply: it leaves a square the board read does not have its piece on, and
            # lands where the board read wants one of the mover's (or an unknown piece).
            from_mask &= goal.departures(board, mover)
            to_mask &= (
                goal.arrivals(board, mover)
                | (goal.unknown & ~board.occupied_co[mover])
                | _CASTLING_TO
            )
        moves = board.generate_legal_moves(from_mask, to_mask)
        if not goal.unknown:
            return list(moves)
        return [
            m
            for m in moves
            if m.promotion in (None, chess.QUEEN)
            or not goal.unknown & chess.BB_SQUARES[m.to_square]
        ]


def _knight_distances() -> list[list[int]]:
    table = [[0] * 64 for _ in chess.SQUARES]
    for origin in chess.SQUARES:
        seen, frontier, steps = chess.BB_SQUARES[origin], [origin], 0
        while frontier:
            steps += 1
            reached = []
            for sq in frontier:
                for to in chess.scan_forward(chess.BB_KNIGHT_ATTACKS[sq] & ~seen):
                    seen |= chess.BB_SQUARES[to]
                    table[origin][to] = steps
                    reached.append(to)
            frontier = reached
    return table


_KNIGHT: Final = _knight_distances()
_FAR: Final = 99


def _steps(
    piece_type: chess.PieceType, color: chess.Color, a: chess.Square, b: chess.Square
) -> int:
    """Plies a piece of ``piece_type`` needs at least to go from ``a`` to ``b`` (board empty)."""
    if a == b:
        return 0
    if piece_type == chess.KNIGHT:
        return _KNIGHT[a][b]
    if piece_type == chess.KING:
        return chess.square_distance(a, b)
    line = chess.BB_RAYS[a][b]
    straight = chess.square_file(a) == chess.square_file(b) or chess.square_rank(
        a
    ) == chess.square_rank(b)
    if piece_type == chess.ROOK:
        return 1 if straight else 2
    if piece_type == chess.QUEEN:
        return 1 if line else 2
    if piece_type == chess.BISHOP:
        if (chess.square_file(a) + chess.square_rank(a)) % 2 != (
            chess.square_file(b) + chess.square_rank(b)
        ) % 2:
            return _FAR
        return 1 if line and not straight else 2
    # A pawn: forward only, a file aside per capture, two squares from its first rank.
    ahead = chess.square_rank(b) - chess.square_rank(a)
    if color == chess.BLACK:
        ahead = -ahead
    if ahead <= 0 or abs(chess.square_file(b) - chess.square_file(a)) > ahead:
        return _FAR
    first = chess.square_rank(a) == (1 if color == chess.WHITE else 6)
    return (
        ahead - 1
        if first and ahead >= 2 and chess.square_file(a) == chess.square_file(b)
        else ahead
    )


@functools.cache
def _rings(piece_type: chess.PieceType, color: chess.Color) -> list[tuple[int, ...]]:
    """Per square, the squares a piece of ``piece_type`` reaches it from in 1, 2... plies."""
    rings = []
    for target in chess.SQUARES:
        by_steps = [0] * 8
        for origin in chess.SQUARES:
            steps = _steps(piece_type, color, origin, target)
            if 0 < steps < len(by_steps):
                by_steps[steps] |= chess.BB_SQUARES[origin]
        rings.append(tuple(by_steps))
    return rings


def _journeys(board: chess.Board, goal: _Goal, color: chess.Color, arrivals: int) -> int:
    """Plies ``color`` needs at least to bring a piece to each of ``arrivals``.

    Each arrival is a different piece at the end of its own journey, from the nearest square
    that holds a piece of its type (or a pawn that promotes); castling saves a ply.
    """
    total = 0
    pawns = board.pieces_mask(chess.PAWN, color)
    if pawns:
        front = chess.msb(pawns) if color == chess.WHITE else chess.lsb(pawns)
        to_go = 7 - chess.square_rank(front) if color == chess.WHITE else chess.square_rank(front)
        promotes = max(1, to_go - (1 if to_go == 6 else 0))
    else:
        promotes = _FAR
    for sq in chess.scan_forward(arrivals):
        piece_type = next(
            pt for pt in chess.PIECE_TYPES if goal.masks[pt, color] & chess.BB_SQUARES[sq]
        )
        pieces = board.pieces_mask(piece_type, color)
        best = next(
            (steps for steps, ring in enumerate(_rings(piece_type, color)[sq]) if ring & pieces),
            _FAR,
        )
        if piece_type not in (chess.PAWN, chess.KING):
            best = min(best, promotes)
        total += best
    return total
