"""Moves made while nobody listened: the board read whole, and presses kept by its memory.

After a restart or a reconnect the board is read whole (``BoardSnapshot``). If it is the game,
nothing happened. Otherwise the moves made meanwhile are looked for: one or two legal plies that
alone explain the board are recorded as ``reconstructed``. A board that nothing explains may be
a move in the hand: the game is ``MISMATCH`` (``state``) and the board is judged when it stays
so (``MISMATCH_AFTER``). Boards that sense occupancy only (a DGT Pegasus; a Certabo tag not
learnt) report pieces as UNKNOWN: the reading is explained by the one line of one or two legal
plies that leaves the same squares occupied (``read_unknown``); when none or several do,
nothing is recorded. The first full reading of a game not started yet also tells the board's
orientation: the start position turned round (set up from Black's side, Art. 7.1 b) rotates
every square from then on. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import chess

from bridge.arbiter import positions
from bridge.arbiter.facts import CompletedBy, Fact
from bridge.arbiter.game import Game
from drivers.events import BoardSnapshot, ClockSide, Occupant, UnknownPiece

MISMATCH_AFTER: Final = 3.0
"""Seconds a full board reading that nothing explains must stay so before ``board_mismatch``.

A board read at a restart or a reconnect can catch a piece in the hand; a moment later it is put
down and the board is explained (a move, or two made while nobody listened). A press by the
player having the move judges it at once.
"""


class Recovery:
    """Reads ``game``'s board whole, and the presses its memory kept."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.seen_board = False
        """A full reading came before the first move (the orientation is known)."""

    def on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        """The board read whole: the truth, and the moves it shows were made meanwhile."""
        game = self.game
        sensed = self._oriented(list(event.squares))
        line: tuple[chess.Move, ...] | None = None
        game.inferred = {sq for sq in chess.SQUARES if isinstance(sensed[sq], UnknownPiece)}
        if game.inferred:
            line, squares = self.read_unknown(sensed)
        else:
            squares = [occupant for occupant in sensed if not isinstance(occupant, UnknownPiece)]
        game.physical = squares
        game.diff = {sq for sq in chess.SQUARES if squares[sq] != game.squares[sq]}
        irregular = game.turn.irregular
        if irregular is not None and irregular.stood is not None:
            stood = irregular.stood
            stood.diff = {sq for sq in chess.SQUARES if squares[sq] != stood.squares[sq]}
        game.candidate = None
        game.suspended = None
        game.last_change = now
        game.turn.board_changed(bool(game.diff))
        if not game.diff or game.result is not None:
            game.turn.restored()
            game.turn.explained()
            return []
        if game.inferred:
            if line is None:
                game.turn.mismatch(now)
                return []
            return self.record_line(line, now)
        return self.reconstruct(now)

    def reconstruct(self, now: float) -> list[Fact]:
        """Record the one or two plies that alone explain the board; else ``MISMATCH``.

        Whether their players pressed the clock is not known: no press is awaited for them.
        """
        game = self.game
        found = positions.find_move(game.board, game.squares, game.physical, game.diff)
        line: tuple[chess.Move, ...] | None = (found,) if found is not None else None
        if line is None and len(game.diff) <= 8:
            line = self._two_plies()
        if line is None:
            game.turn.mismatch(now)
            return []
        return self.record_line(line, now)

    def record_line(self, line: tuple[chess.Move, ...], now: float) -> list[Fact]:
        """Record moves made while nobody listened (whether they were pressed is not known)."""
        game = self.game
        game.turn.explained()
        facts: list[Fact] = []
        for move in line:
            by = CompletedBy.RECONSTRUCTED
            facts.extend(game.record_move(move, False, by, now, await_press=False))
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

    def read_unknown(
        self, sensed: Sequence[Occupant | None]
    ) -> tuple[tuple[chess.Move, ...] | None, list[chess.Piece | None]]:
        """A full reading with pieces the board cannot identify: what stands where, and how.

        The reading fits a position when the same squares are occupied and every piece the
        board did identify is that position's. If the game fits, the unknown pieces are the
        game's. Otherwise every line of one or two legal plies is tried (a promotion onto a
        square read as unknown only to a queen): if exactly one fits, its moves were made while
        nobody listened, and the pieces are that position's. If none or several fit, nothing is
        recorded (a capture by the same piece on either of two squares leaves the same squares
        occupied): the unknown pieces are the game's where it has one, a pawn of the side to
        move elsewhere, and the board stays unexplained.
        """
        game = self.game
        board = game.board
        occupied = 0
        known: list[tuple[chess.Square, chess.Piece]] = []
        for sq, occupant in enumerate(sensed):
            if occupant is not None:
                occupied |= chess.BB_SQUARES[sq]
                if isinstance(occupant, chess.Piece):
                    known.append((sq, occupant))

        def fits() -> bool:
            return board.occupied == occupied and all(board.piece_at(sq) == p for sq, p in known)

        lines = [] if fits() else self._lines_to(fits, occupied)
        if len(lines) == 1:
            for move in lines[0]:
                board.push(move)
            squares = positions.squares_of(board)
            for _ in lines[0]:
                board.pop()
            return lines[0], squares
        line = () if not lines and fits() else None
        turn = board.turn
        squares = [
            None
            if occupant is None
            else occupant
            if isinstance(occupant, chess.Piece)
            else game.squares[sq] or chess.Piece(chess.PAWN, turn)
            for sq, occupant in enumerate(sensed)
        ]
        return line, squares

    def _lines_to(self, fits: Callable[[], bool], occupied: int) -> list[tuple[chess.Move, ...]]:
        """The lines of one or two legal plies after which ``fits()``; stops at two."""
        board = self.game.board
        inferred = self.game.inferred

        def plies() -> list[chess.Move]:
            return [
                m
                for m in board.legal_moves
                if m.promotion in (None, chess.QUEEN) or m.to_square not in inferred
            ]

        lines: list[tuple[chess.Move, ...]] = []
        for first in plies():
            board.push(first)
            if fits():
                lines.append((first,))
            # One more ply changes at most four squares (castling).
            if chess.popcount(board.occupied ^ occupied) <= 4:
                for second in plies():
                    board.push(second)
                    if fits():
                        lines.append((first, second))
                    board.pop()
            board.pop()
            if len(lines) > 1:
                break
        return lines

    def _two_plies(self) -> tuple[chess.Move, chess.Move] | None:
        """The one pair of legal plies that explains the board, if exactly one does."""
        game = self.game
        board = game.board
        solutions: list[tuple[chess.Move, chess.Move]] = []
        for first in board.legal_moves:
            squares = list(game.squares)
            for square, piece in positions.move_changes(board, first):
                squares[square] = piece
            board.push(first)
            diff = {sq for sq in chess.SQUARES if game.physical[sq] != squares[sq]}
            second = positions.find_move(board, squares, game.physical, diff)
            board.pop()
            if second is not None:
                solutions.append((first, second))
                if len(solutions) > 1:
                    return None
        return solutions[0] if solutions else None

    def _oriented(self, sensed: list[Occupant | None]) -> list[Occupant | None]:
        """The reading in the player's frame; the first of a game not started tells it."""
        game = self.game
        if not self.seen_board and not game.board.move_stack:
            self.seen_board = True
            start = positions.squares_of(game.board)
            if sensed != start and sensed[::-1] == start:
                game.rotated = True
        return sensed[::-1] if game.rotated else sensed
