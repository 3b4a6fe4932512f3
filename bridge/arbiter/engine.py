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
  completes the move, Art. 6.7), or when the opponent starts touching pieces. Any other change
  before that cancels the candidate.
* **revisable** - after a move is recorded and until the opponent's next move is, the board may
  still turn into another legal move from the previous position (the king of a rook-first
  castling; a piece released and then moved on). The board is the truth: the engine records the
  new move for the same ply, marked as superseding the first, with a ``castling_rook_first`` or
  ``released_piece_moved`` alert.
* **irregular** - the player having the move pressed the clock on a position no legal move
  explains (an illegal move, 7.4 / 7.5), or on the position before his move (a press without a
  move). The engine raises the alert and waits for the position before the irregularity, or a
  legal move from it, and resumes.
* **over** - a result was reached; later lifts and places are not moves. Both kings put on the
  centre squares is the DGT broadcast convention for a result, not a pair of moves.

Touches (Article 4). On a sensor board, touching is lifting. Every lift by the player having the
move is kept for the ply; when the move is recorded, ``judge.touch_breach`` checks it against
4.3 (the first own piece touched that can move must move; an opponent's piece touched that can
be captured must be captured) and 4.4 (rook touched before king, then castling). A lift of the
last mover's own piece before he has pressed the clock is his, not his opponent's. A piece
that reads empty and then the same again within ``flicker`` seconds is sensor noise, not a
touch. A piece put back on its square is an adjustment, legal only if announced (j'adoube,
4.2), which a board cannot hear: the alert says so.

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

from bridge.arbiter import judge, positions, rules
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


class _Candidate(msgspec.Struct):
    move: chess.Move
    deadline: float
    revision: bool


class _Previous(msgspec.Struct):
    """The position before the last recorded move, while that move can still be revised."""

    game: list[chess.Piece | None]
    changed: tuple[chess.Square, ...]
    move: chess.Move
    board: chess.Board | None = None
    """The position itself, made only when a revision is looked for (most plies need none)."""


class _Ply(msgspec.Struct):
    """What happened on the board since the last recorded move."""

    squares: list[chess.Square] = msgspec.field(default_factory=list)
    touches: list[judge.Touch] = msgspec.field(default_factory=list)
    lifted: dict[chess.Square, tuple[chess.Piece, float]] = msgspec.field(default_factory=dict)


