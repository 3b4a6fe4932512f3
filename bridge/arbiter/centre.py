"""Both kings put on the centre squares: the DGT broadcast convention for a result.

At the end of a game, players or arbiters of broadcast events put both kings on the centre
squares: both on light squares (d5, e4), White won; both on dark squares (d4, e5), Black won;
one on each, a draw. The four centre squares touch each other, so no legal position has both
kings there: it is a result, not a pair of moves. Only kings at rest count - both there, nothing
else in hand, for the dwell time - since a king may pass a centre square on its way. Pure: no
I/O.
"""

from __future__ import annotations

from typing import Final

import chess

from bridge.arbiter import judge
from bridge.arbiter.facts import Fact
from bridge.arbiter.game import Game

CENTRE: Final = (chess.D4, chess.D5, chess.E4, chess.E5)


class CentreKings:
    """Watches ``game``'s board for both kings at rest on the centre squares."""

    def __init__(self, game: Game, dwell: float) -> None:
        self.game = game
        self.dwell = dwell
        self.due: float | None = None
        """When the kings, if still so, are at rest."""
        self.central = False
        """Both kings stand on the centre squares now."""

    def reset(self) -> None:
        """Nothing to watch (a new game, a result)."""
        self.due = None
        self.central = False

    def watch(self, now: float, old: chess.Piece | None, new: chess.Piece | None) -> None:
        """A square changed from ``old`` to ``new``: both kings in the centre, at rest from now?"""
        if not (self.central or _is_king(old) or _is_king(new)):
            return  # no king moved and none stands in the centre: nothing changed here
        game = self.game
        self.due = None
        self.central = judge.kings_in_centre(game.physical) is not None
        if game.result is not None or not self.central:
            return
        kings = {sq for sq in CENTRE if _is_king(game.physical[sq])}
        kings.update(sq for sq in (game.board.king(c) for c in chess.COLORS) if sq is not None)
        if game.diff <= kings:
            self.due = now + self.dwell

    def fire(self, now: float) -> list[Fact]:
        """The result, if the kings are at rest in the centre now."""
        if self.due is None or now < self.due:
            return []
        self.due = None
        game = self.game
        ending = judge.kings_in_centre(game.physical)
        if ending is None or game.result is not None:
            return []
        return [game.set_result(ending.result, ending.reason, ending.article, now)]


def _is_king(piece: chess.Piece | None) -> bool:
    return piece is not None and piece.piece_type == chess.KING
