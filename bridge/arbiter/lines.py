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
onto such a square is tried as a queen only.

While the board is watched, it says which squares changed: a line of moves made before the
engine's eyes changes no other square, so ``within`` confines the search to them (a pawn pushed
three squares is then no knight's journey out and back by the opponent, which nobody touched).

A board read while a hand is at work shows a piece or two off their squares: ``explain`` puts
them back, one at a time and two of opposite colours, when the board as read is explained by
nothing, and takes a line found so when the pieces held are what hands at work hold - the piece
the player having the move is about to move, the victim he takes, and the other player's own
piece (his reply begun before the move has landed: two hands on the board). ``follow`` carries
the search forward from several candidate lines, so that the players going on never put the
board out of reach. Pure: no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Sequence
from typing import Final, NamedTuple

import chess

from bridge.arbiter import positions, watching
from bridge.arbiter.watching import UNWATCHED, Watch, accounts, landing

MAX_PLIES: Final = 8
"""The longest line looked for: four moves of each side."""

LISTED: Final = 8
"""The lines of one length a search lists at most when the board cannot tell them apart: the
arbiter chooses among them (``board_mismatch``), and the players going on are followed from
each of them."""

WATCHED_PLIES: Final = 16
"""The longest line looked for on a watched board: what the hands did keeps the search small,
and players who never let the board rest go on without the game falling out of reach."""

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
    """No line, the one line, or up to ``LISTED`` of the lines (two or more) of ``plies`` plies."""
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


class Explained(NamedTuple):
    """What ``explain`` (or ``follow``) found: the line, what the search saw, the hands."""

    line: Line | None
    """The one line that leaves the board read (with ``held`` back), if it is certain."""
    found: Found
    """The search that decided: its lines (two or more: the board cannot tell them apart)."""
    held: tuple[chess.Square, ...] = ()
    """Squares whose pieces are in a hand at work after ``line`` (empty on the board)."""
    base: int = 0
    """The plies of ``line`` that are the candidate line it goes on from (``follow``)."""


def _pieces(board: chess.Board, color: chess.Color) -> tuple[int, int, int, int, int, int]:
    """``board``'s pieces of ``color`` by type, pawn to king (python-chess's public bitboards)."""
    own = board.occupied_co[color]
    return (
        board.pawns & own,
        board.knights & own,
        board.bishops & own,
        board.rooks & own,
        board.queens & own,
        board.kings & own,
    )


class _ExhaustedError(Exception):
    pass


class _Goal:
    """The board read: a mask per coloured piece type on the squares it identifies."""

    __slots__ = ("counts", "known", "masks", "occupied", "type_counts", "unknown")

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
        self.type_counts = {key: chess.popcount(mask) for key, mask in masks.items()}
        self.counts = {
            color: sum(self.type_counts[pt, color] for pt in chess.PIECE_TYPES)
            for color in chess.COLORS
        }

    def reached(self, board: chess.Board) -> bool:
        if board.occupied != self.occupied:
            return False
        known = self.known
        return all(board.pieces_mask(pt, c) & known == mask for (pt, c), mask in self.masks.items())

    def arrivals(self, board: chess.Board, color: chess.Color) -> int:
        """Squares where the board read has a piece of ``color`` that ``board`` has not."""
        mask = 0
        masks = self.masks
        for pt, pieces in zip(chess.PIECE_TYPES, _pieces(board, color), strict=True):
            mask |= masks[pt, color] & ~pieces
        return mask

    def count(self, color: chess.Color) -> int:
        """How many pieces of ``color`` the board read identifies."""
        return self.counts[color]

    def material_fits(self, board: chess.Board, color: chess.Color) -> bool:
        """The pieces of ``color`` read could come from ``board``'s by captures and promotions."""
        pawns, knights, bishops, rooks, queens, _ = _pieces(board, color)
        read = self.type_counts
        promoted = chess.popcount(pawns) - read[chess.PAWN, color]
        for pt, pieces in (
            (chess.KNIGHT, knights),
            (chess.BISHOP, bishops),
            (chess.ROOK, rooks),
            (chess.QUEEN, queens),
        ):
            promoted -= max(read[pt, color] - chess.popcount(pieces), 0)
        return promoted >= 0

    def departures(self, board: chess.Board, color: chess.Color) -> int:
        """Squares where ``board`` has a piece of ``color`` that the board read has not."""
        mask = 0
        masks, known = self.masks, self.known
        for pt, pieces in zip(chess.PIECE_TYPES, _pieces(board, color), strict=True):
            mask |= pieces & known & ~masks[pt, color]
        return mask


