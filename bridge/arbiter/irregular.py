"""Clock presses and the boards the game does not explain (Articles 6.7 and 7).

``Irregularities`` judges every press - the whole board read against the game at that press
(``press``) - and what follows an irregularity: an illegal move (7.4 / 7.5), a press without a
move (2018 7.5.3), a released move taken back or moved on before the press (4.7), pieces
displaced (7.3 / 7.4.1), a move changed after the press that completed it. After an illegal
move the game is ``IRREGULAR`` (``state``): the engine waits for the position before the
irregularity, or a legal move from it; where the edition lets an unclaimed illegal move stand
(1997 blitz C.3 and rapid B.5; 2018 rapid and blitz A.4.2) the opponent's legal reply from the
position on the board makes it stand, and the game goes on from that position (a new start
position; the earlier part is kept in the game's ``history``). There, the illegal move that
would lose (7.5.5) is no different: the engine never declares that loss, which needs a claim.

When in doubt between a breach and a displacement the answer is the displacement: an alert the
arbiter dismisses costs nothing, a wrong illegal move can cost a game. Pure: no I/O.
"""

from __future__ import annotations

from typing import assert_never

import chess

from bridge.arbiter import alerts, judge, positions, press
from bridge.arbiter.alerts import Details
from bridge.arbiter.facts import CompletedBy, Fact
from bridge.arbiter.game import Game
from bridge.arbiter.recovery import Recovery
from bridge.arbiter.state import Irregular, Stood


