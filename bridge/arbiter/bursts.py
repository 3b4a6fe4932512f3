"""Sensor events closer together than one scan of the board: simultaneous touches and knocks.

A board reads its squares one scan at a time and reports what changed in that scan as a run of
messages a few milliseconds apart. Two changes reported closer than ``DEFAULT_SAME_SCAN`` were
seen in the same scan: the board cannot say which came first, so for Article 4 they happened at
the same time (1997 4.4 b: "the king and rook at the same time"). A hand lifts one piece at a
time (4.1: one hand); several pieces leaving their squares within one scan were knocked, not
touched: that is a displacement (1997 7.3, 2018 7.4.1; 2018 4.2.2 exempts "clearly accidental
contact" from touch-move), never a touch-move obligation. Two pieces in one scan may still be one
quick move - a capture with its victim (one of them attacks the other in the game), an en passant
(two pawns side by side), or a king and a rook grasped together for castling (the touch of 4.4) -
so only pieces that no single move lifts together are a knock (``Burst.is_knock``). Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

import chess
import msgspec

from bridge.arbiter import alerts
from bridge.arbiter.facts import Fact
from bridge.arbiter.game import Game

DEFAULT_SAME_SCAN: Final = 0.04
"""Seconds: sensor events closer than this were read in one scan of the board.