def search(
    board: chess.Board,
    squares: Sequence[chess.Piece | None],
    unknown: Collection[chess.Square] = (),
    *,
    max_plies: int = MAX_PLIES,
    budget: int = BUDGET,
    watch: Watch = UNWATCHED,
) -> Found:
    """The shortest lines of legal moves of ``board`` that leave ``squares`` (a1 first).

    ``unknown``: squares the board reads as occupied by a piece it cannot identify. ``watch``:
    what was seen of the hands meanwhile (``Watch``), which the lines must agree with.
    """
    goal = _Goal(squares, unknown)
    if goal.reached(board):
        return Found(((),), 0, False)
    if watch.hands:
        max_plies = max(max_plies, WATCHED_PLIES)
    walk = _Walk(board.copy(stack=False), goal, budget, watch)
    for plies in range(1, max_plies + 1):
        try:
            walk.walk(plies)
        except _ExhaustedError:
            # Two lines or more: the board cannot tell them apart, whatever else a whole
            # search would have listed.
            return Found(tuple(walk.lines), plies, len(walk.lines) < 2, budget)
        if walk.lines:
            found = tuple(walk.lines)
            if watch.hands and watch.rivals and len(found) == 1 and plies < max_plies:
                # A piece put down and lifted again soon after may have slid on, or moved
                # again: a line one ply longer leaves the same board, the other player to move.
                # (Read whole after a restart, nothing tells them apart: there a piece's journey
                # in two moves, where the line takes it in one, is not looked for.)
                walk.lines = []
                walk.rival = True
                try:
                    walk.walk(plies + 1)
                except _ExhaustedError:
                    return Found(found, plies, True, budget)
                found += tuple(walk.lines[:1])
            return Found(found, plies, False, budget - walk.budget)
    return Found((), max_plies, False, budget - walk.budget)


