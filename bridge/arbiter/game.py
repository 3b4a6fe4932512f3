"""The game as the arbiter keeps it: the moves recorded, the board the sensors read, the state.

``Game`` is the engine's state, shared by its collaborators (``engine``, ``irregular``,
``recovery``): the python-chess board of the moves recorded and their SAN, what stands on each
square in the game and on the physical board and where the two differ, the ply in progress
(``touch.Ply``), the move pending or last recorded, the open alerts and the state machine
(``state.Turn``). Its methods are the steps every collaborator takes the same way: record a
move, take it back, start again from a position, raise an alert, end the game. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

import chess
import msgspec

from bridge.arbiter import alerts, judge, positions, touch, watching
from bridge.arbiter.clock import Clock
from bridge.arbiter.facts import AlertRaised, CompletedBy, Fact, GameEnded, MovePlayed
from bridge.arbiter.lines import Found
from bridge.arbiter.rules import Edition
from bridge.arbiter.state import Turn
from bridge.arbiter.watching import Seen
from drivers.events import Occupant


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
    touches: list[touch.Touch]
    """The touches of that move: they count again if it is taken back (7.5.1: 4.3 applies)."""
    board: chess.Board | None = None
    """The position itself, made only when a revision is looked for (most plies need none)."""


class Trail(msgspec.Struct):
    """Where the moves not recorded yet may lie, while no single move explains the board.

    ``bases`` are the lines of legal moves from the game that explained the board at its last
    rest (candidates that the board could not tell apart); ``within`` the squares changed since
    - the moves made since change no other (``lines``). A move recorded starts a new trail.
    """

    within: int
    """A mask of the squares the moves since ``bases`` may change: those that differed from the
    game then, and every square changed since; ``chess.BB_ALL`` when nobody watched (a board
    read whole after a restart or a reconnect)."""
    bases: list[tuple[chess.Move, ...]] = msgspec.field(default_factory=lambda: [()])
    unheard: int = 0
    """The plies of each base made while nobody listened (recorded as ``reconstructed``)."""
    since: float = float("-inf")
    """When the bases last explained the board: every piece put down after it is a move's."""
    search_at: float | None = None
    """When the board, changed and not explained by one move, is searched once it rests."""
    report_at: float | None = None
    """When ``board_mismatch`` is raised if nothing explains the board by then."""
    reported: bool = False
    """``board_mismatch`` was raised for this irregularity: once is enough."""
    reported_lines: bool = False
    """It listed lines the board cannot tell apart (one that listed none, the search having
    found none or given up, is raised once more when such lines are found: the arbiter is told
    the moves to choose from)."""
    found: Found | None = None
    """What the last search found."""

    @classmethod
    def watched(cls, squares: Iterable[chess.Square], since: float) -> Trail:
        """A trail from the game at ``since``, with ``squares`` (where the board differs from it)
        in reach."""
        within = 0
        for sq in squares:
            within |= chess.BB_SQUARES[sq]
        return cls(within=within, since=since)


