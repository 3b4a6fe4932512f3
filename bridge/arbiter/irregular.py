"""The engine's judgement of clock presses and of boards that the game does not explain.

A base class of ``engine.Arbiter`` (the module docstring there is the theory of operation): every
press, the whole board read against the game at that press (``press``), illegal moves and what
follows them - waiting for the position before the irregularity, or, where the edition says so,
the illegal move standing once the opponent replies - released moves taken back, pieces
displaced, and moves changed after the press that completed them. The state of the move in
progress is defined here too, shared with the engine. Pure: no I/O, no clock reads.
"""

from __future__ import annotations

from typing import assert_never

import chess
import msgspec

from bridge.arbiter import alerts, judge, positions, press, rules
from bridge.arbiter.alerts import Alert, Details
from bridge.arbiter.facts import AlertRaised, CompletedBy, Fact, GameEnded


class EarlierPart(msgspec.Struct, frozen=True, kw_only=True):
    """The game up to an illegal move that stood (1997 C.3, B.5; 2018 A.4.2).

    The game then went on from ``fen``, the position on the board after the illegal move, as a
    new start position: python-chess cannot replay an illegal move, and a relay can show the two
    parts with the illegal move between them.
    """

    start_fen: str
    moves: tuple[tuple[str, str], ...]
    """(UCI, SAN) of the legal moves from ``start_fen``."""
    illegal_move: str | None
    """The illegal move read off the board (UCI); ``None`` for a press without a move."""
    color: chess.Color
    fen: str


class Candidate(msgspec.Struct):
    """A legal move the board shows, not recorded yet: its piece may still be on its way."""

    move: chess.Move
    deadline: float
    revision: bool


class Previous(msgspec.Struct):
    """The position before the last recorded move, while that move can still be revised."""

    game: list[chess.Piece | None]
    changed: tuple[chess.Square, ...]
    move: chess.Move
    touches: list[judge.Touch]
    """The touches of that move: they count again if it is taken back (7.5.1: 4.3 applies)."""
    board: chess.Board | None = None
    """The position itself, made only when a revision is looked for (most plies need none)."""


class Ply(msgspec.Struct):
    """What happened on the board since the last recorded move."""

    squares: list[chess.Square] = msgspec.field(default_factory=list)
    touches: list[judge.Touch] = msgspec.field(default_factory=list)
    lifted: dict[chess.Square, tuple[chess.Piece, float]] = msgspec.field(default_factory=dict)
    placed: dict[chess.Square, float] = msgspec.field(default_factory=dict)
    """When a piece was last put on each square (the order of two moves in one turn)."""
    promoted: dict[chess.Square, chess.PieceType] = msgspec.field(default_factory=dict)
    """The first new piece put on each promotion square (2018 4.4.4)."""


class Stood(msgspec.Struct):
    """The position an illegal move left: it stands if the opponent replies to it."""

    board: chess.Board
    squares: list[chess.Piece | None]
    diff: set[chess.Square]
    move: chess.Move | None


class Irregular(msgspec.Struct):
    """An illegal move (or a press without one) by ``offender``: the engine waits (see above)."""

    offender: chess.Color
    judged: tuple[chess.Piece | None, ...]
    """The board when it was judged: the same board pressed again is the same irregularity."""
    stood: Stood | None


