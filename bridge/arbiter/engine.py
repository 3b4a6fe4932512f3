"""The arbiter engine: physical events and time in, game facts out.

``Arbiter`` is the public face of the arbiter: it takes sensor events, clock readings and board
readings (``feed``), the board's memory after a reconnect (``recover``), arbiters' decisions
(``set_game``, ``set_result``, ``claim_draw``, ``ack_alert``) and the time, and returns the
facts they establish. The states the game goes through and the one table of their transitions
are in ``state`` (read its theory of operation first); the state itself is ``game.Game``.

What this module decides is how the board is read between two moves:

* A sensor event updates the physical board and the squares where it differs from the game;
  the lift or place is a touch (``touch.Ply``). Then the board is read: if it shows exactly one
  legal move (``positions.find_move``), that move is *released* (4.7) and recorded at once -
  unless its piece may only be passing over the square (``positions.is_ambiguous``: a slide,
  a pawn's first step, a king on its way to castle, the rook of a castling): then it is a
  *candidate*, recorded when the board has stayed so for the *dwell* time, at once when the
  mover presses the clock (6.7), or when the opponent starts touching pieces - the opponent
  lifting the very piece of the candidate to capture it included: lifted, it is remembered for
  one more event (*suspended*), and an opponent's touch then confirms it.
* While the last move is revisable (``REVISABLE``, ``AWAITING_PRESS``), a board that shows
  another legal move from the position before it records that move for the same ply instead.
* A board nothing explains is left to the hands, to the press (``irregular``), or, on a
  clockless board, judged once left still for ``illegal_after`` seconds.
* Several pieces off in one scan were knocked (``bursts``): a ``displaced_pieces`` alert, no
  obligation. Both kings at rest on the centre squares, nothing else in hand, for the dwell
  time, is the DGT broadcast convention for a result (a king passing a centre square is not at
  rest).

Boards that sense occupancy only report a piece put down as UNKNOWN: the engine takes the piece
the move needs (``game.Game.infer``). A pawn reaching its last rank is taken as a queen, the
promotion assumed (the move says ``promotion_assumed``) until an arbiter corrects it; it waits
for the dwell, since the pawn itself may be on the square for a moment before the new piece.

Time is never read: every entry point takes ``now`` (seconds, any monotonic origin) and
``next_deadline()`` says when ``handle_timer(now)`` must be called, as aioquic does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, assert_never

import chess
import msgspec

from bridge.arbiter import alerts, judge, positions, rules, touch, watching
from bridge.arbiter.bursts import DEFAULT_SAME_SCAN, Knocks
from bridge.arbiter.centre import CentreKings
from bridge.arbiter.clock import Clock
from bridge.arbiter.facts import (
    AlertRaised,
    ClockChanged,
    ClockPressed,
    ClockTimes,
    CompletedBy,
    Fact,
    GameEnded,
    TouchReported,
)
from bridge.arbiter.game import Candidate, EarlierPart, Game, Trail
from bridge.arbiter.hands import Hands
from bridge.arbiter.irregular import Irregularities
from bridge.arbiter.recovery import MISMATCH_AFTER, Recovery
from bridge.arbiter.state import State
from drivers.events import (
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    ClockButton,
    ClockReading,
    ClockSide,
    FrameDropped,
    Occupant,
    SquareEmptied,
    SquareOccupied,
)
from drivers.link import RecoveredStep, StoredPress

__all__ = [
    "DEFAULT_DWELL",
    "DEFAULT_FLICKER",
    "MISMATCH_AFTER",
    "REPLAY_STEP",
    "Arbiter",
    "EngineConfig",
    "GameSnapshot",
]

DEFAULT_DWELL: Final = 0.4
"""Seconds a piece must rest on a square before an ambiguous legal move counts as released.