class Arbiter:
    """Judges lifts, places and clock presses as an arbiter would; see the module docstring."""

    def __init__(
        self, config: EngineConfig | None = None, board: chess.Board | None = None
    ) -> None:
        self.config: Final = config or EngineConfig()
        self.edition = self.config.rules
        self.rotated = False
        self._clock: ClockReading | None = None
        self._white_side = self.config.white_side
        self._seen_board = False
        self._last_change = 0.0
        """When the board last changed (kept by ``set_game``: a correction is not a change)."""
        start = board if board is not None else chess.Board()
        self._physical: list[chess.Piece | None] = [start.piece_at(sq) for sq in chess.SQUARES]
        self.illegal_counts: dict[chess.Color, int] = {chess.WHITE: 0, chess.BLACK: 0}
        self.set_game(start)

    # -- public API -------------------------------------------------------------------------

    def set_game(self, board: chess.Board, *, keep_counts: bool = False) -> None:
        """Start judging from ``board`` (with its move stack), e.g. after an arbiter's correction.

        The physical board, the clock and the orientation are kept; the result, the alerts and,
        unless ``keep_counts``, the illegal-move counts are cleared.
        """
        self.board = board.copy()
        self._san = _replay_san(self.board)
        self.start_fen = self.board.root().fen()
        self.result: GameEnded | None = None
        self.alerts: list[AlertRaised] = []
        if not keep_counts:
            self.illegal_counts = {chess.WHITE: 0, chess.BLACK: 0}
        self._alert_ids = 0
        self._game: list[chess.Piece | None] = [self.board.piece_at(sq) for sq in chess.SQUARES]
        self._ranks = [positions.rank_text(self._game, rank) for rank in range(8)]
        self._diff = {sq for sq in chess.SQUARES if self._physical[sq] != self._game[sq]}
        self._prev: _Previous | None = None
        self._candidate: _Candidate | None = None
        self._ply = _Ply()
        self._irregular = False
        self._awaiting_press: chess.Color | None = None
        self._still_reported = False
        self._replaying = False
        self._unexplained: float | None = None
        """Since when the board, last read whole, is explained by nothing (``MISMATCH_AFTER``)."""

    def feed(self, event: BoardEvent, now: float) -> list[Fact]:
        """Take one physical event; return the facts it establishes."""
        match event:
            case SquareEmptied(square=square):
                return self._on_square(self._frame(square), None, now, event.at)
            case SquareOccupied(square=square, piece=piece):
                square = self._frame(square)
                return self._on_square(square, self._identify(square, piece), now, event.at)
            case BoardSnapshot():
                return self._on_snapshot(event, now)
            case ClockReading():
                return self._on_clock(event, now)
            case BoardInfo() | ClockButton() | FrameDropped():
                return []
            case _:
                assert_never(event)

    def next_deadline(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None``."""
        if self._candidate is not None:
            return self._candidate.deadline
        if self._unexplained is not None:
            return self._unexplained + MISMATCH_AFTER
        if self._watch_still():
            return self._last_change + self.config.illegal_after
        return None

    def handle_timer(self, now: float) -> list[Fact]:
        """Complete a candidate whose dwell has passed; judge a board left still (no clock)."""
        cand = self._candidate
        if cand is not None:
            if now < cand.deadline:
                return []
            self._candidate = None
            return self._record(cand, CompletedBy.RELEASE, now)
        if self._unexplained is not None:
            if now < self._unexplained + MISMATCH_AFTER:
                return []
            return [self._mismatch(None, now)]
        if self._watch_still() and now >= self._last_change + self.config.illegal_after:
            self._still_reported = True
            return self._irregularity(self.board.turn, now, pressed=False)
        return []

    def snapshot(self) -> GameSnapshot:
        """The game as a retained ``game`` topic shows it."""
        moves = tuple(
            (move.uci(), san) for move, san in zip(self.board.move_stack, self._san, strict=True)
        )
        return GameSnapshot(
            fen=positions.fen(self.board, self._ranks),
            start_fen=self.start_fen,
            moves=moves,
            turn=self.board.turn,
            clock=self.clock_times(),
            result=self.result,
            alerts=tuple(self.alerts),
            claimable=judge.claimable(self.board) if self.result is None else (),
            rotated=self.rotated,
            illegal_moves=(self.illegal_counts[chess.WHITE], self.illegal_counts[chess.BLACK]),
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
        if reading is None or not reading.connected or self._white_side is None:
            return None
        white_left = self._white_side is ClockSide.LEFT
        running: chess.Color | None = None
        if reading.running:
            running = chess.WHITE if reading.lever_high is self._white_side else chess.BLACK
        return ClockTimes(
            white=reading.left if white_left else reading.right,
            black=reading.right if white_left else reading.left,
            running=running,
        )

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
                piece = None if occupant is None else self._identify(framed, occupant)
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
            alert = self._alert(
                "incorrect_claim",
                edition.incorrect_claim,
                self.board.turn,
                "draw claim found incorrect (no threefold repetition, no 50 moves): "
                + edition.claim_penalty_text,
                now,
                {"intended_move": None if move is None else move.uci()},
            )
            return None, alert
        return self.set_result("1/2-1/2", f"{ending[0]} claimed", ending[1], now), None

    # -- sensor events ----------------------------------------------------------------------

    def _frame(self, square: chess.Square) -> chess.Square:
        return 63 - square if self.rotated else square

    def _on_square(
        self, square: chess.Square, piece: chess.Piece | None, now: float, at: float
    ) -> list[Fact]:
        old = self._physical[square]
        if old == piece:
            return []
        facts: list[Fact] = []
        cand = self._candidate
        if cand is not None and not cand.revision:
            toucher = (old if old is not None else piece).color  # type: ignore[union-attr]
            if toucher != self.board.turn and square not in _squares_of(cand.move, self.board):
                # The opponent starts touching: the candidate had been released.
                self._candidate = None
                facts.extend(self._record(cand, CompletedBy.RELEASE, now))
        self._set(square, piece)
        self._last_change = now
        self._still_reported = False
        facts.append(self._touch(square, old, piece, now, at))
        if self.result is not None:
            return facts
        if piece is not None and piece.piece_type == chess.KING:
            ending = self._kings_in_centre(now)
            if ending:
                return facts + ending
        facts.extend(self._evaluate(now))
        return facts

    def _identify(self, square: chess.Square, occupant: Occupant) -> chess.Piece:
        """The piece on ``square`` (player's frame): as sensed, or inferred if unknown.

        A board that senses only occupancy cannot say which piece was put down. The piece is
        the one in hand: the last piece lifted this ply whose square is still empty, the side to
        move's first; with none in hand, the piece the game has there.
        """
        if isinstance(occupant, chess.Piece):
            return occupant
        in_hand = [
            piece for sq, (piece, _) in self._ply.lifted.items() if self._physical[sq] is None
        ]
        for piece in reversed(in_hand):
            if piece.color == self.board.turn:
                return piece
        if in_hand:
            return in_hand[-1]
        return self._game[square] or chess.Piece(chess.PAWN, self.board.turn)

    def _on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        sensed = list(event.squares)
        if not self._seen_board and not self.board.move_stack:
            self._seen_board = True
            start = [self.board.piece_at(sq) for sq in chess.SQUARES]
            if sensed != start and sensed[::-1] == start:
                self.rotated = True
        if self.rotated:
            sensed = sensed[::-1]
        squares = [
            None if occupant is None else self._identify(sq, occupant)
            for sq, occupant in zip(chess.SQUARES, sensed, strict=True)
        ]
        self._physical = squares
        self._diff = {sq for sq in chess.SQUARES if squares[sq] != self._game[sq]}
        self._candidate = None
        self._last_change = now
        if not self._diff or self.result is not None:
            self._irregular = False
            return []
        return self._reconstruct(now)

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
        self._unexplained = None
        facts: list[Fact] = []
        for move in line:
            facts.extend(self._record(_Candidate(move, now, False), CompletedBy.RECONSTRUCTED, now))
            self._awaiting_press = None
        return facts

    def _mismatch(self, color: chess.Color | None, now: float) -> AlertRaised:
        """The board, read whole, stays unexplained: the arbiter restores the position."""
        self._unexplained = None
        self._irregular = True
        squares = judge.differing(self._game, self._physical, self._diff)
        return self._alert(
            "board_mismatch",
            "",
            color,
            f"the board differs from the game on {', '.join(squares)}; no legal move or "
            "pair of moves explains it: restore the position of the game",
            now,
            {"squares": squares, "fen": self.board.fen()},
        )

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

    def _set(self, square: chess.Square, piece: chess.Piece | None) -> None:
        self._physical[square] = piece
        if piece == self._game[square]:
            self._diff.discard(square)
        else:
            self._diff.add(square)

    def _touch(
        self,
        square: chess.Square,
        old: chess.Piece | None,
        new: chess.Piece | None,
        now: float,
        at: float,
    ) -> TouchReported:
        ply = self.board.ply() + 1
        self._ply.squares.append(square)
        if new is None:
            assert old is not None
            meaning = self._lift(square, old, now)
            action = TouchAction.LIFT
            piece: chess.Piece | None = old
        else:
            meaning = self._place(square, old, new, now)
            action = TouchAction.PLACE
            piece = new
        return TouchReported(
            action=action, square=square, piece=piece, meaning=meaning, ply=ply, at=at
        )

    def _lift(self, square: chess.Square, piece: chess.Piece, now: float) -> str:
        name = chess.piece_name(piece.piece_type)
        self._ply.lifted[square] = (piece, now)
        if self.result is not None:
            return f"{name} lifted after the end of the game"
        if piece.color != self.board.turn and self._awaiting_press == piece.color:
            return f"{name} lifted by the player who just moved, before pressing the clock"
        self._ply.touches.append(judge.Touch(square=square, piece=piece, at=now))
        if piece.color == self.board.turn:
            return f"own {name} touched by the player having the move"
        return f"opponent's {name} touched by the player having the move"

    def _place(
        self, square: chess.Square, old: chess.Piece | None, new: chess.Piece, now: float
    ) -> str:
        meaning = f"{_name(new)} placed"
        if old is not None:
            meaning += f", replacing the {_name(old)}"
        lifted = self._ply.lifted.pop(square, None)
        if lifted is not None and lifted[0] == new:
            held = now - lifted[1]
            if held <= self.config.flicker:
                self._ply.touches = [t for t in self._ply.touches if t.square != square]
                return f"{_name(new)} read again after {held:.2f} s: sensor flicker, not a touch"
            return (
                f"{_name(new)} put back on its square: an adjustment, legal only if j'adoube "
                f"was announced (Art. {self.edition.adjust})"
            )
        return meaning

    # -- matching ---------------------------------------------------------------------------

    def _evaluate(self, now: float) -> list[Fact]:
        """Decide what the current physical board means; see the module docstring."""
        self._candidate = None
        if not self._diff:
            self._irregular = False
            self._unexplained = None
            return []
        revision = False
        move = positions.find_move(self.board, self._game, self._physical, self._diff)
        if move is None and self._prev is not None and not self._irregular:
            move = self._find_revision()
            revision = move is not None
        if move is None:
            if self._unexplained is not None:
                return self._reconstruct(now)
            return []
        self._unexplained = None
        cand = _Candidate(move, now + self.config.dwell, revision)
        base = self._prev_board() if revision else self.board
        if positions.is_ambiguous(base, move):
            self._candidate = cand
            return []
        return self._record(cand, CompletedBy.RELEASE, now)

    def _find_revision(self) -> chess.Move | None:
        """Another legal move from the position before the last one that explains the board."""
        prev = self._prev
        assert prev is not None
        # Only the last mover revises: nothing of the side to move is put anywhere, and a piece
        # of the last mover stands somewhere new (every move puts a piece down: a lift alone,
        # such as a victim taken off, is never a revision). Cheap filters before any legality.
        mover = not self.board.turn
        placed_any = False
        for sq in self._diff:
            placed = self._physical[sq]
            if placed is not None:
                if placed.color != mover:
                    return None
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

    def _record(self, cand: _Candidate, by: CompletedBy, now: float) -> list[Fact]:
        """Record a candidate move (or the revision of the last move) in the game."""
        recheck = set(self._diff)
        superseded: _Previous | None = None
        if cand.revision:
            superseded = self._prev
            assert superseded is not None
            recheck.update(superseded.changed)
            self.board.pop()
            self._san.pop()
            self._game = superseded.game
        move = cand.move
        color = self.board.turn
        if self._replaying:
            by = CompletedBy.RECONSTRUCTED
        alerts = self._judge_move(move, superseded, now)
        changes = positions.move_changes(self.board, move)
        self._prev = _Previous(list(self._game), tuple(sq for sq, _ in changes), move)
        san = self.board.san_and_push(move)
        self._san.append(san)
        for square, piece in changes:
            self._game[square] = piece
        redraw = {chess.square_rank(sq) for sq, _ in changes}
        if superseded is not None:
            redraw.update(chess.square_rank(sq) for sq in superseded.changed)
        for rank in redraw:
            self._ranks[rank] = positions.rank_text(self._game, rank)
        recheck.update(self._prev.changed)
        self._diff = {sq for sq in recheck if self._physical[sq] != self._game[sq]}
        touched = tuple(dict.fromkeys(self._ply.squares))
        self._ply = _Ply()
        self._irregular = False
        if by is not CompletedBy.CLOCK and self._clock_running():
            self._awaiting_press = color
        else:
            self._awaiting_press = None
        facts: list[Fact] = [
            MovePlayed(
                ply=self.board.ply(),
                move=move,
                san=san,
                fen=positions.fen(self.board, self._ranks),
                color=color,
                touched=touched,
                completed_by=by,
                clock=self.clock_times(),
                supersedes=cand.revision,
                at=now,
            ),
            *alerts,
        ]
        ending = judge.ending_after_move(self.board, self.edition)
        if ending is not None:
            facts.append(self.set_result(ending.result, ending.reason, ending.article, now))
        return facts

    def _judge_move(
        self, move: chess.Move, superseded: _Previous | None, now: float
    ) -> list[AlertRaised]:
        """Article 4 and 6.7 alerts for ``move``, about to be made on ``self.board``."""
        board = self.board
        color = board.turn
        ply = board.ply() + 1
        out: list[AlertRaised] = []
        if superseded is not None:
            first = superseded.move
            if board.is_castling(move) and first.from_square != move.from_square:
                out.append(
                    self._alert(
                        "castling_rook_first",
                        self.edition.castling_rook_first,
                        color,
                        f"the rook was moved to {chess.square_name(first.to_square)} before the "
                        "king, then the player castled: castling is not allowed on that side on "
                        f"this move and the rook had to move (Art. "
                        f"{self.edition.castling_rook_first})",
                        now,
                        {"first_move": first.uci(), "move": move.uci()},
                        ply=ply,
                    )
                )
            else:
                out.append(
                    self._alert(
                        "released_piece_moved",
                        self.edition.release,
                        color,
                        f"a piece released on {chess.square_name(first.to_square)} as a legal "
                        f"move was moved on to {chess.square_name(move.to_square)} (Art. "
                        f"{self.edition.release}); the board is recorded as it stands",
                        now,
                        {
                            "released_on": chess.square_name(first.to_square),
                            "first_move": first.uci(),
                            "move": move.uci(),
                        },
                        ply=ply,
                    )
                )
            return out
        breach = judge.touch_breach(board, move, self._ply.touches, self.edition)
        if breach is not None:
            out.append(
                self._alert(
                    breach.kind,
                    breach.article,
                    color,
                    breach.message,
                    now,
                    {
                        "square": chess.square_name(breach.square),
                        "piece": breach.piece.symbol(),
                        "obligation": breach.obligation,
                        "move": move.uci(),
                    },
                    ply=ply,
                )
            )
        late = self._awaiting_press
        if late is not None and late != color:
            out.append(
                self._alert(
                    "clock_not_pressed",
                    self.edition.clock_not_pressed,
                    late,
                    f"the {_color(late)} player did not press the clock after his move before "
                    f"the opponent moved (Art. {self.edition.clock_not_pressed})",
                    now,
                    {"unpressed_ply": ply - 1},
                    ply=ply - 1,
                )
            )
        return out

    # -- irregularities ---------------------------------------------------------------------

    def _irregularity(self, color: chess.Color, now: float, *, pressed: bool) -> list[Fact]:
        """The player having the move completed something no legal move explains."""
        edition = self.edition
        self._irregular = True
        self._candidate = None
        squares = judge.differing(self._game, self._physical, self._diff)
        details: dict[str, str | int | list[str] | None] = {
            "squares": squares,
            "fen": self.board.fen(),
        }
        if not self._diff:
            if not pressed:
                return []
            if edition.year >= 2018:
                what = "the clock was pressed without a move"
                return self._illegal(color, now, details, what, edition.press_without_move)
            return [
                self._alert(
                    "press_without_move",
                    edition.press_without_move,
                    color,
                    "the clock was pressed without a move being made "
                    f"(Art. {edition.press_without_move})",
                    now,
                    details,
                )
            ]
        if judge.looks_like_a_move(self._game, self._physical, self._diff, color):
            how = "completed by the clock press" if pressed else "left still on a clockless board"
            what = f"a move no legal move explains, {how}"
            return self._illegal(color, now, details, what, edition.illegal_move)
        if judge.is_displacement(self._game, self._physical):
            return [
                self._alert(
                    "displaced_pieces",
                    edition.displaced,
                    color,
                    f"pieces displaced on {', '.join(squares)}: the player re-establishes the "
                    f"position on his own time (Art. {edition.displaced})",
                    now,
                    details,
                )
            ]
        return [
            self._alert(
                "board_mismatch",
                "",
                color,
                f"the board differs from the game on {', '.join(squares)}: restore the position",
                now,
                details,
            )
        ]

    def _illegal(
        self,
        color: chess.Color,
        now: float,
        details: dict[str, str | int | list[str] | None],
        what: str,
        article: str,
    ) -> list[Fact]:
        edition = self.edition
        self.illegal_counts[color] += 1
        count = self.illegal_counts[color]
        penalty = edition.illegal_penalty(count)
        details = {**details, "count": count, "penalty": penalty}
        facts: list[Fact] = [
            self._alert(
                "illegal_move",
                article,
                color,
                f"illegal move no. {count} by {_color(color)}: {what}; {penalty}",
                now,
                details,
            )
        ]
        if edition.illegal_loses_at is not None and count >= edition.illegal_loses_at:
            if not self.board.has_insufficient_material(not color):
                result = "0-1" if color == chess.WHITE else "1-0"
                reason = f"{count} illegal moves"
            else:
                result, reason = "1/2-1/2", f"{count} illegal moves, opponent cannot checkmate"
            facts.append(self.set_result(result, reason, article, now))
        return facts

    def _watch_still(self) -> bool:
        """A clockless board with an unexplained position: judge it when left still."""
        clock = self._clock
        return (
            (clock is None or not clock.connected)
            and bool(self._diff)
            and self._candidate is None
            and not self._irregular
            and not self._still_reported
            and self.result is None
            and judge.looks_like_a_move(self._game, self._physical, self._diff, self.board.turn)
        )

    def _kings_in_centre(self, now: float) -> list[Fact]:
        # The four centre squares touch each other: no legal position has both kings there.
        ending = judge.kings_in_centre(self._physical)
        if ending is None:
            return []
        self._candidate = None
        return [self.set_result(ending.result, ending.reason, ending.article, now)]

    def _alert(
        self,
        kind: str,
        article: str,
        color: chess.Color | None,
        message: str,
        now: float,
        details: dict[str, str | int | list[str] | None] | None = None,
        *,
        ply: int | None = None,
    ) -> AlertRaised:
        self._alert_ids += 1
        alert = AlertRaised(
            kind=kind,
            article=article,
            ply=self.board.ply() + 1 if ply is None else ply,
            color=color,
            message=message,
            details=details or {},
            at=now,
            id=self._alert_ids,
        )
        self.alerts.append(alert)
        return alert

    # -- the clock --------------------------------------------------------------------------

    def _clock_running(self) -> bool:
        clock = self._clock
        return clock is not None and clock.connected and clock.running

    def _on_clock(self, reading: ClockReading, now: float) -> list[Fact]:
        prev = self._clock
        self._clock = reading
        facts: list[Fact] = []
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
        by: chess.Color | None = None
        if self._white_side is not None:
            by = chess.WHITE if pressed is self._white_side else chess.BLACK
        facts: list[Fact] = []
        cand = self._candidate
        if cand is not None and by is not None and by == self._mover(cand):
            self._candidate = None
            facts.extend(self._record(cand, CompletedBy.CLOCK, now))
        elif by is not None and self.result is None:
            if by == self._awaiting_press:
                self._awaiting_press = None
            elif self._unexplained is not None:
                facts.append(self._mismatch(by, now))
            elif by == self.board.turn and not self._irregular:
                facts.extend(self._irregularity(by, now, pressed=True))
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

    def _mover(self, cand: _Candidate) -> chess.Color:
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


def _name(piece: chess.Piece) -> str:
    return f"{_color(piece.color)} {chess.piece_name(piece.piece_type)}"


def _color(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"