class Irregularities:
    """Judges presses and irregular boards; ``engine.Arbiter`` holds the state it works on."""

    # The state shared with the engine, in slots (see ``engine.Arbiter.__slots__``).
    __slots__ = (
        "_alert_ids",
        "_awaiting_press",
        "_candidate",
        "_completed",
        "_diff",
        "_displaced",
        "_game",
        "_irregular",
        "_judged",
        "_moved_on_reported",
        "_physical",
        "_ply",
        "_pressed_for",
        "_prev",
        "_same_scan",
        "_san",
        "_suspended",
        "_unexplained",
        "_unpressed",
        "alerts",
        "board",
        "edition",
        "history",
        "illegal_counts",
        "result",
        "start_fen",
    )

    board: chess.Board
    edition: rules.Edition
    result: GameEnded | None
    alerts: list[AlertRaised]
    history: list[EarlierPart]
    illegal_counts: dict[chess.Color, int]
    start_fen: str
    _san: list[str]
    _game: list[chess.Piece | None]
    _physical: list[chess.Piece | None]
    _diff: set[chess.Square]
    _alert_ids: int
    # The move in progress (``Arbiter._reset_turn``).
    _prev: Previous | None
    _candidate: Candidate | None
    _suspended: Candidate | None
    _ply: Ply
    _irregular: Irregular | None
    _judged: tuple[chess.Piece | None, ...] | None
    _awaiting_press: chess.Color | None
    _unpressed: chess.Color | None
    _completed: bool
    _pressed_for: chess.Color | None
    """Who pressed with a board nothing explained: his move, once recognised, is completed."""
    _displaced: set[chess.Square]
    _moved_on_reported: bool
    _unexplained: float | None
    """Since when the board, last read whole, is explained by nothing (``engine``)."""
    _same_scan: float
    """Seconds: sensor events closer than this were read in one scan (``EngineConfig``)."""

    # -- provided by the engine ------------------------------------------------------------

    def _record(
        self, cand: Candidate, by: CompletedBy, now: float, *, shown: bool = False
    ) -> list[Fact]:
        raise NotImplementedError

    def _evaluate(self, now: float, placed: chess.Piece | None = None) -> list[Fact]:
        raise NotImplementedError

    def _prev_board(self) -> chess.Board:
        raise NotImplementedError

    def _reset_turn(self) -> None:
        raise NotImplementedError

    def _mover(self, cand: Candidate) -> chess.Color:
        raise NotImplementedError

    def _mismatch(self, color: chess.Color | None, now: float) -> AlertRaised:
        raise NotImplementedError

    def set_result(self, result: str, reason: str, article: str, now: float) -> GameEnded:
        """End the game (defined by the engine)."""
        raise NotImplementedError

    # -- the press ---------------------------------------------------------------------------

    def _judge_press(self, by: chess.Color, now: float) -> list[Fact]:
        """Every press is judged: it completes the presser's move, whatever the board shows."""
        cand = self._candidate
        self._suspended = None
        if cand is not None and by == self._mover(cand):
            self._candidate = None
            facts = self._record(cand, CompletedBy.CLOCK, now)
            return facts + self._after_own_move(by, now) if self._diff else facts
        if by == self._awaiting_press:
            self._awaiting_press = None
            self._completed = True
            return self._after_own_move(by, now) if self._diff else []
        if by == self._unpressed:
            self._unpressed = None  # his late press, after the opponent had moved (6.2.1)
            return []
        if self._awaiting_press is not None:
            return []  # his clock ran while the opponent moved: he hands it to him to press
        if self._unexplained is not None:
            return [self._mismatch(by, now)]  # a board read whole that nothing explains
        if by == self.board.turn:
            return self._judge_turn(by, now, pressed=True)
        return []

    # -- what the board shows ------------------------------------------------------------------

    def _after_own_move(self, color: chess.Color, now: float) -> list[Fact]:
        """The mover pressed after his recorded move: the board must be the game after it."""
        prev = self._prev
        if not self._diff or prev is None or self.result is not None:
            return []
        verdict = press.after_own_move(
            self._prev_board(),
            prev.game,
            prev.move,
            prev.changed,
            self._game,
            self._physical,
            self._diff,
            self._hands(),
        )
        if verdict is None:
            return []
        return self._apply(verdict, color, now, pressed=True)

    def _judge_turn(self, color: chess.Color, now: float, *, pressed: bool) -> list[Fact]:
        """The player having the move completed what the board shows (a press, or left still)."""
        irregular = self._irregular
        if irregular is not None and irregular.offender != color:
            return []  # the opponent restarts the offender's clock (7.3 / 7.4.2)
        if self._diff and self._judged == tuple(self._physical):
            return []  # the board already judged, pressed again: the same irregularity
        verdict = press.on_turn(self.board, self._game, self._physical, self._diff, self._hands())
        if not pressed and not isinstance(verdict, press.Completes | press.Illegal):
            return []  # a clockless board left still: only a move is completed by waiting
        return self._apply(verdict, color, now, pressed=pressed)

    def _hands(self) -> press.Hands:
        """This turn's lifts and places, and the pieces knocked over in it, for ``press``."""
        ply = self._ply
        return press.Hands(
            lifted={sq: at for sq, (_, at) in ply.lifted.items()},
            placed=ply.placed,
            knocked=self._displaced,
            same_scan=self._same_scan,
        )

    def _apply(
        self, verdict: press.Verdict, color: chess.Color, now: float, *, pressed: bool
    ) -> list[Fact]:
        """Turn a verdict on the whole board into moves, alerts and the engine's next state."""
        by = CompletedBy.CLOCK if pressed else CompletedBy.RELEASE
        match verdict:
            case press.Completes(move=move, displaced=displaced):
                self._ply.touches = [t for t in self._ply.touches if t.square not in displaced]
                facts = self._record(Candidate(move, now, False), by, now)
                return facts + self._displaced_alert(displaced, color, now)
            case press.Revision(move=move):
                return self._record(Candidate(move, now, True), by, now)
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
        return {
            "squares": judge.differing(self._game, self._physical, self._diff),
            "fen": self.board.fen(),
        }

    def _illegal_move(
        self, verdict: press.Illegal, color: chess.Color, now: float, *, pressed: bool
    ) -> list[Fact]:
        details = self._details()
        retracted = self._retract() if verdict.retract else None
        move, first = verdict.move, verdict.first
        article, what = alerts.illegal_what(
            self.edition,
            move,
            first,
            unpromoted=judge.is_unpromoted_pawn(self._game, move),
            castling=judge.is_castling_shape(self._game, move),
            pressed=pressed,
        )
        details["move"] = move.uci()
        if first is not None:
            details["first_move"] = first.uci()
        if retracted is not None:
            details["retracted"] = retracted.uci()
            what += f"; the move {retracted.uci()} recorded for this ply is taken back"
        facts = self._illegal(color, now, details, what, article)
        self._wait_for_restore(color, move)
        return facts

    def _press_without_move(self, color: chess.Color, now: float) -> list[Fact]:
        edition = self.edition
        details = self._details()
        if edition.year >= 2018:
            what = "the clock was pressed without a move"
            facts = self._illegal(color, now, details, what, edition.press_without_move)
            self._wait_for_restore(color, None)
            return facts
        return [self._raise(alerts.press_without_move(edition, color, details), now)]

    def _wait_for_restore(self, color: chess.Color, move: chess.Move | None) -> None:
        """After an illegal move: wait for the position before it, or let it stand."""
        self._candidate = None
        judged = tuple(self._physical)
        self._judged = judged
        stood: Stood | None = None
        if self.edition.illegal_stands is not None and self.result is None:
            kings = [p.color for p in judged if p is not None and p.piece_type == chess.KING]
            if sorted(kings) == [chess.BLACK, chess.WHITE]:
                board = positions.board_of(judged, self.board, not color)
                stood = Stood(board=board, squares=list(judged), diff=set(), move=move)
        self._irregular = Irregular(offender=color, judged=judged, stood=stood)

    def _reply_to_illegal(self, irregular: Irregular, now: float) -> list[Fact]:
        """The opponent replied to an illegal move instead of claiming: the move stands."""
        stood = irregular.stood
        assert stood is not None
        reply = positions.find_move(stood.board, stood.squares, self._physical, stood.diff)
        if reply is None:
            return []
        offender = irregular.offender
        alert = self._raise(
            alerts.illegal_move_stood(
                self.edition,
                offender,
                stood.move,
                self.board.fen(),
                stood.board.fen(),
                self.illegal_counts[offender],
                stood.board.ply(),
            ),
            now,
        )
        self.history.append(
            EarlierPart(
                start_fen=self.start_fen,
                moves=tuple(
                    (m.uci(), san) for m, san in zip(self.board.move_stack, self._san, strict=True)
                ),
                illegal_move=None if stood.move is None else stood.move.uci(),
                color=offender,
                fen=stood.board.fen(),
            )
        )
        touches = self._ply.touches
        self.board = stood.board
        self._san = []
        self.start_fen = stood.board.fen()
        self._game = list(stood.squares)
        self._diff = set(stood.diff)
        self._reset_turn()
        self._ply.touches = [t for t in touches if t.piece.color == self.board.turn]
        return [alert, *self._evaluate(now)]

    def _released_and_changed(
        self, color: chess.Color, instead: chess.Move | None, now: float
    ) -> list[Fact]:
        """A move released (4.7) and then taken back, or its piece moved on, before the press."""
        prev = self._prev
        assert prev is not None
        alert = alerts.released_and_changed(
            self.edition, color, prev.move, instead, self._details(), self.board.ply()
        )
        self._wait_for_restore(color, None)
        self._irregular = Irregular(offender=color, judged=tuple(self._physical), stood=None)
        return [self._raise(alert, now)]

    def _nothing_explains(
        self, color: chess.Color, now: float, *, displacement: bool
    ) -> list[Fact]:
        """Nothing explains the board: displaced pieces, or a board to restore."""
        self._candidate = None
        self._judged = tuple(self._physical)
        self._pressed_for = color
        if displacement:
            return self._displaced_alert(frozenset(self._diff), color, now, force=True)
        squares = judge.differing(self._game, self._physical, self._diff)
        alert = alerts.mismatch(color, squares, self.board.fen(), reconnect=False)
        return [self._raise(alert, now)]

    def _displaced_alert(
        self,
        squares: frozenset[chess.Square],
        color: chess.Color,
        now: float,
        *,
        force: bool = False,
    ) -> list[Fact]:
        """``displaced_pieces`` by ``color`` on ``squares``, unless they were reported already."""
        new = {sq for sq in squares if self._physical[sq] != self._game[sq]} - self._displaced
        if not new and not force:
            return []
        self._displaced.update(squares)
        return [self._raise(alerts.displaced(self.edition, color, squares, self.board.fen()), now)]

    def _moved_after_press(self, color: chess.Color, now: float) -> list[Fact]:
        """The last mover moved his piece on after his press had completed the move."""
        prev = self._prev
        if self._moved_on_reported or prev is None:
            return []
        moved = judge.read_move(self._game, self._physical, self._diff, color)
        if moved is None:
            return []
        self._moved_on_reported = True
        self._displaced.update((moved.from_square, moved.to_square))
        # The lift of that piece was his, not a touch by the player having the move.
        self._ply.touches = [t for t in self._ply.touches if t.square != moved.from_square]
        piece = self._game[moved.from_square]
        assert piece is not None
        alert = alerts.moved_after_press(
            self.edition,
            piece,
            moved,
            self._san[-1],
            prev.move,
            self.board.fen(),
            self.board.ply(),
        )
        return [self._raise(alert, now)]

    def _illegal(
        self, color: chess.Color, now: float, details: Details, what: str, article: str
    ) -> list[Fact]:
        """Count an illegal move and raise it; the loss where the edition says so (7.5.5).

        Where an unclaimed illegal move stands (1997 rapid and blitz, 2018 rapid and blitz), the
        one that would lose stands too unless the opponent claims it before his own move (or
        the arbiter steps in): the alert says so, and the result is the arbiter's to set. A loss
        declared here that nobody claimed would be the worst error the engine can make.
        """
        edition = self.edition
        self.illegal_counts[color] += 1
        count = self.illegal_counts[color]
        alert = alerts.illegal_move(edition, color, count, what, article, details)
        facts: list[Fact] = [self._raise(alert, now)]
        if edition.loses_at_once(count):
            if judge.can_mate(self.board, not color):
                result = "0-1" if color == chess.WHITE else "1-0"
                reason = f"{count} illegal moves"
            else:
                result, reason = "1/2-1/2", f"{count} illegal moves, opponent cannot checkmate"
            facts.append(self.set_result(result, reason, edition.illegal_loss, now))
        return facts

    def _retract(self) -> chess.Move:
        """Take the last recorded move back: it was only part of what the player did."""
        prev = self._prev
        assert prev is not None
        recheck = self._diff.union(prev.changed)
        self.board.pop()
        self._san.pop()
        self._game = prev.game
        self._diff = {sq for sq in recheck if self._physical[sq] != self._game[sq]}
        self._ply.touches = prev.touches + self._ply.touches
        self._prev = None
        self._completed = False
        self._awaiting_press = None
        return prev.move

    def _raise(self, alert: Alert, now: float) -> AlertRaised:
        """Number ``alert``, keep it open in the game, and return it as a fact."""
        self._alert_ids += 1
        raised = AlertRaised(
            kind=alert.kind,
            article=alert.article,
            ply=self.board.ply() + 1 if alert.ply is None else alert.ply,
            color=alert.color,
            message=alert.message,
            details=alert.details,
            at=now,
            id=self._alert_ids,
        )
        self.alerts.append(raised)
        return raised
