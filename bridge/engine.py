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
* **moving** - the board differs from the game position and matches no legal successor: a piece
  is in the hand, a capture is half done, a king is on g1 with the rook still on h1. Nothing is
  emitted but touches.
* **candidate** - the board equals the position after exactly one legal move. If that move is
  *unambiguous* (no other legal move of the same piece goes further along the same line, and it
  is not the rook half of a legal castling) the move is recorded at once: that is the release of
  Art. 4.7 with nothing left to wait for. Otherwise the piece may only be passing over the square
  (a slide: the board reports every square it crosses) and the move is recorded when the board
  has stayed so for the *dwell* time, or at once when the mover presses the clock (Art. 6.7: the
  press completes the move). Any further change before that cancels the candidate.
* **revisable** - after a move is recorded and until the opponent's next move is, the board may
  still turn into another legal move from the previous position (the rook of a rook-first
  castling followed by the king; a piece released and then moved on). The board is the truth:
  the engine records the new move for the same ply, marked as superseding the first.

Time is never read: every entry point takes ``now`` (seconds, any monotonic origin) and
``next_deadline()`` says when ``handle_timer(now)`` must be called, as aioquic does.

The clock: a DGT clock reports which side's lever is up; that side's clock runs. A change of the
high side is a press by the player whose side went down. Which side is White's is set in the
config or inferred: before the first move, the clock that runs is White's (Art. 6.5).

