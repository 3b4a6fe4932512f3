"""Moves made while nobody listened: the board read whole, and presses its memory kept.

After a restart or a reconnect the board is read whole (``BoardSnapshot``). If it is the game,
nothing happened. Otherwise the players went on meanwhile: the lines of legal moves that leave
the board read are looked for (``lines.search``: up to eight plies, shortest first, bounded).
When exactly one does, its moves are recorded as ``reconstructed`` in order. When none or
several do, the game is ``MISMATCH`` (``state``): nothing is recorded while the board
contradicts the game, and once the board has rested ``MISMATCH_AFTER`` (a press at once), one
``board_mismatch`` says so, with the plies searched, the squares, and what the lines found
differ in. The board is looked at again each time it rests: the hand at work at the restart
puts its piece down, or the arbiter puts the position back, or settles it (``set_game``, the
``reconstruct`` command). Boards that sense occupancy only (a DGT Pegasus; a Certabo tag not
learnt) report pieces as UNKNOWN: a line fits when it leaves the same squares occupied, and it
tells which piece stands on each. The first full reading of a game not started yet also tells
the board's orientation: the start position turned round (set up from Black's side, Art. 7.1 b)
rotates every square from then on. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

import chess

from bridge.arbiter import alerts, lines, positions, touch
from bridge.arbiter.facts import CompletedBy, Fact
from bridge.arbiter.game import Game
from bridge.arbiter.state import State
from drivers.events import BoardSnapshot, ClockSide, Occupant, UnknownPiece

MISMATCH_AFTER: Final = 3.0
"""Seconds a board that nothing explains must rest before ``board_mismatch`` (a press: at once).