Why 0.04 s: the changes of one scan reach us back to back - a DGT field update is five bytes, about
5 ms at 9600 baud, so two squares of one scan arrive 5-10 ms apart, and Bluetooth boards send a
scan's changes in one notification (0 ms). Successive scans are 100-250 ms apart, and a deliberate
second touch by one hand takes longer still (people need 0.1 s or more between two pieces). 40 ms
keeps a margin of four over the slowest same-scan gap while staying under the quickest human
sequence and under the sensor-flicker period (a square dropping out for 30-40 ms is one square,
not two, so it never makes a burst on its own).
"""


SLOW_SCAN: Final = 0.25
"""Seconds between two readings of the whole board from which one reading may hold two hands'
lifts (a Certabo board: about 1 s); a DGT board's scan (at most 0.25 s) and a Millennium's
(41 ms) are quicker than two people reaching for the board one after the other."""


class Burst(msgspec.Struct):
    """Sensor events each less than one scan after the first (or, in a knock, the last) one."""

    start: float
    """When the first event of the burst was read."""
    at: float
    """When the last event of the burst was read."""
    before: dict[chess.Square, chess.Piece | None] = msgspec.field(default_factory=dict)
    """What stood on each square of the burst before it began."""
    after: dict[chess.Square, chess.Piece | None] = msgspec.field(default_factory=dict)
    """What stands on each square of the burst now."""
    knocked: bool = False

    def off(self) -> list[tuple[chess.Square, chess.Piece]]:
        """The pieces that stood on their squares before the burst and have left them.

        A piece put down within the burst and lifted again is one piece sliding on; a square
        emptied and filled again within the burst is a capture (the victim replaced by the
        capturing piece): neither is a piece knocked off.
        """
        return [
            (sq, piece)
            for sq, piece in self.before.items()
            if piece is not None and self.after[sq] is None
        ]

    def is_knock(self, board: chess.Board, *, slow: bool = False) -> bool:
        """Pieces that no single move of ``board`` (the game) lifts together.

        A move lifts at most two pieces: its own and a victim (en passant: the pawn and the
        victim beside it; a quick capture: the victim and the capturer, one attacking the
        other), or a king and a rook (castling). Three or more pieces, two of one colour that
        are not a king and a rook on their rank, or two of both colours neither of which attacks
        the other belong to no single move - unless a piece was put down in the same scan: then
        one player's move ends as the other's begins. ``slow``: the board reads itself whole
        about once a second, so one reading may hold what two hands lifted, a player's and his
        opponent's reaching for his reply (two hands on the board): it is a knock only when no
        two hands can hold those pieces (``_two_hands``).
        """
        off = self.off()
        if slow:
            return not _two_hands(off)
        if len(off) >= 3:
            return True
        if len(off) < 2:
            return False
        (a, first), (b, second) = off
        if first.color != second.color:
            if any(
                piece is not None and piece != self.before[sq] for sq, piece in self.after.items()
            ):
                # A piece put down in the same scan: one player's move ending as the other's
                # hand begins (a quick reply), not pieces knocked over.
                return False
            pawns = first.piece_type == second.piece_type == chess.PAWN
            side_by_side = chess.square_rank(a) == chess.square_rank(b) and (
                abs(chess.square_file(a) - chess.square_file(b)) == 1
            )
            attacks = board.attacks_mask(a) & chess.BB_SQUARES[b] or (
                board.attacks_mask(b) & chess.BB_SQUARES[a]
            )
            return not (attacks or (pawns and side_by_side))
        pair = {first.piece_type, second.piece_type} == {chess.KING, chess.ROOK}
        return not (pair and chess.square_rank(a) == chess.square_rank(b))


def _two_hands(off: list[tuple[chess.Square, chess.Piece]]) -> bool:
    """Whether two hands, one each side's, can hold the pieces ``off``: each one piece, or two
    that one move lifts together (a capturer and its victim, a king and its rook)."""
    if len(off) > 4:
        return False
    for mask in range(1 << len(off)):
        groups = (
            [p for i, p in enumerate(off) if mask >> i & 1],
            [p for i, p in enumerate(off) if not mask >> i & 1],
        )
        if all(_one_hand(group) for group in groups):
            return True
    return False


def _one_hand(held: list[tuple[chess.Square, chess.Piece]]) -> bool:
    """Whether one hand can hold ``held``: nothing, one piece, a king and a rook of one rank
    (castling), or a piece of each colour - a capture under way, the victim lifted before or
    after the capturer (read once a second, the capturer may have been anywhere on its way)."""
    if len(held) < 2:
        return True
    if len(held) > 2:
        return False
    (a, first), (b, second) = held
    if first.color == second.color:
        pair = {first.piece_type, second.piece_type} == {chess.KING, chess.ROOK}
        return pair and chess.square_rank(a) == chess.square_rank(b)
    return True


class Bursts:
    """Groups sensor events into bursts; says when a burst turns out to be a knock."""

    def __init__(self, window: float = DEFAULT_SAME_SCAN, *, slow: bool = False) -> None:
        self.window: Final = window
        self.slow: Final = slow
        """The board reads itself whole at a slow pace (``Burst.is_knock``)."""
        self.current: Burst | None = None
        # The last event (square, before, after, when), kept plainly in one tuple: most events
        # are alone, and need no Burst at all.
        self._last: tuple[chess.Square | None, chess.Piece | None, chess.Piece | None, float] = (
            None,
            None,
            None,
            float("-inf"),
        )

    def feed(
        self,
        square: chess.Square,
        old: chess.Piece | None,
        new: chess.Piece | None,
        at: float,
        board: chess.Board,
    ) -> bool:
        """Take one sensor event; true when it makes its burst a knock (once per burst).

        ``board`` is the game: whether two pieces lifted together may be a capture.

        A burst holds the events within one scan of its first event; once it is a knock, every
        event less than one scan after the one before still belongs to it (pieces falling on).
        """
        previous = self._last
        self._last = (square, old, new, at)
        burst = self.current
        if burst is None and not 0.0 <= at - previous[3] < self.window:
            return False  # the usual case: an event alone
        last, last_old, last_new, previous_at = previous
        if burst is not None and self._close(burst.at if burst.knocked else burst.start, at):
            burst.at = at
            self._add(burst, square, old, new)
        elif last is not None and self._close(previous_at, at):
            burst = self.current = Burst(start=previous_at, at=at)
            self._add(burst, last, last_old, last_new)
            self._add(burst, square, old, new)
        else:
            self.current = None
            return False
        if burst.knocked or not burst.is_knock(board, slow=self.slow):
            return False
        burst.knocked = True
        return True

    def knocking(self, at: float) -> bool:
        """Whether an event read at ``at`` belongs to a burst already found to be a knock."""
        burst = self.current
        return burst is not None and burst.knocked and self._close(burst.at, at)

    def _close(self, before: float, at: float) -> bool:
        # Time that runs backwards (changes replayed from the board's memory are spaced out
        # ahead of the live clock) starts a new burst: it is not one scan.
        return 0.0 <= at - before < self.window

    @staticmethod
    def _add(
        burst: Burst, square: chess.Square, old: chess.Piece | None, new: chess.Piece | None
    ) -> None:
        burst.before.setdefault(square, old)
        burst.after[square] = new


class Knocks:
    """Pieces knocked over in ``game``: several off in one scan are displaced, not touched.

    Their touches are forgotten (no Article 4 obligation; 2018 4.2.2 exempts clearly accidental
    contact) and, once the burst is over and a flicker is ruled out, the pieces still off their
    squares are a ``displaced_pieces`` alert (1997 7.3, 2018 7.4.1).
    """

    def __init__(self, game: Game, window: float, flicker: float, *, scan: float = 0.0) -> None:
        self.game = game
        self.bursts = Bursts(window, slow=scan >= SLOW_SCAN)
        self.flicker = flicker
        self.due: float | None = None
        """When the alert of the knock in progress is due."""
        self.knock: Burst | None = None
        """The knock whose alert is due (a later event alone ends its burst, not its alert)."""

    def feed(
        self, square: chess.Square, old: chess.Piece | None, new: chess.Piece | None, at: float
    ) -> None:
        """One sensor event (after the board took it)."""
        if not self.bursts.feed(square, old, new, at, self.game.board):
            return
        burst = self.bursts.current
        assert burst is not None
        self.game.ply.forget(set(burst.before), burst.start)
        self.knock = burst
        self.due = burst.at + self.flicker

    def knocking(self, at: float) -> bool:
        """Whether an event read at ``at`` belongs to a knock."""
        return self.bursts.current is not None and self.bursts.knocking(at)

    def report(self, now: float) -> list[Fact]:
        """The alert of a knock, once its burst is over and flicker is ruled out."""
        due = self.due
        burst = self.knock
        if due is None or burst is None:
            return []
        if 0.0 <= now - burst.at < self.bursts.window:
            self.due = burst.at + self.flicker  # the burst goes on
            return []
        if now < due:
            return []
        self.due = self.knock = None
        game = self.game
        squares = sorted(sq for sq, piece in burst.before.items() if game.physical[sq] != piece)
        if not squares or game.result is not None:
            return []
        game.displaced.update(squares)
        game.said(now)
        awaiting = game.turn.awaiting
        color = awaiting if awaiting is not None else game.board.turn
        alert = alerts.displaced(game.edition, color, squares, game.board.fen(), knocked=True)
        return [game.raise_alert(alert, now)]