Orientation: if the first full reading of the board shows the start position turned round
(board set up from Black's side, Art. 7.1 b), all squares are rotated from then on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, assert_never

import chess

from bridge import positions
from bridge.facts import (
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
    ClockAck,
    ClockButton,
    ClockReading,
    ClockSide,
    FrameDropped,
    SquareEmptied,
    SquareOccupied,
    StoredChange,
    StoredClockTime,
    StoredMarker,
)

DEFAULT_DWELL: Final = 0.4
"""Seconds a piece must rest on a square before an ambiguous legal move counts as released.

Why 0.4 s: a DGT board scans all 64 squares every 200-250 ms, so a piece slid across a square is
reported there for at most about one scan before that square is reported empty again. People slide
faster than a square per scan; a piece that is still on the square after more than one and a half
scans has been let go. Shorter risks phantom moves on a slow slide; longer only delays moves that
the clock press completes anyway. Bluetooth boards scan at half speed: use 0.8 s there.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineConfig:
    """Tunable behaviour of the engine."""

    dwell: float = DEFAULT_DWELL
    white_side: ClockSide | None = None
    """Which clock side is White's; ``None``: inferred from the clock running before move 1."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GameSnapshot:
    """The state a retained ``game`` topic shows."""

    fen: str
    start_fen: str
    moves: tuple[tuple[str, str], ...]
    turn: chess.Color
    clock: ClockTimes | None
    result: GameEnded | None
    alerts: tuple[AlertRaised, ...]
    rotated: bool


@dataclass(slots=True)
class _Candidate:
    move: chess.Move
    deadline: float
    revision: bool


@dataclass(slots=True)
class _Previous:
    """The position before the last recorded move, while that move can still be revised."""

    board: chess.Board
    game: list[chess.Piece | None]
    changed: tuple[chess.Square, ...]


@dataclass(slots=True)
class _Ply:
    """What happened on the board since the last recorded move."""

    touched: list[chess.Square] = field(default_factory=list)


class Arbiter:
    """Judges lifts, places and clock presses as an arbiter would; see the module docstring."""

    def __init__(
        self, config: EngineConfig | None = None, board: chess.Board | None = None
    ) -> None:
        self.config: Final = config or EngineConfig()
        self.board = board.copy() if board is not None else chess.Board()
        self.start_fen = self.board.fen()
        self.rotated = False
        self.result: GameEnded | None = None
        self.alerts: list[AlertRaised] = []
        self._game: list[chess.Piece | None] = [self.board.piece_at(sq) for sq in chess.SQUARES]
        self._physical: list[chess.Piece | None] = list(self._game)
        self._diff: set[chess.Square] = set()
        self._prev: _Previous | None = None
        self._candidate: _Candidate | None = None
        self._ply = _Ply()
        self._seen_board = False
        self._clock: ClockReading | None = None
        self._white_side = self.config.white_side
        self._san: list[str] = [] if board is None else self._replay_san(board)

    # -- public API -------------------------------------------------------------------------

    def feed(self, event: BoardEvent, now: float) -> list[Fact]:
        """Take one physical event; return the facts it establishes."""
        match event:
            case SquareEmptied(square=square):
                return self._on_square(self._frame(square), None, now, event.at)
            case SquareOccupied(square=square, piece=piece):
                return self._on_square(self._frame(square), piece, now, event.at)
            case BoardSnapshot():
                return self._on_snapshot(event, now)
            case ClockReading():
                return self._on_clock(event, now)
            case (
                StoredChange()
                | StoredMarker()
                | StoredClockTime()
                | BoardInfo()
                | ClockAck()
                | ClockButton()
                | FrameDropped()
            ):
                return []
            case _:
                assert_never(event)

    def next_deadline(self) -> float | None:
        """When ``handle_timer`` must next be called, or ``None``."""
        return self._candidate.deadline if self._candidate is not None else None

    def handle_timer(self, now: float) -> list[Fact]:
        """Complete a candidate move whose dwell time has passed."""
        cand = self._candidate
        if cand is None or now < cand.deadline:
            return []
        self._candidate = None
        return self._record(cand, CompletedBy.RELEASE, now)

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
            rotated=self.rotated,
        )

    def physical(self) -> list[chess.Piece | None]:
        """What the sensors say stands on each square now (player's frame)."""
        return list(self._physical)

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

    # -- sensor events ----------------------------------------------------------------------

    def _frame(self, square: chess.Square) -> chess.Square:
        return 63 - square if self.rotated else square

    def _on_square(
        self, square: chess.Square, piece: chess.Piece | None, now: float, at: float
    ) -> list[Fact]:
        old = self._physical[square]
        if old == piece:
            return []
        self._set(square, piece)
        self._ply.touched.append(square)
        facts: list[Fact] = [self._touch(square, old, piece, at)]
        facts.extend(self._evaluate(now))
        return facts

    def _on_snapshot(self, event: BoardSnapshot, now: float) -> list[Fact]:
        squares = list(event.squares)
        if not self._seen_board and not self.board.move_stack:
            self._seen_board = True
            start = [self.board.piece_at(sq) for sq in chess.SQUARES]
            if squares != start and squares[::-1] == start:
                self.rotated = True
        if self.rotated:
            squares = squares[::-1]
        self._physical = squares
        self._diff = {sq for sq in chess.SQUARES if squares[sq] != self._game[sq]}
        return self._evaluate(now)

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
        at: float,
    ) -> TouchReported:
        ply = self.board.ply() + 1
        if new is None:
            meaning = _lift_meaning(self.board, square, old)
            return TouchReported(
                action=TouchAction.LIFT, square=square, piece=old, meaning=meaning, ply=ply, at=at
            )
        meaning = f"{_name(new)} placed"
        if old is not None:
            meaning += f", replacing {_name(old)}"
        return TouchReported(
            action=TouchAction.PLACE, square=square, piece=new, meaning=meaning, ply=ply, at=at
        )

    # -- matching ---------------------------------------------------------------------------

    def _evaluate(self, now: float) -> list[Fact]:
        """Decide what the current physical board means; see the module docstring."""
        self._candidate = None
        if not self._diff or self.result is not None:
            return []
        revision = False
        move = positions.find_move(self.board, self._game, self._physical, self._diff)
        if move is None and self._prev is not None:
            move = self._find_revision()
            revision = move is not None
        if move is None:
            return []
        cand = _Candidate(move, now + self.config.dwell, revision)
        base = self._prev.board if revision and self._prev else self.board
        ambiguous = positions.is_ambiguous(base, move)
        if ambiguous:
            self._candidate = cand
            return []
        return self._record(cand, CompletedBy.RELEASE, now)

    def _find_revision(self) -> chess.Move | None:
        """Another legal move from the position before the last one that explains the board."""
        prev = self._prev
        assert prev is not None
        # Only the last mover revises: nothing of the side to move is put anywhere, and some
        # square involves a piece of the last mover (cheap filters before any legality check).
        mover = not self.board.turn
        involved = False
        for sq in self._diff:
            placed, stood = self._physical[sq], self._game[sq]
            if placed is not None and placed.color != mover:
                return None
            involved = (
                involved or placed is not None or (stood is not None and stood.color == mover)
            )
        if not involved:
            return None
        squares = self._diff.union(prev.changed)
        diff = {sq for sq in squares if self._physical[sq] != prev.game[sq]}
        if not 2 <= len(diff) <= 4:
            return None
        return positions.find_move(prev.board, prev.game, self._physical, diff)

    def _record(self, cand: _Candidate, by: CompletedBy, now: float) -> list[Fact]:
        """Record a candidate move (or the revision of the last move) in the game."""
        recheck = set(self._diff)
        if cand.revision:
            prev = self._prev
            assert prev is not None
            recheck.update(prev.changed)
            self.board.pop()
            self._san.pop()
            self._game = prev.game
        move = cand.move
        color = self.board.turn
        changes = positions.move_changes(self.board, move)
        self._prev = _Previous(
            self.board.copy(stack=False), list(self._game), tuple(sq for sq, _ in changes)
        )
        san = self.board.san_and_push(move)
        self._san.append(san)
        for square, piece in changes:
            self._game[square] = piece
        recheck.update(self._prev.changed)
        self._diff = {sq for sq in recheck if self._physical[sq] != self._game[sq]}
        touched = tuple(dict.fromkeys(self._ply.touched))
        self._ply = _Ply()
        facts: list[Fact] = [
            MovePlayed(
                ply=self.board.ply(),
                move=move,
                san=san,
                fen=positions.fen(self.board, self._game),
                color=color,
                touched=touched,
                completed_by=by,
                clock=self.clock_times(),
                supersedes=cand.revision,
                at=now,
            )
        ]
        facts.extend(self._game_over(now))
        return facts

    def _game_over(self, now: float) -> list[Fact]:
        board = self.board
        has_move = any(True for _ in board.generate_legal_moves())
        if not has_move and board.is_check():
            winner = "0-1" if board.turn == chess.WHITE else "1-0"
            self.result = GameEnded(result=winner, reason="checkmate", article="5.1(a)", at=now)
        elif not has_move:
            self.result = GameEnded(result="1/2-1/2", reason="stalemate", article="5.2", at=now)
        elif board.is_insufficient_material():
            self.result = GameEnded(
                result="1/2-1/2", reason="dead position", article="5.2(b)", at=now
            )
        else:
            return []
        return [self.result]

    # -- the clock --------------------------------------------------------------------------

    def _on_clock(self, reading: ClockReading, now: float) -> list[Fact]:
        prev = self._clock
        self._clock = reading
        facts: list[Fact] = []
        if not reading.connected:
            if prev is not None and prev.connected:
                facts.append(ClockChanged(state="disconnected", clock=None, at=reading.at))
            return facts
        was_connected = prev is not None and prev.connected
        if self._white_side is None and reading.running and not self.board.move_stack:
            self._white_side = reading.lever_high
        if was_connected and prev is not None and reading.lever_high != prev.lever_high:
            facts.extend(self._on_press(prev.lever_high, reading, now))
        elif not was_connected or (prev is not None and prev.running != reading.running):
            state = "running" if reading.running else "stopped"
            facts.append(ClockChanged(state=state, clock=self.clock_times(), at=reading.at))
        return facts

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

    def _replay_san(self, board: chess.Board) -> list[str]:
        replay = board.root()
        self.start_fen = replay.fen()
        sans: list[str] = []
        for move in board.move_stack:
            sans.append(replay.san(move))
            replay.push(move)
        return sans


def _name(piece: chess.Piece) -> str:
    color = "white" if piece.color else "black"
    return f"{color} {chess.piece_name(piece.piece_type)}"


def _lift_meaning(board: chess.Board, square: chess.Square, piece: chess.Piece | None) -> str:
    if piece is None:
        return "lift from an empty square"
    if piece.color == board.turn:
        return f"own {chess.piece_name(piece.piece_type)} touched"
    return f"opponent {chess.piece_name(piece.piece_type)} touched"