Why 0.4 s: a DGT board scans all 64 squares every 200-250 ms, so a piece slid across a square is
reported there for at most about one scan before that square is reported empty again. People slide
faster than a square per scan; a piece that is still on the square after more than one and a half
scans has been let go. Shorter risks phantom moves on a slow slide; longer only delays moves that
the clock press completes anyway. Bluetooth boards scan at half speed: use 0.8 s there.
"""

REPLAY_STEP: Final = 0.3
"""Engine time between replayed stored changes: slower than flicker, quicker than the dwell."""

DEFAULT_FLICKER: Final = 0.15
"""A square that reads empty and then its piece again within this many seconds flickered.

A deliberate lift and put-back takes a hand at least a third of a second; a badly placed piece
on a DGT board can read empty for a single scan (about 0.2 s at the scan rate, less when the
reading is between two scans).
"""


class EngineConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Tunable behaviour of the engine."""

    dwell: float = DEFAULT_DWELL
    white_side: ClockSide | None = None
    """Which clock side is White's; ``None``: inferred from the clock running before move 1."""
    rules: rules.Edition = rules.DEFAULT
    flicker: float = DEFAULT_FLICKER
    illegal_after: float = 10.0
    """Boards without a clock: an unexplained position left still this long completes the move."""
    same_scan: float = DEFAULT_SAME_SCAN
    """Sensor events closer than this were read in one scan: simultaneous (``bursts``)."""
    scan: float = 0.0
    """Seconds between two readings of a board that reads itself whole at a slow pace (a
    Certabo: about 1 s); 0 for boards that report each change as it comes (``bursts``)."""


class GameSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The state a retained ``game`` topic shows."""

    fen: str
    start_fen: str
    moves: tuple[tuple[str, str], ...]
    turn: chess.Color
    clock: ClockTimes | None
    result: GameEnded | None
    alerts: tuple[AlertRaised, ...]
    claimable: tuple[str, ...]
    rotated: bool
    illegal_moves: tuple[int, int]
    """Illegal moves so far by (White, Black)."""
    earlier: tuple[EarlierPart, ...] = ()
    """The game before each illegal move that stood; ``start_fen`` is the position it left."""


class Arbiter:
    """Judges lifts, places and clock presses as an arbiter would; see the module docstring."""

    def __init__(
        self, config: EngineConfig | None = None, board: chess.Board | None = None
    ) -> None:
        self.config: Final = config or EngineConfig()
        self.edition = self.config.rules
        self._clock = Clock(self.config.white_side)
        start = board if board is not None else chess.Board()
        timing = {"same_scan": self.config.same_scan, "dwell": self.config.dwell}
        self._game = Game(self.edition, self._clock, start, **timing)
        self._recovery = Recovery(self._game, self.config.dwell, scan=self.config.scan)
        self._irregularities = Irregularities(self._game, self._recovery)
        self._hands = Hands(self._game, scan=self.config.scan)
        self._knocks = Knocks(
            self._game, self.config.same_scan, self.config.flicker, scan=self.config.scan
        )
        self._centre = CentreKings(self._game, self.config.dwell)

    # -- the game, as the arbiter's commands and the snapshot see it ----------------------------

    @property
    def board(self) -> chess.Board:
        """The game: the moves recorded so far (the position they lead to)."""
        return self._game.board

    @property
    def state(self) -> State:
        """Where the game stands between two moves (``state``)."""
        return self._game.turn.state

    @property
    def result(self) -> GameEnded | None:
        """How the game ended, if it did."""
        return self._game.result

    @property
    def alerts(self) -> list[AlertRaised]:
        """The alerts still open."""
        return self._game.alerts

    @property
    def history(self) -> list[EarlierPart]:
        """The game before each illegal move that stood."""
        return self._game.history

    @property
    def illegal_counts(self) -> dict[chess.Color, int]:
        """Illegal moves so far by colour."""
        return self._game.illegal_counts

    @property
    def start_fen(self) -> str:
        """The position the game (or its part since an illegal move stood) started from."""
        return self._game.start_fen

    @property
    def rotated(self) -> bool:
        """The board was set up from Black's side (7.1 b): its squares are turned round."""
        return self._game.rotated

    @property
    def white_side(self) -> ClockSide | None:
        """The clock side that is White's, once configured or inferred."""
        return self._clock.white_side

    def set_game(self, board: chess.Board, *, keep_counts: bool = False) -> None:
        """Start judging from ``board`` (with its move stack), e.g. after an arbiter's correction.

        The physical board, the clock and the orientation are kept; the result, the alerts, the
        earlier parts of the game and, unless ``keep_counts``, the illegal-move counts are
        cleared.
        """
        self._game.set(board, keep_counts=keep_counts)
        self._recovery.settled()
        self._knocks.due = None
        self._centre.reset()

    def reconstruct(self, line: Sequence[chess.Move], now: float) -> list[Fact]:
        """Moves an arbiter says were played while nobody listened, legal in turn from the game:
        recorded as ``reconstructed``, in order. A board nothing explained is settled: the game
        is judged from the position they leave. The players may have gone on meanwhile: a board
        that one line of legal moves from there explains is followed (recorded as read off the
        board); else it is the players' to put right."""
        return self._recovery.arbiters_line(tuple(line), now)

    def snapshot(self) -> GameSnapshot:
        """The game as a retained ``game`` topic shows it."""
        game = self._game
        return GameSnapshot(
            fen=game.board.fen(),
            start_fen=game.start_fen,
            moves=game.moves(),
            turn=game.board.turn,
            clock=self._clock.times(),
            result=game.result,
            alerts=tuple(game.alerts),
            claimable=judge.claimable(game.board) if game.result is None else (),
            rotated=game.rotated,
            illegal_moves=(game.illegal_counts[chess.WHITE], game.illegal_counts[chess.BLACK]),
            earlier=tuple(game.history),
        )

    def differing(self) -> frozenset[chess.Square]:
        """The squares (player's frame) where the board differs from the game now."""
        return frozenset(self._game.diff)

    def physical(self) -> list[chess.Piece | None]:
        """What the sensors say stands on each square now (player's frame)."""
        return list(self._game.physical)

    def clock_times(self) -> ClockTimes | None:
        """Remaining times by colour, if a clock is connected and its sides are known."""
        return self._clock.times()

    def last_seen(self) -> list[Occupant | None]:
        """The board as the engine last saw it, in the board's own frame (for its memory)."""
        seen: list[Occupant | None] = list(self._game.physical)
        return seen[::-1] if self._game.rotated else seen

    def set_result(self, result: str, reason: str, article: str, now: float) -> GameEnded:
        """End the game (an arbiter's decision, a resignation, an agreed draw)."""
        self._centre.due = None
        return self._game.set_result(result, reason, article, now)

    def ack_alert(self, alert_id: int) -> bool:
        """Close an open alert; false if no open alert has that id."""
        open_alerts = self._game.alerts
        for i, alert in enumerate(open_alerts):
            if alert.id == alert_id:
                del open_alerts[i]
                return True
        return False

    def claim_draw(
        self, move: chess.Move | None, now: float
    ) -> tuple[GameEnded | None, AlertRaised | None]:
        """Judge a draw claim by the player having the move (9.2, 9.3), on the game's history.

        With ``move``, the claim is for the position that move is about to produce (9.2 a,
        9.3 a). A correct claim ends the game; an incorrect one gives an ``incorrect_claim``
        alert carrying the edition's penalty (9.5 b) and the game goes on.
        """
        ending = judge.draw_claimed(self.board, move, self.edition)
        if ending is None:
            alert = alerts.incorrect_claim(self.edition, self.board.turn, move)
            return None, self._game.raise_alert(alert, now)
        return self.set_result(ending.result, ending.reason, ending.article, now), None

    # -- events and time ----------------------------------------------------------------------

    def feed(self, event: BoardEvent, now: float) -> list[Fact]:
        """Take one physical event; return the facts it establishes."""
        match event:
            case ClockReading():
                return self._on_clock(event, now)
            case SquareOccupied():
                square = self._frame(event.square)
                piece = self._game.identify(square, event.piece)
                return self._on_square(square, piece, now, event.at)
            case SquareEmptied():
                square = self._frame(event.square)
                self._game.inferred.discard(square)
                return self._on_square(square, None, now, event.at)
            case BoardSnapshot():
                return self._recovery.on_snapshot(event, now)
            case BoardInfo() | ClockButton() | FrameDropped():
                return []
            case _:
                assert_never(event)

    def next_deadline(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None``."""
        game = self._game
        due: float | None = None
        if game.candidate is not None:
            due = game.candidate.deadline
        else:
            due = self._recovery.due()
            if game.diff and self._irregularities.still_due():
                still = game.last_change + self.config.illegal_after
                due = still if due is None else min(due, still)
        for other in (self._knocks.due, self._centre.due):
            if other is not None and (due is None or other < due):
                due = other
        return due

    def handle_timer(self, now: float) -> list[Fact]:
        """Fire what is due: a candidate's dwell, a knock's alert, kings at rest, a still board."""
        game = self._game
        facts = self._knocks.report(now)
        cand = game.candidate
        if cand is not None and now >= cand.deadline:
            game.candidate = None
            facts.extend(self._record(cand, CompletedBy.RELEASE, now))
            if game.diff and game.result is None and game.turn.unexplained is None:
                # The other hand may have made its move meanwhile (two hands on the board).
                facts.extend(self._evaluate(now))
        if game.candidate is None:
            facts.extend(self._recovery.fire(now))
        facts.extend(self._centre.fire(now))
        if self._irregularities.still_due() and now >= game.last_change + self.config.illegal_after:
            game.still_reported = True
            facts.extend(self._irregularities.judge_still(now))
        return facts

    def recover(
        self,
        changes: Sequence[RecoveredStep] | None,
        snapshot: BoardSnapshot | None,
        now: float,
    ) -> list[Fact]:
        """Moves made while nobody listened, read from the board's memory, then its full board.

        ``changes`` are the board's own record of what was done since it looked like
        :meth:`last_seen` (board frame, oldest first; ``None`` or empty: no usable record):
        square changes and clock presses. They are replayed in order, ``REPLAY_STEP`` apart in
        engine time and ending at ``now``, so touches, releases and Article 4 are judged as if
        live; the moves they make are recorded as reconstructed. A stored press completes the
        presser's move, as a live one does, but is not published (its times are not known). Then
        ``snapshot`` is taken as the truth (moves may be read off it, see ``recovery``).
        """
        game = self._game
        facts: list[Fact] = []
        game.replaying = True
        try:
            steps = changes or ()
            t = now - len(steps) * REPLAY_STEP
            for step in steps:
                t += REPLAY_STEP
                if isinstance(step, StoredPress):
                    facts.extend(self._recovery.stored_press(step.side, t))
                    continue
                square, occupant = step
                framed = self._frame(square)
                if occupant is None:
                    game.inferred.discard(framed)
                    facts.extend(self._on_square(framed, None, t, now))
                else:
                    facts.extend(
                        self._on_square(framed, self._game.identify(framed, occupant), t, now)
                    )
            facts.extend(self._recovery.replayed(now, follow=bool(steps)))
        finally:
            game.replaying = False
        if snapshot is not None:
            facts.extend(self._recovery.on_snapshot(snapshot, now))
        return facts

    # -- sensor events ------------------------------------------------------------------------

    def _frame(self, square: chess.Square) -> chess.Square:
        return 63 - square if self._game.rotated else square

    def _on_square(
        self, square: chess.Square, piece: chess.Piece | None, now: float, at: float
    ) -> list[Fact]:
        game = self._game
        old = game.physical[square]
        if old == piece:
            return []
        facts = self._knocks.report(now)
        cand, suspended = game.candidate, game.suspended
        game.suspended = None
        if cand is not None or suspended is not None:
            facts.extend(game.release_pending(square, old, piece, cand, suspended, now))
        self._sense(square, piece, now)
        mismatch = game.turn.unexplained is not None
        if not mismatch:
            self._knocks.feed(square, old, piece, now)
        facts.append(self._touch(square, old, piece, now, at))
        if game.result is not None:
            return facts
        if mismatch:
            # The board contradicts the game: nothing is judged until a line of moves explains
            # it (one legal move, judged at once as any; or a line once the board rests), it
            # is put back, or an arbiter settles it (``recovery``).
            if (
                piece is None
                or game.trail.bases != [()]
                or not positions.find_move(game.board, game.squares, game.physical, game.diff)
            ):
                return facts + self._recovery.changed(now, lifted=piece is None)
            self._recovery.settled()
        pending = game.candidate
        if (
            pending is None
            or pending is not cand
            or not self._hands.beside(pending, square, old, piece)
        ):
            facts.extend(self._evaluate(now, piece, lifted=piece is None))
        self._centre.watch(now, old, piece)
        return facts

    def _sense(self, square: chess.Square, piece: chess.Piece | None, now: float) -> None:
        """``square`` reads ``piece`` now: where the board differs from the game (and from the
        position an illegal move left, while it may stand)."""
        game = self._game
        game.physical[square] = piece
        game.trail.within |= chess.BB_SQUARES[square]
        game.seen(square, piece, now)
        if piece is not None and square in game.carried:
            game.carried -= {square}  # the piece held is put down: the hand is free
        if piece == game.squares[square]:
            game.diff.discard(square)
        else:
            game.diff.add(square)
        game.turn.board_changed(bool(game.diff))
        irregular = game.turn.irregular
        if irregular is not None and irregular.stood is not None:
            stood = irregular.stood
            if piece == stood.squares[square]:
                stood.diff.discard(square)
            else:
                stood.diff.add(square)
        game.last_change = now
        game.still_reported = False

    def _touch(
        self,
        square: chess.Square,
        old: chess.Piece | None,
        piece: chess.Piece | None,
        now: float,
        at: float,
    ) -> TouchReported:
        """The lift or place, with its chess meaning (Article 4: ``touch``)."""
        game = self._game
        if piece is None:
            assert old is not None
            irregular = game.turn.irregular
            excuse = touch.excuse(
                square,
                old,
                game.board,
                game.squares,
                over=game.result is not None,
                awaiting=game.turn.awaiting,
                offender=None if irregular is None else irregular.offender,
                knocked=self._knocks.knocking(now),
                displaced=game.displaced,
            )
            return game.ply.lift(square, old, now, at, board=game.board, excuse=excuse)
        return game.ply.place(
            square,
            old,
            piece,
            now,
            at,
            board=game.board,
            game=game.squares,
            flicker=self.config.flicker,
            edition=self.edition,
        )

    # -- reading the board --------------------------------------------------------------------

    def _evaluate(
        self, now: float, placed: chess.Piece | None = None, *, lifted: bool = False
    ) -> list[Fact]:
        """Decide what the current physical board means; see the module docstring.

        ``lifted``: the event was a lift. With only pieces in hand (every square that differs
        from the game reads empty), nothing is asked: every move puts a piece down.
        """
        game = self._game
        turn = game.turn
        game.candidate = None
        game.trail.search_at = None
        if not game.diff:
            game.trail = Trail.watched((), now)
            game.places.clear()
            game.displaced.clear()
            game.judged = None
            game.moved_on_reported = False
            turn.explained()
            if turn.irregular is not None and turn.irregular.judged != tuple(game.physical):
                turn.restored()  # the position before the irregularity is back
            return []
        if lifted and turn.irregular is None and all(game.physical[sq] is None for sq in game.diff):
            return []  # only pieces in the hand
        move, held = self._hands.read()
        revision = False
        if move is None:
            if turn.irregular is not None and turn.irregular.stood is not None:
                stands = self._irregularities.reply_to_illegal(now)
                if stands:
                    return stands + self._evaluate(now)
            if turn.revisable and turn.irregular is None:
                move = self._find_revision()
                revision = move is not None
            if move is None:
                return self._nothing_read(now, placed)
        turn.explained()
        board = game.prev_board() if revision else game.board
        # A promotion the board cannot see may still be the pawn, about to be swapped for the
        # new piece: it waits for the dwell like a piece that may slide on.
        if positions.is_ambiguous(board, move) or (
            move.promotion and move.to_square in game.inferred
        ):
            game.candidate = Candidate(move, now + self.config.dwell, revision)
            return []
        shown = not (revision or held)
        return game.record_move(move, revision, CompletedBy.RELEASE, now, shown=shown)

    def _nothing_read(self, now: float, placed: chess.Piece | None) -> list[Fact]:
        """No move explains the board: the last mover's piece moved on after his press; else the
        hands are still at work, and the board is followed once it rests (``recovery``: a line
        of moves, two hands at work)."""
        game = self._game
        facts: list[Fact] = []
        if (
            placed is not None
            and placed.color != game.board.turn
            and game.prev is not None
            and not game.turn.revisable
        ):
            facts = self._irregularities.moved_after_press(placed.color, now)
        if not facts and game.turn.irregular is None:
            self._recovery.rest(now)
        return facts

    def _find_revision(self) -> chess.Move | None:
        """Another legal move from the position before the last one that explains the board."""
        game = self._game
        prev = game.prev
        assert prev is not None
        # Only the last mover revises: nothing of the side to move is put anywhere but back on
        # its own square (a victim put back), and a piece of the last mover stands somewhere new
        # (every move puts a piece down: a lift alone, such as a victim taken off, is never a
        # revision).
        mover = not game.board.turn
        placed = [game.physical[sq] for sq in game.diff]
        if not any(p is not None and p.color == mover for p in placed):
            return None
        if any(
            p is not None and p.color != mover and p != prev.game[sq]
            for sq, p in zip(game.diff, placed, strict=True)
        ):
            return None
        squares = game.diff.union(prev.changed)
        diff = {sq for sq in squares if game.physical[sq] != prev.game[sq]}
        board = game.prev_board()
        move = positions.find_move(board, prev.game, game.physical, diff)
        # Not when a piece was seen put down since that the revision leaves out: the side to
        # move's reply made and taken back meanwhile, say (a board read once a second).
        since = game.trail.since
        if move is None or not watching.accounts(board, (move,), game.places, since, game.dwell):
            return None
        return move

    def _record(self, cand: Candidate, by: CompletedBy, now: float) -> list[Fact]:
        return self._game.record_move(cand.move, cand.revision, by, now)

    # -- the clock ----------------------------------------------------------------------------

    def _on_clock(self, reading: ClockReading, now: float) -> list[Fact]:
        game = self._game
        update = self._clock.update(reading, game.board.turn, bool(game.board.move_stack))
        if update.quiet and self._knocks.due is None:
            return []  # the clock's message while a player thinks: only the times went on
        facts = self._knocks.report(now)
        if update.disconnected:
            facts.append(ClockChanged(state="disconnected", clock=None, at=reading.at))
        if update.pressed is not None:
            facts.extend(self._on_press(update.pressed, reading, now))
        if update.state is not None:
            facts.append(ClockChanged(state=update.state, clock=self._clock.times(), at=reading.at))
        if update.flagged is not None and game.result is None:
            ending = judge.flag_ending(game.board, update.flagged, self.edition)
            facts.append(ClockChanged(state="flag", clock=self._clock.times(), at=reading.at))
            facts.append(self.set_result(ending.result, ending.reason, ending.article, now))
        return facts

    def _on_press(self, pressed: ClockSide, reading: ClockReading, now: float) -> list[Fact]:
        game = self._game
        by = self._clock.color_of(pressed)
        facts: list[Fact] = []
        mismatch = game.turn.unexplained is not None
        if by is not None and game.result is None:
            if mismatch:
                # The board contradicts the game: the press asks what it shows, at once.
                facts.extend(self._recovery.reconstruct(now, pressed=by))
            else:
                facts.extend(self._irregularities.judge_press(by, now))
        completes: int | None = None
        if (
            by is not None
            and game.board.move_stack
            and game.board.turn != by
            and game.turn.unexplained is None
        ):
            completes = game.board.ply()
        times = self._clock.times() or ClockTimes(white=0, black=0, running=None)
        facts.append(ClockPressed(by=by, clock=times, completes_ply=completes, at=reading.at))
        return facts
