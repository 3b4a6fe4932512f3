"""The arbiter engine: physical events and time in, game facts out.

Theory of operation
-------------------
The engine holds two boards. The *game* is a python-chess ``Board``: the moves recorded so far.
The *physical* board is what the sensors say stands on each square now. The engine keeps the set
of squares where the two differ, updated in O(1) on each sensor event. A legal move changes two
to four squares, so only then is there a question to ask, and ``positions.find_move`` answers it
from those few squares with python-chess deciding legality: no move generation per event.

States, and what moves the engine between them:

* **settled** - the physical board equals the game position. Lifts and places start a move.
* **moving** - the board differs from the game position and matches no legal move: a piece is
  in the hand, a capture is half done, a king is on g1 with the rook still on h1. Nothing is
  emitted but touches.
* **candidate** - the board equals the position after exactly one legal move. If that move is
  *unambiguous* (no other legal move of the same piece goes further along the same line, and it
  is not the rook half of a legal castling) the move is recorded at once: that is the release of
  Art. 4.7 with nothing left to wait for. Otherwise the piece may only be passing over the square
  (a slide: the board reports every square it crosses) and the move is recorded when the board
  has stayed so for the *dwell* time, or at once when the mover presses the clock (the press
  completes the move, Art. 6.7), or when the opponent starts touching pieces - the opponent
  lifting the very piece of the candidate to capture it included: lifted, it is remembered for
  one more event, and an opponent's touch then confirms it (4.7: it had been released).
* **revisable** - after a move is recorded and until the mover presses the clock (without a
  clock: until the opponent's next move is recorded), the board may still turn into another
  legal move from the previous position (the king of a rook-first castling; a piece released and
  then moved on; a capture taken back and another move made). The board is the truth: the engine
  records the new move for the same ply, marked as superseding the first, with a
  ``castling_rook_first``, ``released_piece_moved`` or (2018) 4.4.4 ``touch_move`` alert. After
  the press nothing is revised (1997 6.7 a, 2018 6.2.1): the last mover moving his piece on is a
  ``displaced_pieces`` irregularity, and the game keeps the move he pressed.
* **press** - every press is judged, by ``press``: the whole board against the game. After his
  own move the mover's press checks that the board is the game after it (a second move in the
  same turn is an illegal move, if a hand made it: a legal move, put down more than one scan
  after its lift - a piece that fell anywhere else is displaced; a castling whose rook was
  released first and is illegal is one; a released move taken back is a 4.7 breach). With no
  move recorded, the press of the player having the move completes what the board shows: a move
  of his pieces read off the board, legal or not (the alert names it), a legal move with pieces
  displaced besides or left unfinished (castling with the king alone, en passant with the victim
  still there: the move stands, the rest is the mover's displacement), or a press without a
  move. These searches run only at a press, and only if the board differs.
* **irregular** - after an illegal move (or a press without one) the engine waits for the
  position before the irregularity, or a legal move from it, and resumes. Where the edition lets
  an unclaimed illegal move stand (1997 blitz C.3 and rapid B.5; 2018 rapid and blitz A.4.2),
  the opponent's legal reply from the position on the board makes it stand: the game goes on
  from that position (a new start position; the earlier part is kept in ``history``) with an
  ``illegal_move_stood`` alert, and the reply is recorded. There, the illegal move that would
  lose (7.5.5) is no different: the engine never declares that loss, which needs a claim.
* **over** - a result was reached; later lifts and places are not moves. Both kings at rest on
  the centre squares, with nothing else in hand, for the dwell time, is the DGT broadcast
  convention for a result, not a pair of moves (a king passing a centre square is not at rest).

Touches (Article 4). On a sensor board, touching is lifting. Every lift by the player having the
move is kept for the ply; when the move is recorded, ``judge.touch_breach`` checks it against
4.3 (the first own piece touched that can move must move; an opponent's piece touched that can
be captured must be captured) and 4.4 (rook touched before king, then castling; 2018 4.4.1: king
then rook obliges castling on that side if legal; 4.4.4: the promoted piece is the one that
first touched the square). A lift of the last mover's own piece before he has pressed the clock
is his, not his opponent's. A piece that reads empty and then the same again within ``flicker``
seconds is sensor noise, not a touch. Lifts read in one scan of the board (``bursts``) are
simultaneous: neither is first. Several pieces off in one scan were knocked, not touched: a
``displaced_pieces`` alert, no obligation. A piece put back on its square is an adjustment,
legal only if announced (j'adoube, 4.2), which a board cannot hear: the alert says so.

Boards that sense occupancy only (a DGT Pegasus; a Certabo tag not learnt) report a piece put
down as UNKNOWN. The engine takes the piece the move needs (``_infer``): the one in hand, or the
one whose square reads empty where the game has a piece, the side to move's first and of those
one that can go there. A pawn reaching its last rank is taken as a queen: the promotion is
assumed (the move says ``promotion_assumed``) until an arbiter corrects it, and waits for the
dwell, since the pawn itself may be on the square for a moment before the new piece. Touches and
releases are judged as on any board: a lift is a lift. A full reading of such a board (a
reconnect) is explained by the one line of one or two legal plies that leaves the same squares
occupied (``_read_unknown``); when none or several do, nothing is recorded and the reading is
unexplained, as on any board.

Time is never read: every entry point takes ``now`` (seconds, any monotonic origin) and
``next_deadline()`` says when ``handle_timer(now)`` must be called, as aioquic does.

The clock: a DGT clock reports which side's lever is up; that side's clock runs. A change of the
high side is a press by the player whose side went down. Which side is White's is set in the
config or inferred: before the first move, the clock that runs is White's (Art. 6.5).

Orientation: if the first full reading of the board shows the start position turned round
(board set up from Black's side, Art. 7.1 b), all squares are rotated from then on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, assert_never

import chess
import msgspec

from bridge.arbiter import alerts, judge, positions, rules
from bridge.arbiter.bursts import DEFAULT_SAME_SCAN, Bursts
from bridge.arbiter.facts import (
    AlertRaised,
    ClockChanged,
    ClockPressed,
    ClockTimes,
    CompletedBy,
    Fact,
    GameEnded,
    MovePlayed,
    TouchAction,
    TouchReported,
)
from bridge.arbiter.irregular import (
    Candidate,
    EarlierPart,
    Irregularities,
    Ply,
    Previous,
    Stood,
)
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
    UnknownPiece,
)
from drivers.link import RecoveredStep, StoredPress

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

MISMATCH_AFTER: Final = 3.0
"""Seconds a full board reading that nothing explains must stay so before ``board_mismatch``.