A board read at a restart or a reconnect can catch a piece in the hand; a moment later it is
put down and the board is explained.
"""

HELD_AFTER: Final = 3 * MISMATCH_AFTER
"""The same when the last change was a lift, or pieces are missing: probably in a hand."""


class Recovery:
    """Reads ``game``'s board whole, and the presses its memory kept."""

    def __init__(self, game: Game, settle: float) -> None:
        self.game = game
        self.settle = settle
        """Seconds the board must rest before it is searched again (the engine's dwell)."""
        self.seen_board = False
        """A full reading came before the first move (the orientation is known)."""
        self.search_at: float | None = None
        """``MISMATCH``: when the board, changed, is searched again."""
        self.report_at: float | None = None
        """``MISMATCH``: when ``board_mismatch`` is raised if nothing explains the board."""
        self.reported = False
        """``board_mismatch`` was raised for this mismatch: once is enough."""
        self.found: lines.Found | None = None
        """What the last search found."""

    def on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        """The board read whole: the truth, and the moves it shows were made meanwhile."""
        game = self.game
        sensed = self._oriented(list(event.squares))
        game.inferred = {sq for sq in chess.SQUARES if isinstance(sensed[sq], UnknownPiece)}
        turn = game.board.turn
        game.physical = [
            None
            if occupant is None
            else occupant
            if isinstance(occupant, chess.Piece)
            else game.squares[sq] or chess.Piece(chess.PAWN, turn)
            for sq, occupant in enumerate(sensed)
        ]
        game.diff = {sq for sq in chess.SQUARES if game.physical[sq] != game.squares[sq]}
        irregular = game.turn.irregular
        if irregular is not None and irregular.stood is not None:
            stood = irregular.stood
            stood.diff = {sq for sq in chess.SQUARES if game.physical[sq] != stood.squares[sq]}
        game.candidate = None
        game.suspended = None
        game.last_change = now
        game.turn.board_changed(bool(game.diff))
        if not game.diff or game.result is not None:
            game.turn.restored()
            self.settled()
            return []
        return self.reconstruct(now)

    def changed(self, now: float, *, lifted: bool) -> list[Fact]:
        """``MISMATCH``: the board changed. Back to the game, or searched once it rests."""
        if not self.game.diff:
            self.settled()
            return []
        self.search_at = None if lifted else now + self.settle
        if not self.reported:
            self.report_at = now + (HELD_AFTER if lifted else MISMATCH_AFTER)
        return []

    def due(self) -> float | None:
        """When ``fire`` must next be called, or ``None``."""
        times = [t for t in (self.search_at, self.report_at) if t is not None]
        return min(times) if times else None

    def fire(self, now: float) -> list[Fact]:
        """The board rested: search it again; or it stays unexplained: say so."""
        facts: list[Fact] = []
        if self.search_at is not None and now >= self.search_at:
            self.search_at = None
            facts.extend(self.reconstruct(now))
        if self.report_at is not None and now >= self.report_at:
            facts.extend(self.report(now))
        return facts

    def reconstruct(self, now: float, *, pressed: bool = False) -> list[Fact]:
        """Record the one line of legal moves that leaves the board read; else ``MISMATCH``.

        ``pressed``: a player pressed the clock; with nothing explained, say so at once.
        Whether the line's players pressed the clock is not known: no press is awaited.
        """
        game = self.game
        line, found = self._explain()
        if line is not None:
            return self.record_line(line, now)
        self.found = found
        if game.turn.state is not State.MISMATCH:
            game.turn.mismatch(now)
        if pressed:
            return self.report(now)
        if not self.reported:
            # Fewer pieces on the board than in the game, and no capture explains it: pieces in
            # a hand, perhaps moved unheard before they were lifted. They are given longer.
            held = game.physical.count(None) > game.squares.count(None)
            self.report_at = now + (HELD_AFTER if held else MISMATCH_AFTER)
        return []

    def _explain(self) -> tuple[lines.Line | None, lines.Found]:
        """The one line that leaves the board read, or with pieces of it in the hand.

        A square that reads empty where the game has a piece may be the piece a player holds,
        about to move it, or the victim he took off first (a hand at work is not a mismatch):
        when no line leaves the board as read (within half the budget), the board is searched
        with each such piece back, then with two of opposite colours back (a capture under
        way). A line found so is taken when it is the only one, and a search that gave up did so
        at least two plies beyond it. Not on a board that senses occupancy only.
        """
        game = self.game
        found = lines.search(game.board, game.physical, game.inferred, budget=lines.BUDGET // 2)
        if found.lines or game.inferred:
            # (A board that senses occupancy only cannot tell a piece in the hand from a
            # capture made unheard: its reading is explained as read, or not at all.)
            return found.line, found
        budget = lines.BUDGET - found.tried
        colors = {
            sq: piece.color
            for sq in sorted(game.diff)
            if game.physical[sq] is None and (piece := game.squares[sq]) is not None
        }
        empty = list(colors)
        pairs = [
            (a, b) for i, a in enumerate(empty) for b in empty[i + 1 :] if colors[a] != colors[b]
        ]
        gave_up = [found] if found.exhausted else []
        singles: list[tuple[chess.Square, ...]] = [(sq,) for sq in empty]
        left = len(singles) + len(pairs)
        for held in (singles, pairs):
            explained: list[lines.Found] = []
            for squares in held:
                goal = list(game.physical)
                for sq in squares:
                    goal[sq] = game.squares[sq]
                # Each supposition its share: one that cannot be (a piece gone with nothing to
                # take it) must not use up the others'.
                share = budget // left
                left -= 1
                in_hand = lines.search(game.board, goal, game.inferred, budget=share)
                budget -= in_hand.tried
                if in_hand.lines and _in_hand(game.board, in_hand.lines[0], squares):
                    explained.append(in_hand)
                elif in_hand.exhausted:
                    gave_up.append(in_hand)
            if explained:
                line = explained[0].line if len(explained) == 1 else None
                # Taken when no line without a piece in the hand can be as short, with a margin
                # of a move of each side: a search that gave up after depth d found none shorter.
                if line is not None and all(len(line) <= g.plies - 2 for g in gave_up):
                    return line, explained[0]
                return None, explained[0]
        return None, gave_up[0] if gave_up else found

    def report(self, now: float) -> list[Fact]:
        """``board_mismatch``, once for this mismatch: the arbiter settles it."""
        self.report_at = None
        if self.reported:
            return []
        self.reported = True
        game = self.game
        squares = sorted(game.diff)
        found = self.found or lines.Found((), 0, False)
        alert = alerts.unexplained_reading(squares, game.board, found)
        return [game.raise_alert(alert, now)]

    def settled(self) -> None:
        """The board is the game again, or the game was set: the mismatch is over."""
        self.game.turn.explained()
        self.search_at = self.report_at = None
        self.reported = False
        self.found = None

    def record_line(self, line: lines.Line, now: float) -> list[Fact]:
        """Record moves made while nobody listened (whether they were pressed is not known).

        The touches seen meanwhile are not theirs: no touch-move is judged on them.
        """
        game = self.game
        self.settled()
        facts: list[Fact] = []
        for move in line:
            game.ply = touch.Ply()
            by = CompletedBy.RECONSTRUCTED
            facts.extend(game.record_move(move, False, by, now, await_press=False))
        for sq in game.inferred:
            if game.physical[sq] is not None and game.squares[sq] is not None:
                game.physical[sq] = game.squares[sq]
        game.diff = {sq for sq in chess.SQUARES if game.physical[sq] != game.squares[sq]}
        game.turn.board_changed(bool(game.diff))
        return facts

    def stored_press(self, side: ClockSide, now: float) -> list[Fact]:
        """A press the board's memory recorded: it completes the presser's move."""
        game = self.game
        by = game.clock.color_of(side)
        if by is None:
            return []
        cand = game.candidate
        if cand is not None and by == game.mover(cand):
            game.candidate = None
            return game.record_move(
                cand.move, cand.revision, CompletedBy.CLOCK, now, await_press=False
            )
        if by == game.turn.awaiting:
            game.turn.pressed(bool(game.diff))
        return []

    def _oriented(self, sensed: list[Occupant | None]) -> list[Occupant | None]:
        """The reading in the player's frame; the first of a game not started tells it."""
        game = self.game
        if not self.seen_board and not game.board.move_stack:
            self.seen_board = True
            start = positions.squares_of(game.board)
            if sensed != start and sensed[::-1] == start:
                game.rotated = True
        return sensed[::-1] if game.rotated else sensed


def _in_hand(board: chess.Board, line: lines.Line, squares: tuple[chess.Square, ...]) -> bool:
    """Whether pieces lifted from ``squares`` after ``line`` can be a hand at work: the player
    having the move lifted his piece to move it (or a victim he takes), or both for a capture."""
    after = board.copy(stack=False)
    for move in line:
        after.push(move)
    legal = list(after.legal_moves)
    if len(squares) == 2:
        a, b = squares
        return any({m.from_square, m.to_square} == {a, b} for m in legal)
    (square,) = squares
    return any(square in (m.from_square, m.to_square) for m in legal)