class Game:
    """The engine's state; see the module docstring."""

    def __init__(
        self,
        edition: Edition,
        clock: Clock,
        start: chess.Board,
        *,
        same_scan: float,
        dwell: float,
    ) -> None:
        self.edition = edition
        self.clock = clock
        self.same_scan = same_scan
        """Seconds: sensor events closer than this were read in one scan (``bursts``)."""
        self.dwell = dwell
        """Seconds a piece rests on a square to count as released there."""
        self.turn = Turn()
        self.physical: list[chess.Piece | None] = positions.squares_of(start)
        """What the sensors say stands on each square now (player's frame)."""
        self.inferred: set[chess.Square] = set()
        """Squares whose piece the board reported as UNKNOWN: ``physical`` holds the inference."""
        self.illegal_counts: dict[chess.Color, int] = {chess.WHITE: 0, chess.BLACK: 0}
        self.replaying = False
        """Changes read from the board's memory are being replayed: moves are reconstructed."""
        self.rotated = False
        """The board was set up from Black's side: every square is turned round (7.1 b)."""
        self.last_change = 0.0
        """When the board last changed (kept by ``set``: a correction is not a change)."""
        self.set(start)

    def set(self, board: chess.Board, *, keep_counts: bool = False) -> None:
        """Judge from ``board`` (with its move stack) on: a new game, or a correction."""
        self.board = board.copy()
        self.san = _replay_san(self.board)
        self.start_fen = self.board.root().fen()
        self.alerts: list[AlertRaised] = []
        self.history: list[EarlierPart] = []
        if not keep_counts:
            self.illegal_counts = {chess.WHITE: 0, chess.BLACK: 0}
        self.alert_ids = 0
        self.squares = positions.squares_of(self.board)
        """What stands on each square in the game."""
        for sq in self.inferred:
            # A piece the board cannot identify is what the game now says it is (an arbiter's
            # correction of an assumed promotion, a takeback).
            if self.physical[sq] is not None and self.squares[sq] is not None:
                self.physical[sq] = self.squares[sq]
        self.diff = {sq for sq in chess.SQUARES if self.physical[sq] != self.squares[sq]}
        self.reset_turn()
        self.turn.new_game(bool(self.diff))
        # A board that differs from a game just set (a takeback, a correction) is the players'
        # to put right: it is judged again only after they touch it.
        self.still_reported = True

    def reset_turn(self) -> None:
        """Forget everything about the move in progress and the irregularities of the ply."""
        self.prev: Previous | None = None
        self.candidate: Candidate | None = None
        self.suspended: Candidate | None = None
        """A candidate whose piece was lifted again: sliding on, or taken by the opponent."""
        self.suspended_touches = 0
        """How many touches of the ply came before the suspended candidate's piece was lifted."""
        self.suspended_from: chess.Square | None = None
        """The square whose lift suspended it: the moved piece's, or another of the mover's."""
        self.ply = touch.Ply()
        self.unpressed: chess.Color | None = None
        """The player who did not press before the opponent moved: his late press is his."""
        self.pressed_for: chess.Color | None = None
        """Who pressed with a board nothing explained: his move, once recognised, is completed."""
        self.judged: tuple[chess.Piece | None, ...] | None = None
        """The board last judged at a press: the same board pressed again is not judged again."""
        self.displaced: set[chess.Square] = set()
        """Squares reported displaced (7.3 / 7.4.1) and not put right yet."""
        self.moved_on_reported = False
        self.carried: frozenset[chess.Square] = frozenset()
        """Squares whose pieces another hand held before the last move landed, still held when it
        was recorded: a hand holds a piece through the opponent's move, not through its own."""
        self.early = False
        """The other hand was at work before the last move landed (two hands on the board)."""
        self.trail = Trail.watched(self.diff, self.last_change)
        self.places: dict[chess.Square, list[Seen]] = {}
        """What was seen on each square since the board last was the game (``watching.Places``)."""
        self.landed = {chess.WHITE: float("-inf"), chess.BLACK: float("-inf")}
        """When each player's last recorded move landed: his next is lifted and lands after."""

    def said(self, now: float) -> None:
        """An irregularity was said now: what the hands did so far is accounted for by it."""
        self.trail.since = max(self.trail.since, now)

    def put_on(self, square: chess.Square) -> float | None:
        """When a piece was last seen put on ``square`` (``None``: not since it was watched)."""
        return next((seen.at for seen in reversed(self.places.get(square, ())) if seen.put), None)

    def seen(self, square: chess.Square, piece: chess.Piece | None, now: float) -> None:
        """``square`` was seen to change: a piece lifted, or put down (named unless the board
        cannot tell)."""
        named = None if piece is None or square in self.inferred else piece
        seen = self.places.pop(square, [])  # put back last: the squares by their last change
        self.places[square] = seen
        seen.append(Seen(now, piece is not None, named))
        if len(seen) > _PLACES_KEPT:
            del seen[0]

    # -- the moves -------------------------------------------------------------------------

    def record_move(
        self,
        move: chess.Move,
        revision: bool,
        by: CompletedBy,
        now: float,
        *,
        shown: bool = False,
        await_press: bool = True,
    ) -> list[Fact]:
        """Record ``move`` (or, with ``revision``, the move instead of the last one).

        ``shown``: the board was just read as the position after this move and nothing else,
        so once it is recorded no square differs. ``await_press``: the mover's press is awaited
        if the clock runs (not for moves made while nobody listened).
        """
        board = self.board
        recheck = set(self.diff)
        superseded = self.prev if revision else None
        if superseded is not None:
            recheck.update(superseded.changed)
            board.pop()
            self.san.pop()
            self.squares = superseded.game
        color = board.turn
        by = CompletedBy.RECONSTRUCTED if self.replaying else by
        irregular = self.turn.irregular
        if irregular is not None and _same_squares(irregular.completes, move):
            by = CompletedBy.CLOCK  # 2018 7.5.2: the pawn's press completed the promotion
        changes = positions.move_changes(board, move)
        changed = tuple(square for square, _ in changes)
        # Pieces another hand holds (two hands on the board): their lifts are not the mover's.
        others = (
            {} if superseded is not None else self.ply.others(changed, self.squares, self.physical)
        )
        ply = self.ply.of_mover(others)
        facts: list[Fact] = []
        if superseded is not None:
            alert = touch.revision_alert(board, superseded.move, move, self.edition)
            raised = [] if alert is None else [alert]
        else:
            # A reply begun before the awaited move had landed is the other hand's haste, not a
            # press forgotten.
            late = None if self.early else self.turn.awaiting
            raised = touch.move_alerts(
                board, move, ply, late, self.edition, self.same_scan, self.dwell
            )
            if late is not None and late != color:
                self.unpressed = late
        touches = ply.touches
        if superseded is not None:
            touches = superseded.touches + touches
        self.prev = Previous(self.squares[:], changed, move, touches)
        seen = watching.landing(self.places, board, move, self.landed[color])
        landed = now if seen is None else seen
        self.landed[color] = landed
        san = board.san(move)
        board.push(move)
        self.san.append(san)
        for square, piece in changes:
            self.squares[square] = piece
        if shown:
            self.diff = set()
        else:
            self.diff = {sq for sq in (*recheck, *changed) if self.physical[sq] != self.squares[sq]}
        touched = tuple(dict.fromkeys(ply.squares))
        held = {sq: lift for sq, lift in others.items() if self.physical[sq] is None}
        self._after_record(color, by, await_press=await_press)
        # Every piece put down since it landed is another move's (or put back).
        self.trail = Trail.watched(self.diff, landed)
        self.ply = touch.Ply.carried(held)
        self.carried = frozenset(sq for sq, (_, at) in held.items() if at < landed)
        self.early = bool(self.carried)
        facts.append(
            MovePlayed(
                ply=board.ply(),
                move=move,
                san=san,
                fen=board.fen(),
                color=color,
                touched=touched,
                completed_by=by,
                clock=self.clock.times(),
                supersedes=revision,
                promotion_assumed=move.promotion is not None and move.to_square in self.inferred,
                at=now,
            )
        )
        ending = judge.ending_after_move(board, self.edition)
        if ending is not None and ending.reason == judge.CHECKMATE:
            raised, ending = self._mate_in_breach(raised, ending)
        facts.extend(self.raise_alert(alert, now) for alert in raised)
        if ending is not None:
            facts.append(self.set_result(ending.result, ending.reason, ending.article, now))
        return facts

    def release_pending(
        self,
        square: chess.Square,
        old: chess.Piece | None,
        piece: chess.Piece | None,
        cand: Candidate | None,
        suspended: Candidate | None,
        now: float,
    ) -> list[Fact]:
        """A sensor event while a move is pending: does it show that move released (4.7)?"""
        facts: list[Fact] = []
        # Whose hand: the piece put down, or else the piece lifted.
        hand = piece if piece is not None else old
        assert hand is not None
        opponent = hand.color != self.board.turn
        if cand is not None and not cand.revision:
            # The opponent reaching for a piece of his own is no sign that the candidate was
            # released: he may reach before it lands (two hands on the board). The candidate is
            # read again with his hand at work, and waits for its dwell or the press.
            if opponent and piece is not None and square == cand.move.to_square:
                # The opponent takes the moved piece: it had been released (4.7).
                self.candidate = None
                facts.extend(self.record_move(cand.move, cand.revision, CompletedBy.RELEASE, now))
            elif piece is None and (
                square == cand.move.to_square
                or (not opponent and square not in _squares_of(cand.move, self.board))
            ):
                # Sliding on, or taken by the opponent; or another of the mover's pieces lifted:
                # by the opponent taking it first (the candidate was released), or by the mover
                # (he puts it back). Later events say.
                self.suspended = cand
                self.suspended_touches = len(self.ply.touches)
                self.suspended_from = square
        elif suspended is not None and opponent:
            if piece is None:
                # An opponent's piece lifted: his capture of the moved piece, or the mover taking
                # a victim on his way. What is put down next tells.
                self.suspended = suspended
            elif square != self.suspended_from:
                # The opponent puts a piece down elsewhere, the moved piece still in the air:
                # his reply at work while it slides on (two hands on the board).
                self.suspended = suspended
            else:
                # The opponent takes the piece lifted (the moved one, or another of the mover's):
                # the pending move had been released (4.7), and the lifts since were his.
                touches = self.ply.touches
                mark = self.suspended_touches
                self.ply.touches = touches[:mark]
                facts.extend(
                    self.record_move(suspended.move, suspended.revision, CompletedBy.RELEASE, now)
                )
                self.ply.touches = touches[mark:]
        return facts

    def _mate_in_breach(
        self, raised: list[alerts.Alert], ending: judge.Ending
    ) -> tuple[list[alerts.Alert], judge.Ending | None]:
        """2018 5.1.1: a checkmate made in breach of Article 4 does not end the game by itself.

        Its alerts say so, and the result is the arbiter's to set; 1997 5.1(a) asks only for
        a legal move, which such a move is.
        """
        if not self.edition.mate_needs_article_4 or not any(
            alert.kind in alerts.ARTICLE_4 for alert in raised
        ):
            return raised, ending
        edition = self.edition
        marked = [
            alerts.mate_in_breach(edition, alert) if alert.kind in alerts.ARTICLE_4 else alert
            for alert in raised
        ]
        return marked, None

    def _after_record(self, color: chess.Color, by: CompletedBy, *, await_press: bool) -> None:
        """A new ply begins: the irregularities of the last are over."""
        self.judged = None
        self.suspended = None
        self.moved_on_reported = False
        if self.unpressed == color:
            self.unpressed = None
        completed = by is CompletedBy.CLOCK or self.pressed_for == color
        running = await_press and by is not CompletedBy.CLOCK and self.clock.running
        self.pressed_for = None
        self.turn.recorded(
            color, differs=bool(self.diff), completed=completed, clock_running=running
        )

    def take_back(self) -> chess.Move:
        """Take the last recorded move back: it was only part of what the player did."""
        prev = self.prev
        assert prev is not None
        recheck = self.diff.union(prev.changed)
        self.board.pop()
        self.san.pop()
        self.squares = prev.game
        self.diff = {sq for sq in recheck if self.physical[sq] != self.squares[sq]}
        self.ply.touches = prev.touches + self.ply.touches
        self.prev = None
        self.turn.taken_back(bool(self.diff))
        return prev.move

    def prev_board(self) -> chess.Board:
        """The position before the last recorded move (while it may be revised)."""
        prev = self.prev
        assert prev is not None
        if prev.board is None:
            prev.board = self.board.copy(stack=1)
            prev.board.pop()
        return prev.board

    def restart(self, board: chess.Board, squares: list[chess.Piece | None]) -> None:
        """Go on from ``board``, a position no legal move reaches (an illegal move stood)."""
        self.history.append(self.earlier_part(board))
        self.board = board
        self.san = []
        self.start_fen = board.fen()
        self.squares = list(squares)
        self.diff = {sq for sq in chess.SQUARES if self.physical[sq] != self.squares[sq]}
        touches = self.ply.touches
        self.reset_turn()
        self.ply.touches = [t for t in touches if t.piece.color == board.turn]
        self.turn.stood(bool(self.diff))

    def earlier_part(self, stood: chess.Board) -> EarlierPart:
        """The game so far, ended by the illegal move that left ``stood``."""
        irregular = self.turn.irregular
        assert irregular is not None
        assert irregular.stood is not None
        move = irregular.stood.move
        return EarlierPart(
            start_fen=self.start_fen,
            moves=self.moves(),
            illegal_move=None if move is None else move.uci(),
            color=irregular.offender,
            fen=stood.fen(),
        )

    def moves(self) -> tuple[tuple[str, str], ...]:
        """(UCI, SAN) of the moves recorded since the start position."""
        return tuple(
            (move.uci(), san) for move, san in zip(self.board.move_stack, self.san, strict=True)
        )

    def identify(self, square: chess.Square, occupant: Occupant) -> chess.Piece:
        """The piece put on ``square`` (player's frame): as sensed, or inferred if unknown."""
        if isinstance(occupant, chess.Piece):
            self.inferred.discard(square)
            return occupant
        self.inferred.add(square)
        return self.infer(square)

    def infer(self, square: chess.Square) -> chess.Piece:
        """The piece an occupancy-only board put on ``square``: the one the move needs.

        The candidates are the pieces in hand (lifted this ply, their squares still empty; the
        last lifted first), then those of the squares that read empty where the game has a
        piece (lifted unseen, before a reconnect or a restart). The side to move's come first,
        and of them the first that can go to ``square`` (or was lifted from it). A pawn of the
        side to move reaching its last rank becomes a queen: a promotion the board cannot sense,
        assumed (the move says so) until an arbiter corrects it. With no candidate: the piece
        the game has there, else a pawn of the side to move.
        """
        turn = self.board.turn
        lifted = self.ply.lifted
        candidates = [
            (sq, piece) for sq, (piece, _) in reversed(lifted.items()) if self.physical[sq] is None
        ]
        candidates += [
            (sq, was)
            for sq in self.diff
            if (was := self.squares[sq]) is not None
            and self.physical[sq] is None
            and sq not in lifted
        ]
        own = [(sq, piece) for sq, piece in candidates if piece.color == turn]
        if not own:
            if candidates:
                return candidates[0][1]
            return self.squares[square] or chess.Piece(chess.PAWN, turn)
        _, piece = next(
            (c for c in own if c[0] == square or self._reaches(c[0], c[1], square)), own[0]
        )
        if piece.piece_type == chess.PAWN and chess.square_rank(square) == (7 if turn else 0):
            return chess.Piece(chess.QUEEN, turn)
        return piece

    def _reaches(self, origin: chess.Square, piece: chess.Piece, square: chess.Square) -> bool:
        """Whether ``piece`` may go from ``origin`` to ``square`` in the game (pseudo-legally)."""
        last = chess.square_rank(square) == (7 if piece.color == chess.WHITE else 0)
        promotion = chess.QUEEN if piece.piece_type == chess.PAWN and last else None
        return self.board.is_pseudo_legal(chess.Move(origin, square, promotion))

    def mover(self, candidate: Candidate) -> chess.Color:
        """Whose move ``candidate`` is."""
        return (not self.board.turn) if candidate.revision else self.board.turn

    # -- what the arbiter is told ----------------------------------------------------------

    def raise_alert(self, alert: alerts.Alert, now: float) -> AlertRaised:
        """Number ``alert``, keep it open in the game, and return it as a fact."""
        self.alert_ids += 1
        raised = AlertRaised(
            kind=alert.kind,
            article=alert.article,
            ply=self.board.ply() + 1 if alert.ply is None else alert.ply,
            color=alert.color,
            message=alert.message,
            details=alert.details,
            at=now,
            id=self.alert_ids,
        )
        self.alerts.append(raised)
        return raised

    def set_result(self, result: str, reason: str, article: str, now: float) -> GameEnded:
        """End the game (the Laws, or an arbiter's decision, a resignation, an agreed draw)."""
        self.candidate = None
        ended = GameEnded(result=result, reason=reason, article=article, at=now)
        self.turn.ended(ended)
        return ended

    @property
    def result(self) -> GameEnded | None:
        """How the game ended, if it did."""
        return self.turn.result


_PLACES_KEPT = 8
"""Changes kept per square: more than a line of moves made before the engine's eyes makes there."""


def _same_squares(move: chess.Move | None, other: chess.Move) -> bool:
    return move is not None and (move.from_square, move.to_square) == (
        other.from_square,
        other.to_square,
    )


def _replay_san(board: chess.Board) -> list[str]:
    replay = board.root()
    sans: list[str] = []
    for move in board.move_stack:
        sans.append(replay.san(move))
        replay.push(move)
    return sans


def _squares_of(move: chess.Move, board: chess.Board) -> set[chess.Square]:
    return {sq for sq, _ in positions.move_changes(board, move)} | {move.to_square}