def explain(
    board: chess.Board,
    squares: Sequence[chess.Piece | None],
    unknown: Collection[chess.Square] = (),
    *,
    watch: Watch = UNWATCHED,
    budget: int = BUDGET,
    barred: Collection[chess.Square] = (),
) -> Explained:
    """The one line of ``board`` that leaves ``squares``, or leaves them with pieces in a hand.

    A square that reads empty where ``board`` has a piece may be the piece a player holds: when
    no line leaves the board as read (within half the budget), it is searched with each such
    piece back, then with two of opposite colours back. A line found so is taken when it is the
    only one, the pieces held are what hands at work hold after it (``in_hand``), and a search
    that gave up did so at least two plies beyond it. Not on a board that senses occupancy only
    (``unknown``): it cannot tell a piece in the hand from a capture made unheard. ``barred``:
    squares whose pieces cannot be in a hand (held already through a move of their own side).
    Where the hands were seen at work (``watch``), one of each player's may be held (two hands
    on the board); a board read whole after a restart is not taken for two hands.
    """
    found = search(board, squares, unknown, budget=budget // 2, watch=watch)
    if not found.lines and watch.scan and watch.hands:
        # A board read once a second can hide whole moves (a capture and the recapture on one
        # square within a reading leave it as it was): the board as read, by lines that what
        # the readings saw does not confirm, before any piece is supposed in a hand.
        budget -= found.tried
        found = search(board, squares, unknown, budget=budget // 2)
    if unknown:
        return Explained(found.line, found)
    budget -= found.tried
    if found.lines:
        if watch.hands or found.plies < 2:
            return Explained(found.line, found)
        # Read whole (a restart): a piece in a hand tells a shorter story than the journeys
        # of several plies that take it off the board. Both are kept, neither is taken: the
        # piece put down tells them apart.
        shorter, _ = _suppose(board, squares, watch, budget, barred, found.plies - 1)
        if not shorter:
            return Explained(found.line, found)
        lines = found.lines + tuple(f.lines[0] for f, _ in shorter)
        both = Found(lines, found.plies, found.exhausted, found.tried)
        return Explained(None, both, shorter[0][1])
    gave_up = [found] if found.exhausted else []
    explained, more = _suppose(board, squares, watch, budget, barred, MAX_PLIES)
    gave_up += more
    if explained:
        first, held = explained[0]
        line = first.line if len(explained) == 1 else None
        # Taken when no line without a piece in the hand can be as short, with a margin of
        # a move of each side: a search that gave up after depth d found none shorter.
        if line is not None and all(len(line) <= g.plies - 2 for g in gave_up):
            return Explained(line, first, held)
        return Explained(None, first, held)
    return Explained(None, gave_up[0] if gave_up else found)


def _suppose(
    board: chess.Board,
    squares: Sequence[chess.Piece | None],
    watch: Watch,
    budget: int,
    barred: Collection[chess.Square],
    max_plies: int,
) -> tuple[list[tuple[Found, tuple[chess.Square, ...]]], list[Found]]:
    """The lines (up to ``max_plies``) that leave ``squares`` with each piece that reads empty
    put back, then two of opposite colours: the first kind that explains the board, each with
    the pieces held; and the searches that gave up."""
    colors = {
        sq: piece.color
        for sq in chess.SQUARES
        if squares[sq] is None and (piece := board.piece_at(sq)) is not None and sq not in barred
    }
    empty = list(colors)
    pairs = [(a, b) for i, a in enumerate(empty) for b in empty[i + 1 :] if colors[a] != colors[b]]
    gave_up: list[Found] = []
    singles: list[tuple[chess.Square, ...]] = [(sq,) for sq in empty]
    left = len(singles) + len(pairs)
    for supposed in (singles, pairs):
        explained: list[tuple[Found, tuple[chess.Square, ...]]] = []
        for held in supposed:
            goal = list(squares)
            for sq in held:
                goal[sq] = board.piece_at(sq)
            # Each supposition its share: one that cannot be (a piece gone with nothing to
            # take it) must not use up the others'.
            share = budget // left
            left -= 1
            in_hand = search(board, goal, budget=share, watch=watch, max_plies=max_plies)
            budget -= in_hand.tried
            if in_hand.lines and in_hand_after(board, in_hand.lines[0], held, other=watch.hands):
                explained.append((in_hand, held))
            elif in_hand.exhausted:
                gave_up.append(in_hand)
        if explained:
            return explained, gave_up
    return [], gave_up


def follow(
    board: chess.Board,
    bases: Sequence[Line],
    squares: Sequence[chess.Piece | None],
    unknown: Collection[chess.Square] = (),
    *,
    watch: Watch = UNWATCHED,
    budget: int = BUDGET,
    barred: Collection[chess.Square] = (),
) -> Explained:
    """``explain`` carried forward: the lines that go on from one of ``bases`` (candidate lines
    from ``board`` that explained the board earlier) and leave ``squares``, shortest first.

    The line is certain when exactly one base goes on to the board read, by one certain line,
    and no other base goes on as briefly (or gave up). ``found`` holds the whole lines.
    """
    best: list[tuple[Line, Explained]] = []
    gave_up: Found | None = None
    for base in bases:
        end = _after(board, base)
        shown = explain(
            end,
            squares,
            unknown,
            watch=watch,
            budget=budget // len(bases),
            barred=barred,
        )
        if not shown.found.lines:
            if shown.found.exhausted and gave_up is None:
                gave_up = shown.found
            continue
        if best and len(shown.found.lines[0]) > len(best[0][1].found.lines[0]):
            continue
        if best and len(shown.found.lines[0]) < len(best[0][1].found.lines[0]):
            best = []
        best.append((base, shown))
    if not best:
        found = gave_up or Found((), MAX_PLIES, False)
        return Explained(None, Found((), found.plies, found.exhausted, found.tried))
    whole = tuple(base + line for base, shown in best for line in shown.found.lines)
    base, shown = best[0]
    plies = len(whole[0])
    exhausted = gave_up is not None or any(shown.found.exhausted for _, shown in best)
    found = Found(whole, plies, exhausted, sum(s.found.tried for _, s in best))
    if len(best) == 1 and shown.line is not None and not exhausted:
        return Explained(base + shown.line, found, shown.held, len(base))
    return Explained(None, found, shown.held)


def in_hand_after(
    board: chess.Board, line: Line, squares: Iterable[chess.Square], *, other: bool
) -> bool:
    """Whether pieces lifted from ``squares`` after ``line`` are what hands at work hold
    (``positions.holds``: the player having the move's; with ``other``, one of each's)."""
    return positions.holds(_after(board, line), list(squares), other=other)


def _after(board: chess.Board, line: Line) -> chess.Board:
    after = board.copy(stack=False)
    for move in line:
        after.push(move)
    return after


class _Walk:
    """A depth-first walk through the lines of one length (see the module docstring)."""

    def __init__(
        self,
        board: chess.Board,
        goal: _Goal,
        budget: int,
        watch: Watch,
    ) -> None:
        self.root = board.copy(stack=False)
        self.since = watch.since
        self.board = board
        self.goal = goal
        self.budget = budget
        self.within = watch.within
        self.places = watch.places
        self.scan = watch.scan
        self.dwell = watch.dwell
        self.landed = {chess.BLACK: watch.after[chess.BLACK], chess.WHITE: watch.after[chess.WHITE]}
        """When each player's last move (of the line so far) landed (with ``places``)."""
        self.used: set[tuple[chess.Square, float]] = set()
        """The pieces put down that moves of the line so far landed as: each lands one."""
        self.lines: list[Line] = []
        self.line: list[chess.Move] = []
        self.dead: set[tuple[object, ...]] = set()
        self.unheard = watch.unheard
        self.heard = 0
        """Moves of the line so far seen landing: moves made unheard come before them."""
        self.rival = False
        """Looking for a line one ply longer than the one found: a piece lifted again within a
        scan of landing was passing on its way, not moved twice (``PASSING``)."""

    def walk(self, plies: int) -> None:
        board = self.board
        if plies == 0:
            if self.goal.reached(board) and self._accounts():
                self.lines.append(tuple(self.line))
            return
        key: tuple[object, ...] = (
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
            self.landed[chess.WHITE],
            self.landed[chess.BLACK],
            self.heard > 0,
            *sorted(self.used),
        )
        if key in self.dead:
            return
        moves = self._moves(plies)
        found = len(self.lines)
        color = board.turn
        before = self.landed[color]
        for move in moves:
            self.budget -= 1
            if self.budget < 0:
                raise _ExhaustedError
            claimed = None
            if self.places is not None:
                used = () if self.scan else self.used
                landed = landing(self.places, self.board, move, before, self.scan, used=used)
                if landed is None:
                    if not self.unheard or self.heard or self.rival:
                        continue  # no piece was put there after the player's move before
                    landed = self.since  # made before the board was read whole
                elif self.rival and watching.passed(
                    self.places[move.to_square], landed, self.dwell
                ):
                    continue
                else:
                    claimed = (move.to_square, landed)
                    self.used.add(claimed)
                    self.heard += 1
                self.landed[color] = landed
            board.push(move)
            self.line.append(move)
            self.walk(plies - 1)
            self.line.pop()
            board.pop()
            self.landed[color] = before
            if claimed is not None:
                self.used.discard(claimed)
                self.heard -= 1
            if len(self.lines) >= LISTED:
                return
        if len(self.lines) == found:
            self.dead.add(key)

    def _accounts(self) -> bool:
        """Whether the line accounts for every piece put down since ``since`` (``accounts``)."""
        if self.places is None:
            return True
        return accounts(self.root, tuple(self.line), self.places, self.since, self.dwell)

    def _moves(self, plies: int) -> list[chess.Move]:
        """The moves worth trying with ``plies`` plies left (none when the goal is too far)."""
        board, goal = self.board, self.goal
        mover = board.turn
        own_plies, other_plies = (plies + 1) // 2, plies // 2
        from_mask = to_mask = chess.BB_ALL
        for color, left in ((mover, own_plies), (not mover, other_plies)):
            arrivals = goal.arrivals(board, color)
            castling = 1 if board.has_castling_rights(color) else 0
            needed = 0
            if not goal.unknown:
                # A square left by ``color`` is left by its own ply, or its piece is captured;
                # each capture is a ply of the other side.
                captured = chess.popcount(board.occupied_co[color]) - goal.count(color)
                takes = chess.popcount(board.occupied_co[not color]) - goal.count(not color)
                if captured < 0 or takes < 0 or not goal.material_fits(board, color):
                    return []  # pieces never appear (but by promotion)
                leaves = chess.popcount(goal.departures(board, color)) - captured - castling
                needed = max(leaves, takes)
            if needed > left:
                return []
            if arrivals and (plies > 1 or color != mover):
                # The journeys, the dearest bound, last (the mover's last ply: its masks below
                # say as much). Castling takes the king two squares and the rook one: three
                # steps in one ply.
                needed = _journeys(board, goal, color, arrivals) - 2 * castling
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
        within = self.within
        moves = board.generate_legal_moves(from_mask & within, to_mask & within)
        if within != chess.BB_ALL:
            moves = (m for m in moves if _changes_within(board, m, within))
        if not goal.unknown:
            return list(moves)
        return [
            m
            for m in moves
            if m.promotion in (None, chess.QUEEN)
            or not goal.unknown & chess.BB_SQUARES[m.to_square]
        ]


def _changes_within(board: chess.Board, move: chess.Move, within: int) -> bool:
    """Whether every square ``move`` changes is in the mask ``within`` (its origin and target
    are: the caller asked python-chess for those): an en passant victim's, a castling's."""
    if board.is_en_passant(move):
        victim = move.to_square + (-8 if board.turn == chess.WHITE else 8)
        return bool(within & chess.BB_SQUARES[victim])
    if board.is_castling(move):
        rank = move.from_square & ~7
        files = (6, 5) if board.is_kingside_castling(move) else (2, 3)
        return all(within & chess.BB_SQUARES[rank + f] for f in files)
    return True


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
def _rings(
    piece_type: chess.PieceType, color: chess.Color, target: chess.Square
) -> tuple[int, ...]:
    """The squares a piece of ``piece_type`` reaches ``target`` from in 1, 2... plies (made
    when first asked: a search asks of a few squares only)."""
    by_steps = [0] * 8
    for origin in chess.SQUARES:
        steps = _steps(piece_type, color, origin, target)
        if 0 < steps < len(by_steps):
            by_steps[steps] |= chess.BB_SQUARES[origin]
    return tuple(by_steps)


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
            (steps for steps, ring in enumerate(_rings(piece_type, color, sq)) if ring & pieces),
            _FAR,
        )
        if piece_type not in (chess.PAWN, chess.KING):
            best = min(best, promotes)
        total += best
    return total
