"""Two hands on the board: the opponent reaches for his reply before the mover's piece lands.

On a board without a clock nothing separates the two players' hands, and a player who lifts his
piece for his reply while his opponent's is still in the air is the normal case, not an edge
case. Three questions are answered here, on the engine's state (``game.Game``):

* Which move does the board show (``Hands.read``)? The one legal move whose squares show it
  exactly, or - the other hand already at work - one whose squares all show it, every other
  square reading empty where the game has a piece the opponent, to move after it, may hold
  (``positions.find_move_with_hand``). Either only if it accounts for every piece put down since
  the last move landed (``watching.accounts``): a board read at a reading's pace can show one move
  where the hands made three (a king out and back, the other hand's reply between).
* Does an event of the other hand bear on a move that may still be on its way (``beside``)? Not
  when it is his own piece away from the move's squares: the move waits for its dwell or the
  press, as it would alone.
* Whose lift is a lift (``touch``), and what a line of several moves is (``lines``,
  ``recovery``): elsewhere.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

import chess

from bridge.arbiter import positions, watching
from bridge.arbiter.game import Candidate, Game

UNTOLD_SCAN: Final = 0.9
"""Seconds between two readings of a board from which it no longer tells a hand at work from a
move: a Certabo's reading a second can hold a move made and taken back, or a whole reply. A
Chessnut's notifications (at most about 0.45 s apart) may hold a lift of each hand, not that."""


class Hands:
    """Reads ``game``'s board with both players' hands at work."""

    def __init__(self, game: Game, *, scan: float = 0.0) -> None:
        self.game = game
        self.slow = scan >= UNTOLD_SCAN
        """The board reads itself whole about once a second: the board is followed only by the
        lines that explain it at rest (``told``)."""

    def read(self) -> tuple[chess.Move | None, bool]:
        """The legal move the board shows, and whether the other hand holds pieces beside it."""
        game = self.game
        move = positions.find_move(game.board, game.squares, game.physical, game.diff)
        if move is not None:
            # The hands may have done more than the board shows: a line of moves, at rest.
            return (move, False) if self.accounted(move) else (None, False)
        if game.turn.irregular is not None or not self.told():
            return None, False
        with_hand = positions.find_move_with_hand(
            game.board, game.squares, game.physical, game.diff, game.carried
        )
        if with_hand is not None and self.accounted(with_hand[0]):
            return with_hand[0], True
        return None, False

    def told(self) -> bool:
        """Whether the board tells a hand at work from a move: not when it senses occupancy only
        (a piece in the hand or a capture made), nor when it reads itself whole once a second
        (a move made and taken within one reading is never seen). There, the moves are followed
        when a line of them explains the board at rest (``recovery``)."""
        game = self.game
        return not game.inferred & game.diff and not self.slow

    def accounted(self, move: chess.Move) -> bool:
        """Whether ``move`` accounts for every piece seen put down since the last move landed."""
        game = self.game
        return watching.accounts(game.board, (move,), game.places, game.trail.since, game.dwell)

    def beside(
        self,
        cand: Candidate,
        square: chess.Square,
        old: chess.Piece | None,
        piece: chess.Piece | None,
    ) -> bool:
        """The other player's hand at work beside a move that may still be on its way (two
        hands on the board): the move waits for its dwell or the press, as it would alone."""
        game = self.game
        hand = piece if piece is not None else old
        assert hand is not None
        if cand.revision or hand.color == game.mover(cand):
            return False
        return square not in {sq for sq, _ in positions.move_changes(game.board, cand.move)}