A board read at a restart or a reconnect can catch a piece in the hand; a moment later it is put
down and the board is explained (a move, or two made while nobody listened). A press by the
player having the move judges it at once.
"""

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


class Arbiter(Irregularities):
    """Judges lifts, places and clock presses as an arbiter would; see the module docstring."""

    # Slots: an instance of more than 30 attributes gets a plain dict in CPython (its key-sharing
    # dict holds 30), where every ``self.x`` of an event is a hashed lookup; a slot is an index.
    # The state shared with ``Irregularities`` is in its slots.
    __slots__ = (
        "_bursts",
        "_centre_at",
        "_clock",
        "_inferred",
        "_kings_central",
        "_knock_at",
        "_last_change",
        "_replaying",
        "_seen_board",
        "_still_reported",
        "_suspended_touches",
        "_times",
        "_white_side",
        "config",
        "rotated",
    )

    def __init__(
        self, config: EngineConfig | None = None, board: chess.Board | None = None
    ) -> None:
        self.config: Final = config or EngineConfig()
        self.edition = self.config.rules
        self.rotated = False
        self._clock: ClockReading | None = None
        self._times: tuple[ClockReading, ClockTimes] | None = None
        """The times of the last clock reading asked for (``clock_times``); cleared when the
        sides are set."""
        self._white_side = self.config.white_side
        self._seen_board = False
        self._last_change = 0.0
        """When the board last changed (kept by ``set_game``: a correction is not a change)."""
        start = board if board is not None else chess.Board()
        self._physical: list[chess.Piece | None] = positions.squares_of(start)
        self._inferred: set[chess.Square] = set()
        """Squares whose piece the board reported as UNKNOWN: ``_physical`` holds the inference."""
        self.illegal_counts: dict[chess.Color, int] = {chess.WHITE: 0, chess.BLACK: 0}
        self._bursts = Bursts(self.config.same_scan)
        self._same_scan = self.config.same_scan
        self.set_game(start)

    # -- public API -------------------------------------------------------------------------

    def set_game(self, board: chess.Board, *, keep_counts: bool = False) -> None:
        """Start judging from ``board`` (with its move stack), e.g. after an arbiter's correction.

        The physical board, the clock and the orientation are kept; the result, the alerts, the
        earlier parts of the game and, unless ``keep_counts``, the illegal-move counts are
        cleared.
        """
        self.board = board.copy()
        self._san = _replay_san(self.board)
        self.start_fen = self.board.root().fen()
        self.result: GameEnded | None = None
        self.alerts: list[AlertRaised] = []
        self.history: list[EarlierPart] = []
        if not keep_counts:
            self.illegal_counts = {chess.WHITE: 0, chess.BLACK: 0}
        self._alert_ids = 0
        self._game: list[chess.Piece | None] = positions.squares_of(self.board)
        for sq in self._inferred:
            # A piece the board cannot identify is what the game now says it is (an arbiter's
            # correction of an assumed promotion, a takeback).
            if self._physical[sq] is not None and self._game[sq] is not None:
                self._physical[sq] = self._game[sq]
        self._diff = {sq for sq in chess.SQUARES if self._physical[sq] != self._game[sq]}
        self._reset_turn()
        # A board that differs from a game just set (a takeback, a correction) is the players'
        # to put right: it is judged again only after they touch it.
        self._still_reported = True
        self._replaying = False
        self._unexplained: float | None = None
        """Since when the board, last read whole, is explained by nothing (``MISMATCH_AFTER``)."""
        self._knock_at: float | None = None
        self._centre_at: float | None = None
        self._kings_central = False
        self._suspended_touches = 0
        """How many touches of the ply came before the suspended candidate's piece was lifted."""

    def feed(self, event: BoardEvent, now: float) -> list[Fact]:
        """Take one physical event; return the facts it establishes."""
        # The three frequent kinds first, without the patterns below.
        if isinstance(event, ClockReading):
            return self._on_clock(event, now)
        if isinstance(event, SquareOccupied):
            square = 63 - event.square if self.rotated else event.square
            piece = event.piece
            if isinstance(piece, chess.Piece):  # ``_identify``, written out
                self._inferred.discard(square)
                placed = piece
            else:  # an occupancy-only board
                self._inferred.add(square)
                placed = self._infer(square)
            return self._on_square(square, placed, now, event.at)
        if isinstance(event, SquareEmptied):
            square = 63 - event.square if self.rotated else event.square
            self._inferred.discard(square)
            return self._on_square(square, None, now, event.at)
        match event:
            case BoardSnapshot():
                return self._on_snapshot(event, now)
            case BoardInfo() | ClockButton() | FrameDropped():
                return []
            case _:
                assert_never(event)

    def next_deadline(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None``."""
        due: float | None = None
        if self._candidate is not None:
            due = self._candidate.deadline
        elif self._unexplained is not None:
            due = self._unexplained + MISMATCH_AFTER
        elif self._diff and self._watch_still():
            due = self._last_change + self.config.illegal_after
        if self._knock_at is None and self._centre_at is None:
            return due  # the usual case: nothing else to wait for
        for other in (self._knock_at, self._centre_at):
            if other is not None and (due is None or other < due):
                due = other
        return due

    def handle_timer(self, now: float) -> list[Fact]:
        """Fire what is due: a candidate's dwell, a knock's alert, kings at rest, a still board."""
        facts = self._knock_due(now)
        cand = self._candidate
        if cand is not None and now >= cand.deadline:
            self._candidate = None
            facts.extend(self._record(cand, CompletedBy.RELEASE, now))
        if self._unexplained is not None and now >= self._unexplained + MISMATCH_AFTER:
            facts.append(self._mismatch(None, now))
        if self._centre_at is not None and now >= self._centre_at:
            self._centre_at = None
            facts.extend(self._kings_in_centre(now))
        if self._watch_still() and now >= self._last_change + self.config.illegal_after:
            self._still_reported = True
            facts.extend(self._judge_turn(self.board.turn, now, pressed=False))
        return facts

    def snapshot(self) -> GameSnapshot:
        """The game as a retained ``game`` topic shows it."""
        moves = tuple(
            (move.uci(), san) for move, san in zip(self.board.move_stack, self._san, strict=True)
        )
        return GameSnapshot(
            fen=self.board.fen(),
            start_fen=self.start_fen,
            moves=moves,
            turn=self.board.turn,
            clock=self.clock_times(),
            result=self.result,
            alerts=tuple(self.alerts),
            claimable=judge.claimable(self.board) if self.result is None else (),
            rotated=self.rotated,
            illegal_moves=(self.illegal_counts[chess.WHITE], self.illegal_counts[chess.BLACK]),
            earlier=tuple(self.history),
        )

    def differing(self) -> frozenset[chess.Square]:
        """The squares (player's frame) where the board differs from the game now."""
        return frozenset(self._diff)

    def physical(self) -> list[chess.Piece | None]:
        """What the sensors say stands on each square now (player's frame)."""
        return list(self._physical)

    @property
    def white_side(self) -> ClockSide | None:
        """The clock side that is White's, once configured or inferred."""
        return self._white_side

    def clock_times(self) -> ClockTimes | None:
        """Remaining times by colour, if a clock is connected and its sides are known."""
        reading = self._clock
        cached = self._times
        if cached is not None and cached[0] is reading:
            return cached[1]  # every move and press between two clock messages asks again
        white_side = self._white_side
        if reading is None or not reading.connected or white_side is None:
            return None
        running: chess.Color | None = None
        if reading.running:
            running = reading.lever_high is white_side
        if white_side is ClockSide.LEFT:
            times = ClockTimes(white=reading.left, black=reading.right, running=running)
        else:
            times = ClockTimes(white=reading.right, black=reading.left, running=running)
        self._times = (reading, times)
        return times

    def last_seen(self) -> list[Occupant | None]:
        """The board as the engine last saw it, in the board's own frame (for its memory)."""
        seen: list[Occupant | None] = list(self._physical)
        return seen[::-1] if self.rotated else seen

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
        ``snapshot`` is taken as the truth (up to two more plies may be read off it; a reading
        nothing explains is judged when it stays so, see ``MISMATCH_AFTER``).
        """
        facts: list[Fact] = []
        self._replaying = True
        try:
            steps = changes or ()
            t = now - len(steps) * REPLAY_STEP
            for step in steps:
                t += REPLAY_STEP
                if isinstance(step, StoredPress):
                    facts.extend(self._stored_press(step.side, t))
                    continue
                square, occupant = step
                framed = self._frame(square)
                if occupant is None:
                    self._inferred.discard(framed)
                    piece = None
                else:
                    piece = self._identify(framed, occupant)
                facts.extend(self._on_square(framed, piece, t, now))
            cand = self._candidate
            if cand is not None:
                self._candidate = None
                facts.extend(self._record(cand, CompletedBy.RECONSTRUCTED, now))
        finally:
            self._replaying = False
        if snapshot is not None:
            facts.extend(self._on_snapshot(snapshot, now))
        return facts

    def set_result(self, result: str, reason: str, article: str, now: float) -> GameEnded:
        """End the game (an arbiter's decision, a resignation, an agreed draw)."""
        self._candidate = None
        self._centre_at = None
        self.result = GameEnded(result=result, reason=reason, article=article, at=now)
        return self.result

    def ack_alert(self, alert_id: int) -> bool:
        """Close an open alert; false if no open alert has that id."""
        for i, alert in enumerate(self.alerts):
            if alert.id == alert_id:
                del self.alerts[i]
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
        edition = self.edition
        board = self.board.copy()
        if move is not None:
            if not board.is_legal(move):
                raise ValueError(f"the intended move {move.uci()} is not legal in {board.fen()}")
            board.push(move)
        if board.is_repetition(3):
            ending = (
                "threefold repetition",
                edition.threefold,
            )
        elif board.halfmove_clock >= 100:
            ending = ("50 moves", edition.fifty_moves)
        else:
            alert = self._raise(alerts.incorrect_claim(edition, self.board.turn, move), now)
            return None, alert
        return self.set_result("1/2-1/2", f"{ending[0]} claimed", ending[1], now), None

    # -- sensor events ----------------------------------------------------------------------

    def _frame(self, square: chess.Square) -> chess.Square:
        return 63 - square if self.rotated else square

    def _reset_turn(self) -> None:
        """Forget everything about the move in progress (a new game, or one that restarts)."""
        self._prev = None
        self._candidate = None
        self._suspended = None
        self._ply = Ply()
        self._irregular = None
        self._judged = None
        self._awaiting_press = None
        self._unpressed = None
        self._completed = False
        self._pressed_for = None
        self._displaced = set()
        self._moved_on_reported = False

    def _on_square(
        self, square: chess.Square, piece: chess.Piece | None, now: float, at: float
    ) -> list[Fact]:
        # Pieces are compared by identity first (the engine's are the shared ones of
        # ``positions.PIECES``), then by kind and colour: python-chess's ``__eq__`` is a Python
        # call.
        old = self._physical[square]
        if old is piece or (
            old is not None
            and piece is not None
            and old.piece_type == piece.piece_type
            and old.color == piece.color
        ):
            return []
        facts = self._knock_due(now) if self._knock_at is not None else []
        cand, suspended = self._candidate, self._suspended
        self._suspended = None
        if cand is not None or suspended is not None:
            facts.extend(self._pending(square, old, piece, cand, suspended, now))
        self._physical[square] = piece  # ``_set``, written out
        was = self._game[square]
        if was is piece or (
            was is not None
            and piece is not None
            and was.piece_type == piece.piece_type
            and was.color == piece.color
        ):
            self._diff.discard(square)
        else:
            self._diff.add(square)
        irregular = self._irregular
        if irregular is not None and irregular.stood is not None:
            self._set_stood(irregular.stood, square, piece)
        self._last_change = now
        self._still_reported = False
        if self._bursts.feed(square, old, piece, now, self.board):
            self._on_knock()
        facts.append(
            self._lift(square, old, now, at)
            if piece is None
            else self._place(square, old, piece, now, at)
        )
        if self.result is not None:
            return facts
        facts.extend(self._evaluate(now, piece, lifted=piece is None))
        if (
            self._kings_central
            or (old is not None and old.piece_type == chess.KING)
            or (piece is not None and piece.piece_type == chess.KING)
        ):
            self._watch_centre(now)
        return facts

    def _identify(self, square: chess.Square, occupant: Occupant) -> chess.Piece:
        """The piece put on ``square`` (player's frame): as sensed, or inferred if unknown."""
        if isinstance(occupant, chess.Piece):
            self._inferred.discard(square)
            return occupant
        self._inferred.add(square)
        return self._infer(square)

    def _infer(self, square: chess.Square) -> chess.Piece:
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
        physical, game = self._physical, self._game
        lifted = self._ply.lifted
        # The candidates in order, kept as the first of them and those of the side to move: a
        # loop each, no list of them all (this is on every place of such a board).
        first: chess.Piece | None = None
        own: list[tuple[chess.Square, chess.Piece]] = []
        for sq, (piece, _) in reversed(lifted.items()):
            if physical[sq] is None:
                if first is None:
                    first = piece
                if piece.color == turn:
                    own.append((sq, piece))
        for sq in self._diff:
            was = game[sq]
            if was is not None and physical[sq] is None and sq not in lifted:
                if first is None:
                    first = was
                if was.color == turn:
                    own.append((sq, was))
        if not own:
            if first is not None:
                return first
            return game[square] or chess.Piece(chess.PAWN, turn)
        if len(own) == 1:
            _, piece = own[0]  # the piece whether or not it can go there: no legality to ask
        else:
            _, piece = next(
                (c for c in own if c[0] == square or self._reaches(c[0], c[1], square)), own[0]
            )
        if piece.piece_type == chess.PAWN and square >> 3 == (7 if turn else 0):  # its last rank
            return chess.Piece(chess.QUEEN, turn)
        return piece

    def _reaches(self, origin: chess.Square, piece: chess.Piece, square: chess.Square) -> bool:
        """Whether ``piece`` may go from ``origin`` to ``square`` in the game (pseudo-legally)."""
        last = chess.square_rank(square) == (7 if piece.color == chess.WHITE else 0)
        promotion = chess.QUEEN if piece.piece_type == chess.PAWN and last else None
        return self.board.is_pseudo_legal(chess.Move(origin, square, promotion))

    def _pending(
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
        toucher = (piece if piece is not None else old).color  # type: ignore[union-attr]
        opponent = toucher != self.board.turn
        if cand is not None and not cand.revision:
            if opponent and square not in _squares_of(cand.move, self.board):
                # The opponent starts touching: the candidate had been released (4.7).
                released, self._candidate = cand, None
                facts.extend(self._record(released, CompletedBy.RELEASE, now))
            elif piece is None and square == cand.move.to_square:
                self._suspended = cand  # sliding on, or taken by the opponent: later events say
                self._suspended_touches = len(self._ply.touches)
        elif suspended is not None and opponent:
            if piece is None:
                # An opponent's piece lifted: his capture of the moved piece, or the mover taking
                # a victim on his way. What is put down next tells.
                self._suspended = suspended
            else:
                # The opponent puts a piece down: the pending move had been released (4.7), and
                # the lifts since it was suspended were his.
                touches = self._ply.touches
                mark = self._suspended_touches
                self._ply.touches = touches[:mark]
                facts.extend(self._record(suspended, CompletedBy.RELEASE, now))
                self._ply.touches = touches[mark:]
        return facts

    def _on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        sensed = list(event.squares)
        if not self._seen_board and not self.board.move_stack:
            self._seen_board = True
            start = [self.board.piece_at(sq) for sq in chess.SQUARES]
            if sensed != start and sensed[::-1] == start:
                self.rotated = True
        if self.rotated:
            sensed = sensed[::-1]
        line: tuple[chess.Move, ...] | None = None
        self._inferred = {sq for sq in chess.SQUARES if isinstance(sensed[sq], UnknownPiece)}
        if self._inferred:
            line, squares = self._read_unknown(sensed)
        else:  # every piece identified
            squares = [occupant for occupant in sensed if not isinstance(occupant, UnknownPiece)]
        self._physical = squares
        self._diff = {sq for sq in chess.SQUARES if squares[sq] != self._game[sq]}
        stood = None if self._irregular is None else self._irregular.stood
        if stood is not None:
            stood.diff = {sq for sq in chess.SQUARES if squares[sq] != stood.squares[sq]}
        self._candidate = None
        self._suspended = None
        self._last_change = now
        if not self._diff or self.result is not None:
            self._irregular = None
            return []
        if self._inferred:
            if line is None:
                self._unexplained = now
                return []
            return self._record_line(line, now)
        return self._reconstruct(now)

    def _read_unknown(
        self, sensed: Sequence[Occupant | None]
    ) -> tuple[tuple[chess.Move, ...] | None, list[chess.Piece | None]]:
        """A full reading with pieces the board cannot identify: what stands where, and how.

        The reading fits a position when the same squares are occupied and every piece the
        board did identify is that position's. If the game fits, the unknown pieces are the
        game's. Otherwise every line of one or two legal plies is tried (a promotion onto a
        square read as unknown only to a queen, see ``_infer``): if exactly one fits, its moves
        were made while nobody listened, and the pieces are that position's. If none or several
        fit, nothing is recorded (a capture by the same piece on either of two squares leaves
        the same squares occupied): the unknown pieces are the game's where it has one, a pawn
        of the side to move elsewhere, and the board stays unexplained.
        """
        board = self.board
        occupied = 0
        known: list[tuple[chess.Square, chess.Piece]] = []
        for sq, occupant in enumerate(sensed):
            if occupant is not None:
                occupied |= chess.BB_SQUARES[sq]
                if isinstance(occupant, chess.Piece):
                    known.append((sq, occupant))

        def fits() -> bool:
            return board.occupied == occupied and all(board.piece_at(sq) == p for sq, p in known)

        def plies() -> list[chess.Move]:
            return [
                m
                for m in board.legal_moves
                if m.promotion in (None, chess.QUEEN) or m.to_square not in self._inferred
            ]

        lines: list[tuple[chess.Move, ...]] = []
        if not fits():
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
        turn = board.turn
        if len(lines) == 1:
            for move in lines[0]:
                board.push(move)
            squares = [board.piece_at(sq) for sq in chess.SQUARES]
            for _ in lines[0]:
                board.pop()
            return lines[0], squares
        line = () if not lines and fits() else None
        squares = [
            None
            if occupant is None
            else occupant
            if isinstance(occupant, chess.Piece)
            else self._game[sq] or chess.Piece(chess.PAWN, turn)
            for sq, occupant in enumerate(sensed)
        ]
        return line, squares

    def _reconstruct(self, now: float) -> list[Fact]:
        """Moves made while nobody listened: one or two plies that alone explain the board.

        A board nothing explains may be a move in the hand: it is judged when it stays so.
        """
        facts = self._explain(now)
        if facts is None:
            self._unexplained = now
            return []
        return facts

    def _explain(self, now: float) -> list[Fact] | None:
        """Record the one or two plies that alone explain the board; ``None`` if none do.

        Whether their players pressed the clock is not known: no press is awaited for them.
        """
        found = positions.find_move(self.board, self._game, self._physical, self._diff)
        line: tuple[chess.Move, ...] | None = (found,) if found is not None else None
        if line is None and len(self._diff) <= 8:
            line = self._two_plies()
        if line is None:
            return None
        return self._record_line(line, now)

    def _record_line(self, line: tuple[chess.Move, ...], now: float) -> list[Fact]:
        """Record moves made while nobody listened (whether they were pressed is not known)."""
        self._unexplained = None
        facts: list[Fact] = []
        for move in line:
            facts.extend(self._record(Candidate(move, now, False), CompletedBy.RECONSTRUCTED, now))
            self._awaiting_press = None
        return facts

    def _mismatch(self, color: chess.Color | None, now: float) -> AlertRaised:
        """The board, read whole, stays unexplained: the arbiter restores the position."""
        self._unexplained = None
        self._judged = tuple(self._physical)
        squares = judge.differing(self._game, self._physical, self._diff)
        return self._raise(alerts.mismatch(color, squares, self.board.fen(), reconnect=True), now)

    def _stored_press(self, side: ClockSide, now: float) -> list[Fact]:
        """A press the board's memory recorded: it completes the presser's move."""
        if self._white_side is None:
            return []
        by = chess.WHITE if side is self._white_side else chess.BLACK
        cand = self._candidate
        facts: list[Fact] = []
        if cand is not None and by == self._mover(cand):
            self._candidate = None
            facts = self._record(cand, CompletedBy.CLOCK, now)
            self._awaiting_press = None
        elif by == self._awaiting_press:
            self._awaiting_press = None
            self._completed = True
        return facts

    def _two_plies(self) -> tuple[chess.Move, chess.Move] | None:
        solutions: list[tuple[chess.Move, chess.Move]] = []
        for first in self.board.legal_moves:
            game = list(self._game)
            for square, piece in positions.move_changes(self.board, first):
                game[square] = piece
            self.board.push(first)
            diff = {sq for sq in chess.SQUARES if self._physical[sq] != game[sq]}
            second = positions.find_move(self.board, game, self._physical, diff)
            self.board.pop()
            if second is not None:
                solutions.append((first, second))
                if len(solutions) > 1:
                    return None
        return solutions[0] if solutions else None

    @staticmethod
    def _set_stood(stood: Stood, square: chess.Square, piece: chess.Piece | None) -> None:
        """A square changed while an illegal move may stand: where it differs from that."""
        if piece == stood.squares[square]:
            stood.diff.discard(square)
        else:
            stood.diff.add(square)

    def _lift(
        self, square: chess.Square, piece: chess.Piece | None, now: float, at: float
    ) -> TouchReported:
        """The touch of a piece lifted off ``square``: kept for the ply (Article 4) unless it
        is not a touch of the player having the move."""
        assert piece is not None
        board = self.board
        turn = board.turn
        ply = 2 * board.fullmove_number - 1 + (turn == chess.BLACK)  # board.ply() + 1
        current = self._ply
        current.squares.append(square)
        current.lifted[square] = (piece, now)
        name = _KINDS[piece.piece_type]
        irregular = self._irregular
        if self.result is not None:
            meaning = f"{name} lifted after the end of the game"
        elif piece.color != turn and self._awaiting_press == piece.color:
            meaning = f"{name} lifted by the player who just moved, before pressing the clock"
        elif irregular is not None and piece.color == irregular.offender != turn:
            meaning = f"{name} lifted by the player who must re-establish the position"
        elif self._bursts.current is not None and self._bursts.knocking(now):
            meaning = f"{_name(piece)} knocked off its square with others in one scan: not a touch"
        elif square in self._displaced and self._game[square] != piece:
            meaning = f"{_name(piece)} lifted from a square reported displaced: putting it right"
        else:
            current.touches.append(judge.Touch(square=square, piece=piece, at=now))
            if piece.color == turn:
                meaning = _OWN_TOUCHED[piece.piece_type]
            else:
                meaning = _OPPONENTS_TOUCHED[piece.piece_type]
        return TouchReported(
            action=TouchAction.LIFT, square=square, piece=piece, meaning=meaning, ply=ply, at=at
        )

    def _place(
        self, square: chess.Square, old: chess.Piece | None, new: chess.Piece, now: float, at: float
    ) -> TouchReported:
        """The touch of a piece put on ``square``: a place, a flicker, or a piece put back."""
        board = self.board
        ply = 2 * board.fullmove_number - 1 + (board.turn == chess.BLACK)  # board.ply() + 1
        current = self._ply
        current.squares.append(square)
        lifted = current.lifted.pop(square, None)
        if lifted is not None and lifted[0] == new:
            held = now - lifted[1]
            if held <= self.config.flicker:
                since = lifted[1]  # only that lift: an earlier touch of the square still counts
                touches = current.touches
                current.touches = [t for t in touches if t.square != square or t.at < since]
                meaning = f"{_name(new)} read again after {held:.2f} s: sensor flicker, not a touch"
            else:
                meaning = (
                    f"{_name(new)} put back on its square: an adjustment, legal only if j'adoube "
                    f"was announced (Art. {self.edition.adjust})"
                )
        else:
            meaning = _PLACED[new.color][new.piece_type]
            if old is not None:
                meaning += _REPLACING[old.color][old.piece_type]
            current.placed[square] = now
            if (square < 8 or square >= 56) and self._is_new_promotion_piece(square, new):
                current.promoted[square] = new.piece_type
        return TouchReported(
            action=TouchAction.PLACE, square=square, piece=new, meaning=meaning, ply=ply, at=at
        )

    def _is_new_promotion_piece(self, square: chess.Square, piece: chess.Piece) -> bool:
        """A piece from off the board put on a square where a pawn of its colour may promote."""
        last, seventh = (7, 6) if piece.color == chess.WHITE else (0, 1)
        if piece.piece_type in (chess.PAWN, chess.KING) or chess.square_rank(square) != last:
            return False
        if square in self._ply.promoted or any(p == piece for p, _ in self._ply.lifted.values()):
            return False  # not the first, or a piece of the board in the hand
        pawn = chess.Piece(chess.PAWN, piece.color)
        file = chess.square_file(square)
        return any(
            self._game[chess.square(f, seventh)] == pawn
            for f in (file - 1, file, file + 1)
            if 0 <= f < 8
        )

    # -- knocks and the kings in the centre ---------------------------------------------------

    def _on_knock(self) -> None:
        """Several pieces off in one scan: knocked, not touched (no Article 4 obligation)."""
        burst = self._bursts.current
        assert burst is not None
        squares = set(burst.before)
        self._ply.touches = [
            t for t in self._ply.touches if t.square not in squares or t.at < burst.start
        ]
        self._knock_at = burst.at + self.config.flicker

    def _knock_due(self, now: float) -> list[Fact]:
        """The alert of a knock, once its burst is over and flicker is ruled out."""
        due = self._knock_at
        burst = self._bursts.current
        if due is None or burst is None:
            return []
        if 0.0 <= now - burst.at < self._bursts.window:
            self._knock_at = burst.at + self.config.flicker  # the burst goes on
            return []
        if now < due:
            return []
        self._knock_at = None
        squares = sorted(sq for sq, piece in burst.before.items() if self._physical[sq] != piece)
        if not squares or self.result is not None:
            return []
        self._displaced.update(squares)
        color = self._awaiting_press if self._awaiting_press is not None else self.board.turn
        alert = alerts.displaced(self.edition, color, squares, self.board.fen(), knocked=True)
        return [self._raise(alert, now)]

    def _watch_centre(self, now: float) -> None:
        """Both kings on the centre squares with nothing else in hand: at rest from now on?"""
        self._centre_at = None
        physical = self._physical
        if sum(1 for sq in _CENTRE if _is_king(physical[sq])) < 2:
            self._kings_central = False  # the usual case: a king moved, not to the centre
            return
        self._kings_central = judge.kings_in_centre(physical) is not None
        if self.result is not None or not self._kings_central:
            return
        kings = {
            sq for sq in (chess.D4, chess.D5, chess.E4, chess.E5) if _is_king(self._physical[sq])
        }
        kings.update(
            sq
            for sq in (self.board.king(chess.WHITE), self.board.king(chess.BLACK))
            if sq is not None
        )
        if self._diff <= kings:
            self._centre_at = now + self.config.dwell

    def _kings_in_centre(self, now: float) -> list[Fact]:
        # The four centre squares touch each other: no legal position has both kings there.
        ending = judge.kings_in_centre(self._physical)
        if ending is None or self.result is not None:
            return []
        self._candidate = None
        return [self.set_result(ending.result, ending.reason, ending.article, now)]

    # -- matching ---------------------------------------------------------------------------

    def _evaluate(
        self, now: float, placed: chess.Piece | None = None, *, lifted: bool = False
    ) -> list[Fact]:
        """Decide what the current physical board means; see the module docstring.

        ``lifted``: the event was a lift. With only pieces in hand (every square that differs
        from the game reads empty), nothing is asked: every move puts a piece down.
        """
        self._candidate = None
        irregular = self._irregular
        if not self._diff:
            self._displaced.clear()
            self._judged = None
            self._moved_on_reported = False
            self._unexplained = None
            if irregular is not None and irregular.judged != tuple(self._physical):
                self._irregular = None  # the position before the irregularity is back
            return []
        if lifted and irregular is None and self._unexplained is None:
            physical = self._physical
            if all(physical[sq] is None for sq in self._diff):
                return []
        revision = False
        board = self.board
        move = positions.find_move(board, self._game, self._physical, self._diff)
        if move is None:
            if irregular is not None and irregular.stood is not None:
                stands = self._reply_to_illegal(irregular, now)
                if stands:
                    return stands
            if self._prev is not None and irregular is None and not self._completed:
                move = self._find_revision()
                revision = move is not None
            if move is None:
                if self._unexplained is not None:
                    return self._reconstruct(now)
                if placed is not None and placed.color != board.turn and self._completed:
                    return self._moved_after_press(placed.color, now)
                return []
        self._unexplained = None
        if revision:
            ambiguous = positions.is_ambiguous(self._prev_board(), move)
        else:
            ambiguous = positions.is_ambiguous(board, move)
        # A promotion the board cannot see may still be the pawn, about to be swapped for the
        # new piece: it waits for the dwell like a piece that may slide on.
        if ambiguous or (move.promotion and move.to_square in self._inferred):
            self._candidate = Candidate(move, now + self.config.dwell, revision)
            return []
        return self._record_move(move, revision, CompletedBy.RELEASE, now, shown=not revision)

    def _find_revision(self) -> chess.Move | None:
        """Another legal move from the position before the last one that explains the board."""
        prev = self._prev
        assert prev is not None
        # Only the last mover revises: nothing of the side to move is put anywhere but back on
        # its own square (a victim put back), and a piece of the last mover stands somewhere new
        # (every move puts a piece down: a lift alone, such as a victim taken off, is never a
        # revision). Cheap filters before any legality.
        mover = not self.board.turn
        placed_any = False
        for sq in self._diff:
            placed = self._physical[sq]
            if placed is not None:
                if placed.color != mover:
                    if placed != prev.game[sq]:
                        return None
                else:
                    placed_any = True
        if not placed_any:
            return None
        squares = self._diff.union(prev.changed)
        diff = {sq for sq in squares if self._physical[sq] != prev.game[sq]}
        if not 2 <= len(diff) <= 4:
            return None
        return positions.find_move(self._prev_board(), prev.game, self._physical, diff)

    def _prev_board(self) -> chess.Board:
        prev = self._prev
        assert prev is not None
        if prev.board is None:
            prev.board = self.board.copy(stack=1)
            prev.board.pop()
        return prev.board

    def _record(
        self, cand: Candidate, by: CompletedBy, now: float, *, shown: bool = False
    ) -> list[Fact]:
        """Record a candidate move (or the revision of the last move) in the game."""
        return self._record_move(cand.move, cand.revision, by, now, shown=shown)

    def _record_move(
        self,
        move: chess.Move,
        revision: bool,
        by: CompletedBy,
        now: float,
        *,
        shown: bool = False,
    ) -> list[Fact]:
        """Record ``move`` (or, with ``revision``, the move instead of the last one) in the game.

        ``shown``: the board was just read as the position after this move and nothing else
        (``find_move`` matched every square that differs), so once it is recorded no square
        differs.
        """
        board = self.board
        recheck = set(self._diff)
        superseded: Previous | None = None
        if revision:
            superseded = self._prev
            assert superseded is not None
            recheck.update(superseded.changed)
            board.pop()
            self._san.pop()
            self._game = superseded.game
        game = self._game
        color = board.turn
        if self._replaying:
            by = CompletedBy.RECONSTRUCTED
        alerts = self._judge_move(move, superseded, now)
        changes = positions.move_changes(board, move)
        changed = tuple(square for square, _ in changes)
        touches = self._ply.touches
        if superseded is not None:
            touches = superseded.touches + touches
        self._prev = Previous(game[:], changed, move, touches)
        san = board.san(move)
        board.push(move)
        self._san.append(san)
        for square, piece in changes:
            game[square] = piece
        if shown:
            self._diff = set()
        else:
            physical = self._physical
            self._diff = {sq for sq in (*recheck, *changed) if physical[sq] != game[sq]}
        touched = tuple(dict.fromkeys(self._ply.squares))
        self._ply = Ply()
        self._irregular = None
        self._judged = None
        self._suspended = None
        self._moved_on_reported = False
        self._completed = by is CompletedBy.CLOCK
        if self._unpressed == color:
            self._unpressed = None
        self._awaiting_press = None
        if self._pressed_for == color:
            self._completed = True  # his press came first, while a piece stood displaced
        elif by is not CompletedBy.CLOCK and self._clock_running():
            self._awaiting_press = color
        self._pressed_for = None
        facts: list[Fact] = [
            MovePlayed(
                ply=board.ply(),
                move=move,
                san=san,
                fen=board.fen(),
                color=color,
                touched=touched,
                completed_by=by,
                clock=self.clock_times(),
                supersedes=revision,
                promotion_assumed=move.promotion is not None and move.to_square in self._inferred,
                at=now,
            ),
            *alerts,
        ]
        ending = judge.ending_after_move(board, self.edition)
        if ending is not None:
            facts.append(self.set_result(ending.result, ending.reason, ending.article, now))
        return facts

    def _judge_move(
        self, move: chess.Move, superseded: Previous | None, now: float
    ) -> list[AlertRaised]:
        """Article 4 and 6.7 alerts for ``move``, about to be made on ``self.board``."""
        if superseded is not None:
            return self._judge_revision(move, superseded, now)
        board = self.board
        color = board.turn
        touches = self._ply.touches
        late = self._awaiting_press
        obliged = not judge.obliges_nothing(board, move, touches)
        if not obliged and not move.promotion and (late is None or late == color):
            return []  # the usual ply: nothing to judge
        ply = 2 * board.fullmove_number - 1 + (color == chess.BLACK)  # board.ply() + 1
        edition = self.edition
        raised: list[AlertRaised] = []
        if obliged:
            breach = judge.touch_breach(board, move, touches, edition, self.config.same_scan)
            if breach is not None:
                raised.append(self._raise(alerts.touch_breach(breach, move, color, ply), now))
        if move.promotion:
            chosen = self._ply.promoted.get(move.to_square)
            if chosen is not None and chosen != move.promotion:
                alert = alerts.promotion_changed(edition, move, chosen, color, ply)
                if alert is not None:
                    raised.append(self._raise(alert, now))
        if late is not None and late != color:
            self._unpressed = late
            raised.append(self._raise(alerts.clock_not_pressed(edition, late, ply - 1), now))
        return raised

    def _judge_revision(
        self, move: chess.Move, superseded: Previous, now: float
    ) -> list[AlertRaised]:
        """The alert of ``move`` made instead of ``superseded``'s, on ``self.board``."""
        board = self.board
        color = board.turn
        ply = 2 * board.fullmove_number - 1 + (color == chess.BLACK)  # board.ply() + 1
        edition = self.edition
        first = superseded.move
        if (first.from_square, first.to_square) == (move.from_square, move.to_square):
            # The same pawn, another piece: 2018 4.4.4 fixes the first one; 1997 does not.
            assert first.promotion is not None
            alert = alerts.promotion_changed(edition, move, first.promotion, color, ply)
        else:
            castling = board.is_castling(move)
            alert = alerts.revision(edition, first, move, color, ply, castling=castling)
        return [] if alert is None else [self._raise(alert, now)]

    def _watch_still(self) -> bool:
        """A clockless board with an unexplained position: judge it when left still.

        Asked after every event (``next_deadline``): the cheap tests first, and the arrival of a
        piece of the side to move (``judge.has_arrival``) written out.
        """
        if (
            not self._diff
            or self._candidate is not None
            or self._irregular is not None
            or self._still_reported
            or self.result is not None
        ):
            return False
        clock = self._clock
        if clock is not None and clock.connected:
            return False
        turn = self.board.turn
        game, physical = self._game, self._physical
        for sq in self._diff:
            placed = physical[sq]
            if placed is not None and placed.color == turn:
                was = game[sq]
                if was is None or was.color != turn:
                    return True
        return False

    # -- the clock --------------------------------------------------------------------------

    def _clock_running(self) -> bool:
        clock = self._clock
        return clock is not None and clock.connected and clock.running

    def _on_clock(self, reading: ClockReading, now: float) -> list[Fact]:
        prev = self._clock
        self._clock = reading
        if (
            prev is not None
            and reading.lever_high is prev.lever_high
            and reading.running == prev.running
            and reading.connected
            and prev.connected
            and reading.left_flag == prev.left_flag
            and reading.right_flag == prev.right_flag
            and self._knock_at is None
            and self._white_side is not None
        ):
            return []  # the clock's message while a player thinks: only the times went on
        facts = self._knock_due(now) if self._knock_at is not None else []
        if not reading.connected:
            if prev is not None and prev.connected:
                facts.append(ClockChanged(state="disconnected", clock=None, at=reading.at))
            return facts
        was_connected = prev is not None and prev.connected
        if self._white_side is None and reading.running:
            # The running clock is the player's having the move: White's before move 1 (6.5),
            # and on a game resumed after a restart, whoever is to move.
            side = reading.lever_high
            other = ClockSide.LEFT if side is ClockSide.RIGHT else ClockSide.RIGHT
            self._white_side = side if self.board.turn == chess.WHITE else other
            self._times = None
        if was_connected and prev is not None and reading.lever_high != prev.lever_high:
            facts.extend(self._on_press(prev.lever_high, reading, now))
        elif not was_connected or (prev is not None and prev.running != reading.running):
            state = "running" if reading.running else "stopped"
            facts.append(ClockChanged(state=state, clock=self.clock_times(), at=reading.at))
        facts.extend(self._flag(prev, reading, now))
        return facts

    def _flag(self, prev: ClockReading | None, reading: ClockReading, now: float) -> list[Fact]:
        if self.result is not None or self._white_side is None:
            return []
        left = reading.left_flag and not (prev is not None and prev.left_flag)
        right = reading.right_flag and not (prev is not None and prev.right_flag)
        if left == right:  # none, or both at once: which fell first is unknown (6.11)
            return []
        side = ClockSide.LEFT if left else ClockSide.RIGHT
        flagged = chess.WHITE if side is self._white_side else chess.BLACK
        ending = judge.flag_ending(self.board, flagged, self.edition)
        self._candidate = None
        return [
            ClockChanged(state="flag", clock=self.clock_times(), at=reading.at),
            self.set_result(ending.result, ending.reason, ending.article, now),
        ]

    def _on_press(self, pressed: ClockSide, reading: ClockReading, now: float) -> list[Fact]:
        if self._white_side is None and self.board.move_stack:
            # The clock was not running before move 1: the first press is White's.
            self._white_side = pressed
            self._times = None
        by: chess.Color | None = None
        if self._white_side is not None:
            by = chess.WHITE if pressed is self._white_side else chess.BLACK
        facts: list[Fact] = []
        if by is not None and self.result is None:
            facts.extend(self._judge_press(by, now))
        completes: int | None = None
        if by is not None and self.board.move_stack and self.board.turn != by:
            completes = self.board.ply()
        facts.append(
            ClockPressed(
                by=by,
                clock=self.clock_times() or ClockTimes(white=0, black=0, running=None),
                completes_ply=completes,
                at=reading.at,
            )
        )
        return facts

    def _mover(self, cand: Candidate) -> chess.Color:
        return (not self.board.turn) if cand.revision else self.board.turn


def _replay_san(board: chess.Board) -> list[str]:
    replay = board.root()
    sans: list[str] = []
    for move in board.move_stack:
        sans.append(replay.san(move))
        replay.push(move)
    return sans


def _squares_of(move: chess.Move, board: chess.Board) -> set[chess.Square]:
    return {sq for sq, _ in positions.move_changes(board, move)} | {move.to_square}


_CENTRE: Final = (chess.D4, chess.D5, chess.E4, chess.E5)


def _is_king(piece: chess.Piece | None) -> bool:
    return piece is not None and piece.piece_type == chess.KING


def _name(piece: chess.Piece) -> str:
    return f"{_color(piece.color)} {chess.piece_name(piece.piece_type)}"


def _color(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


# What a touch means, written once per kind of piece (``_lift``, ``_place``).
_KINDS: Final = ("", *(chess.piece_name(pt) for pt in chess.PIECE_TYPES))
_OWN_TOUCHED: Final = tuple(f"own {name} touched by the player having the move" for name in _KINDS)
_OPPONENTS_TOUCHED: Final = tuple(
    f"opponent's {name} touched by the player having the move" for name in _KINDS
)
_PLACED: Final = tuple(
    ("", *(f"{_color(color)} {_KINDS[pt]} placed" for pt in chess.PIECE_TYPES))
    for color in chess.COLORS[::-1]
)
"""``[color][piece_type]``: black first (``chess.BLACK`` is 0)."""
_REPLACING: Final = tuple(
    ("", *(f", replacing the {_color(color)} {_KINDS[pt]}" for pt in chess.PIECE_TYPES))
    for color in chess.COLORS[::-1]
)