class Irregularities:
    """Judges presses and irregular boards on ``game``; ``recovery`` follows a board that a line
    of moves explains (two hands on the board), which is never judged as an irregularity."""

    def __init__(self, game: Game, recovery: Recovery) -> None:
        self.game = game
        self.recovery = recovery
        self._excluded: frozenset[chess.Square] = frozenset()
        """The squares of the other player's hand at work, left out of the judgement made now."""

    def judge_press(self, by: chess.Color, now: float) -> list[Fact]:
        """Every press is judged: it completes the presser's move, whatever the board shows."""
        game = self.game
        cand = game.candidate
        game.suspended = None
        if cand is not None and by == game.mover(cand):
            game.candidate = None
            facts = game.record_move(cand.move, cand.revision, CompletedBy.CLOCK, now)
            return facts + self._after_own_move(by, now) if game.diff else facts
        if by == game.turn.awaiting:
            game.turn.pressed(bool(game.diff))
            return self._after_own_move(by, now) if game.diff else []
        if by == game.unpressed:
            game.unpressed = None  # his late press, after the opponent had moved (6.2.1)
            return []
        if game.turn.awaiting is not None:
            return []  # his clock ran while the opponent moved: he hands it to him to press
        if by == game.board.turn:
            return self.judge_turn(by, now, pressed=True)
        if game.diff and game.turn.irregular is None:
            # His reply already made, the opponent's move still unread (two hands on the
            # board): the line that shows both, his move completed by this press.
            return self.recovery.follow(now, pressed=by, judging=True) or []
        return []

    def judge_turn(self, color: chess.Color, now: float, *, pressed: bool) -> list[Fact]:
        """The player having the move completed what the board shows (a press, or left still).

        A board that a line of legal moves explains is followed, never judged
        (``recovery.follow``); one that nothing explains, left still, is said
        (``board_mismatch``).
        """
        game = self.game
        irregular = game.turn.irregular
        if irregular is not None and irregular.offender != color:
            return []  # the opponent restarts the offender's clock (7.3 / 7.4.2)
        if game.diff and game.judged == tuple(game.physical):
            return []  # the board already judged, pressed again: the same irregularity
        self._excluded = frozenset()
        verdict = press.on_turn(game.board, game.squares, game.physical, game.diff, self._hands())
        if irregular is None and not _plain(verdict):
            followed = self.recovery.follow(now, pressed=color if pressed else None, judging=True)
            if followed is not None:
                return followed
        if not pressed and not isinstance(verdict, press.Completes | press.Illegal):
            # A board without a clock left still: only a move is completed by waiting, and a
            # board nothing explains is said.
            if isinstance(verdict, press.NoMove) or irregular is not None:
                return []
            return self.recovery.unexplained(now)
        return self._apply(verdict, color, now, pressed=pressed)

    def still_due(self) -> bool:
        """A board without a clock, unexplained: it is judged once left still ``illegal_after``.

        Only once a piece of the player who would complete it stands where the game has none
        of its own: the side to move's, or the last mover's while his move is revisable (a
        second move of his in one turn, a piece moved on where it cannot go).
        """
        game = self.game
        if (
            not game.diff
            or game.candidate is not None
            or game.turn.irregular is not None
            or game.turn.unexplained is not None
            or game.still_reported
            or game.result is not None
            or game.clock.connected
        ):
            return False
        later = judge.judged_later(
            game.squares, game.physical, game.diff, game.board.turn, game.turn.revisable
        )
        return later is not None

    def judge_still(self, now: float) -> list[Fact]:
        """A board without a clock left still ``illegal_after``: completed by the player whose
        piece arrived - the side to move (``judge_turn``), or the last mover while his move is
        revisable (as at his press: two moves in one turn, a piece moved on)."""
        game = self.game
        color = judge.judged_later(
            game.squares, game.physical, game.diff, game.board.turn, game.turn.revisable
        )
        if color is None or color == game.board.turn:
            return self.judge_turn(game.board.turn, now, pressed=False)
        return self._after_own_move(color, now, pressed=False)

    def reply_to_illegal(self, now: float) -> list[Fact]:
        """The opponent replied to an illegal move instead of claiming: the move stands.

        The ``illegal_move_stood`` alert, and the game restarted from the position the illegal
        move left; nothing if the board shows no legal reply from it. The caller reads the
        board again from that position.
        """
        game = self.game
        irregular = game.turn.irregular
        assert irregular is not None
        assert irregular.stood is not None
        stood = irregular.stood
        if positions.find_move(stood.board, stood.squares, game.physical, stood.diff) is None:
            return []
        offender = irregular.offender
        alert = alerts.illegal_move_stood(
            game.edition,
            offender,
            stood.move,
            game.board.fen(),
            stood.board.fen(),
            game.illegal_counts[offender],
            stood.board.ply(),
        )
        raised = game.raise_alert(alert, now)
        game.restart(stood.board, stood.squares)
        return [raised]

    def moved_after_press(self, color: chess.Color, now: float) -> list[Fact]:
        """The last mover moved his piece on after his press had completed the move."""
        game = self.game
        prev = game.prev
        if game.moved_on_reported or prev is None:
            return []
        moved = judge.read_move(game.squares, game.physical, game.diff, color)
        if moved is None:
            return []
        game.moved_on_reported = True
        game.said(now)
        game.displaced.update((moved.from_square, moved.to_square))
        # The lift of that piece was his, not a touch by the player having the move.
        game.ply.touches = [t for t in game.ply.touches if t.square != moved.from_square]
        piece = game.squares[moved.from_square]
        assert piece is not None
        alert = alerts.moved_after_press(
            game.edition,
            piece,
            moved,
            game.san[-1],
            prev.move,
            game.board.fen(),
            game.board.ply(),
        )
        return [game.raise_alert(alert, now)]

    def displaced_alert(
        self, squares: frozenset[chess.Square], color: chess.Color | None, now: float
    ) -> list[Fact]:
        """``displaced_pieces`` by ``color`` on ``squares``, unless they were reported already:
        one alert per irregularity (a press on a board still displaced as reported is none)."""
        game = self.game
        new = {sq for sq in squares if game.physical[sq] != game.squares[sq]} - game.displaced
        if not new:
            return []
        game.displaced.update(squares)
        alert = alerts.displaced(game.edition, color, squares, game.board.fen())
        return [game.raise_alert(alert, now)]

    # -- what the board shows at a press -------------------------------------------------------

    def _after_own_move(
        self, color: chess.Color, now: float, *, pressed: bool = True
    ) -> list[Fact]:
        """The mover pressed after his recorded move: the board must be the game after it, but
        for the opponent's hand already at work (two hands on the board)."""
        game = self.game
        prev = game.prev
        if not game.diff or prev is None or game.result is not None:
            return []
        self._excluded = self._other_hand()
        verdict = press.after_own_move(
            game.prev_board(),
            prev.game,
            prev.move,
            prev.changed,
            game.squares,
            game.physical,
            game.diff - self._excluded,
            self._hands(),
        )
        if verdict is None:
            return []
        followed = self.recovery.follow(now, pressed=color if pressed else None, judging=True)
        if followed is not None:
            return followed
        return self._apply(verdict, color, now, pressed=pressed)

    def _other_hand(self) -> frozenset[chess.Square]:
        """The squares of pieces the player having the move may hold at the other's press: his
        own, a victim, or both of a capture under way (``positions.holds``) - his reply begun,
        even before the pressed move landed (two hands on the board). Held on through his own
        move, such a piece is displaced (``positions.find_move_with_hand``, ``lines``)."""
        game = self.game
        arrived = {
            piece
            for sq in game.diff
            if (piece := game.physical[sq]) is not None and piece != game.squares[sq]
        }
        squares = [
            sq
            for sq in sorted(game.diff)
            if game.physical[sq] is None and (piece := game.squares[sq]) is not None
        ]
        if any(game.squares[sq] in arrived for sq in squares):
            return frozenset()  # a piece lifted and put down elsewhere: a move, not a hand
        if 1 <= len(squares) <= 2 and positions.holds(game.board, squares, other=False):
            return frozenset(squares)
        return frozenset()

    def _hands(self) -> press.Hands:
        """This turn's lifts and places, and the pieces knocked over in it, for ``press``."""
        game = self.game
        return press.Hands(
            lifted={sq: at for sq, (_, at) in game.ply.lifted.items()},
            placed=game.ply.placed,
            knocked=game.displaced,
            same_scan=game.same_scan,
        )

    def _apply(
        self, verdict: press.Verdict, color: chess.Color, now: float, *, pressed: bool
    ) -> list[Fact]:
        """Turn a verdict on the whole board into moves, alerts and the engine's next state."""
        game = self.game
        game.said(now)
        by = CompletedBy.CLOCK if pressed else CompletedBy.RELEASE
        match verdict:
            case press.Completes(move=move, displaced=displaced):
                game.ply.touches = [t for t in game.ply.touches if t.square not in displaced]
                facts = game.record_move(move, False, by, now)
                return facts + self.displaced_alert(displaced, color, now)
            case press.Revision(move=move):
                return game.record_move(move, True, by, now)
            case press.Illegal():
                return self._illegal_move(verdict, color, now, pressed=pressed)
            case press.NoMove():
                return self._press_without_move(color, now)
            case press.TakenBack():
                return self._released_and_changed(color, None, now)
            case press.MovedOn(move=move):
                return self._released_and_changed(color, move, now)
            case press.Unexplained(displacement=displacement):
                return self._nothing_explains(color, now, displacement=displacement)
            case _:
                assert_never(verdict)

    def _details(self) -> Details:
        game = self.game
        return {
            "squares": judge.differing(game.squares, game.physical, self._diff()),
            "fen": game.board.fen(),
        }

    def _diff(self) -> set[chess.Square]:
        """The squares judged: where the board differs from the game, but the other hand's."""
        return self.game.diff - self._excluded

    def _illegal_move(
        self, verdict: press.Illegal, color: chess.Color, now: float, *, pressed: bool
    ) -> list[Fact]:
        game = self.game
        details = self._details()
        retracted = game.take_back() if verdict.retract else None
        move, first = verdict.move, verdict.first
        unpromoted = judge.is_unpromoted_pawn(game.squares, move)
        article, what = alerts.illegal_what(
            game.edition,
            move,
            first,
            unpromoted=unpromoted,
            castling=judge.is_castling_shape(game.squares, move),
            pressed=pressed,
        )
        details["move"] = move.uci()
        if first is not None:
            details["first_move"] = first.uci()
        if retracted is not None:
            details["retracted"] = retracted.uci()
            what += f"; the move {retracted.uci()} recorded for this ply is taken back"
        facts = self._illegal(color, now, details, what, article)
        # 2018 7.5.2: the pawn is replaced by a new piece; the press completed that move.
        completes = move if unpromoted and game.edition.year >= 2018 else None
        self._wait_for_restore(color, move, completes=completes)
        return facts

    def _press_without_move(self, color: chess.Color, now: float) -> list[Fact]:
        game = self.game
        edition = game.edition
        details = self._details()
        if edition.year >= 2018:
            what = "the clock was pressed without a move"
            facts = self._illegal(color, now, details, what, edition.press_without_move)
            self._wait_for_restore(color, None)
            return facts
        return [game.raise_alert(alerts.press_without_move(edition, color, details), now)]

    def _wait_for_restore(
        self,
        color: chess.Color,
        move: chess.Move | None,
        *,
        may_stand: bool = True,
        completes: chess.Move | None = None,
    ) -> None:
        """After an illegal move: wait for the position before it, or let it stand.

        ``completes``: the move the press completed once the board shows it legally made (the
        unpromoted pawn exchanged for a new piece, 2018 7.5.2).
        """
        game = self.game
        game.candidate = None
        judged = tuple(game.physical)
        game.judged = judged
        stood: Stood | None = None
        if may_stand and game.edition.illegal_stands is not None and game.result is None:
            kings = [p.color for p in judged if p is not None and p.piece_type == chess.KING]
            if sorted(kings) == [chess.BLACK, chess.WHITE]:
                board = positions.board_of(judged, game.board, not color)
                stood = Stood(board=board, squares=list(judged), diff=set(), move=move)
        irregular = Irregular(offender=color, judged=judged, stood=stood, completes=completes)
        game.turn.irregularity(irregular)

    def _released_and_changed(
        self, color: chess.Color, instead: chess.Move | None, now: float
    ) -> list[Fact]:
        """A move released (4.7) and then taken back, or its piece moved on, before the press."""
        game = self.game
        prev = game.prev
        assert prev is not None
        alert = alerts.released_and_changed(
            game.edition, color, prev.move, instead, self._details(), game.board.ply()
        )
        self._wait_for_restore(color, None, may_stand=False)
        return [game.raise_alert(alert, now)]

    def _nothing_explains(
        self, color: chess.Color, now: float, *, displacement: bool
    ) -> list[Fact]:
        """Nothing explains the board: displaced pieces, or a board to restore."""
        game = self.game
        game.candidate = None
        game.judged = tuple(game.physical)
        game.pressed_for = color
        if displacement:
            return self.displaced_alert(frozenset(self._diff()), color, now)
        squares = judge.differing(game.squares, game.physical, self._diff())
        alert = alerts.mismatch(color, squares, game.board.fen(), reconnect=False)
        return [game.raise_alert(alert, now)]

    def _illegal(
        self, color: chess.Color, now: float, details: Details, what: str, article: str
    ) -> list[Fact]:
        """Count an illegal move and raise it; the loss where the edition says so (7.5.5).

        Where an unclaimed illegal move stands (1997 rapid and blitz, 2018 rapid and blitz), the
        one that would lose stands too unless the opponent claims it before his own move (or
        the arbiter steps in): the alert says so, and the result is the arbiter's to set. A loss
        declared here that nobody claimed would be the worst error the engine can make.
        """
        game = self.game
        edition = game.edition
        game.illegal_counts[color] += 1
        count = game.illegal_counts[color]
        alert = alerts.illegal_move(edition, color, count, what, article, details)
        facts: list[Fact] = [game.raise_alert(alert, now)]
        if edition.loses_at_once(count):
            if judge.can_mate(game.board, not color):
                result = "0-1" if color == chess.WHITE else "1-0"
                reason = f"{count} illegal moves"
            else:
                result, reason = "1/2-1/2", f"{count} illegal moves, opponent cannot checkmate"
            facts.append(game.set_result(result, reason, edition.illegal_loss, now))
        return facts


def _plain(verdict: press.Verdict | None) -> bool:
    """A verdict that needs no line of moves to read: a legal move made in full, or nothing."""
    return isinstance(verdict, press.NoMove) or (
        isinstance(verdict, press.Completes) and not verdict.displaced
    )
