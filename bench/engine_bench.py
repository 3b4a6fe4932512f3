"""The engine against a snapshot matcher that stays in sync with the game, side by side.

The snapshot matcher is what bridges before us do: after every change on the board, try every
legal move of the game position and compare the resulting placement with the board. It is
written to be as quick as that design allows: it skips the search when the board equals the
game position, stops at the first match, and follows the game: at the event that physically
completes each played move it pushes that move, so it never searches past a move it missed (a
slide matches phantom moves on its way; they are counted, not followed). Both run in this
process, one after the other on the same stream, game by game, so machine noise hits both alike.

Each stream is a set of random games played by hand, in one style on a DGT board with a clock
(``STREAMS``: captures with the victim pushed off, lifted first, or lifted after the capturing
piece; sliders slid across every square on their way; games that castle (king first) or
promote (through the pawn or directly, under-promotions included); a mix of all of them), or in
every style on another family's board: a Millennium board (scanned every 41 ms), a Chessnut Air
(read about every 0.45 s, Bluetooth LE timing), a Certabo board (read about once a second),
none of them with a clock, the three reporting whole readings (``drivers.readings``); and a DGT
Pegasus (occupancy only: every placed piece reported as UNKNOWN, no clock). On the boards with
a clock, the mover presses it 0.2-0.8 s after his last piece, and the clock sends its
once-a-second message while a player thinks (1-10 s per move). Then two hands on the board
(``overlap`` streams: a DGT board without and with its clock, a Millennium, a Chessnut): about
half the replies begin 0.04-0.25 s before the last step of the move they answer, their first
lift or the whole reply (``tests.hands.timeline``); a snapshot matcher misses those moves (it
is timed all the same, following the game), the engine must record every game whole.

Figures are per event kind: ``lift`` and ``place`` (that complete nothing), ``completing`` (the
lift or place after which the engine records a move), ``press`` (a clock press, which completes
an ambiguous move still within its dwell), ``tick`` (the clock's message while nobody moves),
``timer`` (``handle_timer`` when a dwell ends); ``sensor`` is every lift, place and press.

The bar (docs/product.md §4): the engine at least 10× the in-sync snapshot matcher by total time,
on every stream. The matcher of the bar compares FEN placements, as open-source bridges do (on
the occupancy-only board: each successor's occupied squares); the quickest compare
python-chess allows (bitboards; one integer of occupancy) is run and reported too. There is no
time bar in microseconds: the medians are printed next to the board's own wire (a DGT field
update takes 5.2 ms at 9600 baud), as a share of it.

    python -m bench.engine_bench [--games N] [--seed S] [--stream NAME ...]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final, Literal, cast

import chess
import msgspec

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import Fact, MovePlayed
from drivers import (
    BLE_DWELL,
    BLE_FLICKER,
    CERTABO_DWELL,
    CERTABO_FLICKER,
    CERTABO_SCAN,
    CHESSNUT_SCAN,
)
from drivers.choreography import Lift, Step, Style, occupancy_steps, steps
from drivers.events import (
    UNKNOWN,
    ClockReading,
    ClockSide,
    Occupant,
    SquareEmptied,
    SquareOccupied,
)
from drivers.readings import Readings
from tests import hands

Event = SquareEmptied | SquareOccupied | ClockReading
Kind = Literal["lift", "place", "press", "tick"]

RATIO_BAR: Final = 10.0
"""docs/product.md §4: the engine at least this many times faster than the matcher (total time)."""
WIRE_US: Final = 5200.0
"""A DGT field update on the line (5 bytes at 9600 baud), the yardstick for a median."""

HAND_GAP: Final = (0.2, 0.35)
"""Seconds between two steps of a hand (shorter than the dwell: a hand does not pause mid-move)."""
SLIDE_GAP: Final = (0.08, 0.12)
"""Seconds per square of a slide."""
PRESS_GAP: Final = (0.2, 0.8)
"""Seconds from the last piece let go to the clock press (within or past the 0.4 s dwell)."""
THINK: Final = (1, 10)
"""Seconds a player thinks before a move."""


@dataclass(frozen=True, slots=True)
class Timed:
    """One event of a stream, with what it is for the benchmark."""

    event: Event
    kind: Kind
    completes: tuple[chess.Move, ...] = ()
    """The played moves this event physically completes, in order (the matcher follows them):
    one, or two when the reply was put down whole before the move it answers landed."""


@dataclass(frozen=True, slots=True)
class Game:
    """A played game and the events a board (and clock) reported while it was played."""

    moves: tuple[chess.Move, ...]
    events: tuple[Timed, ...]


Favour = Callable[[chess.Board, chess.Move], float]
"""The weight of a legal move when a random game is drawn (biases a stream's games)."""


@dataclass(frozen=True, slots=True)
class StreamSpec:
    """A hand style, the games that exercise it, and the board family they are played on."""

    name: str
    what: str
    styles: tuple[Style, ...]
    favour: Favour
    clock: bool = True
    """A DGT clock on the board: its presses and its once-a-second messages are in the stream."""
    occupancy: bool = False
    """Every placed piece is reported as UNKNOWN (a DGT Pegasus)."""
    scan: float | None = None
    """Seconds between two whole readings of the board (``drivers.readings``); ``None``: every
    lift and place is reported as it happens (DGT, Pegasus)."""
    dwell: float | None = None
    """The family's dwell and flicker (``drivers.FAMILIES``); ``None``: the engine's defaults."""
    flicker: float | None = None
    family_scan: float = 0.0
    """The family's scan as the daemon tells the engine (``drivers.FAMILIES``: a Certabo's)."""
    overlap: bool = False
    """Two hands: about half the replies begin before the move's last step, their first lift or
    all of them (``tests.hands.timeline``)."""

    def config(self) -> EngineConfig:
        """The engine's configuration for this stream's board, as the daemon makes it."""
        config = EngineConfig(white_side=ClockSide.RIGHT) if self.clock else EngineConfig()
        if self.dwell is not None and self.flicker is not None:
            config = msgspec.structs.replace(config, dwell=self.dwell, flicker=self.flicker)
        return msgspec.structs.replace(config, scan=self.family_scan)


def _uniform(board: chess.Board, move: chess.Move) -> float:
    return 1.0


def _captures(board: chess.Board, move: chess.Move) -> float:
    return 4.0 if board.is_capture(move) else 1.0


def _slides(board: chess.Board, move: chess.Move) -> float:
    piece = board.piece_type_at(move.from_square)
    far = chess.square_distance(move.from_square, move.to_square) >= 2
    return 4.0 if far and piece in (chess.BISHOP, chess.ROOK, chess.QUEEN) else 1.0


def _castling(board: chess.Board, move: chess.Move) -> float:
    if board.is_castling(move):
        return 1000.0
    piece = board.piece_type_at(move.from_square)
    if board.has_castling_rights(board.turn) and piece in (chess.KING, chess.ROOK):
        return 0.2  # keep the rights a while
    return 3.0 if piece in (chess.KNIGHT, chess.BISHOP) else 1.0  # clear the way


def _promotions(board: chess.Board, move: chess.Move) -> float:
    if move.promotion is not None:
        return 200.0 if move.promotion == chess.QUEEN else 50.0
    return 8.0 if board.piece_type_at(move.from_square) == chess.PAWN else 1.0


def _mixed(board: chess.Board, move: chess.Move) -> float:
    return 2.0 if board.is_capture(move) or move.promotion else 1.0


STREAMS: Final = (
    StreamSpec("plain", "lifted and put down; a victim pushed off", (Style.PLAIN,), _captures),
    StreamSpec("victim_first", "victim lifted first", (Style.VICTIM_FIRST,), _captures),
    StreamSpec(
        "victim_last", "victim lifted after the capturer", (Style.VICTIM_AFTER_LIFT,), _captures
    ),
    StreamSpec("slides", "sliders slid across every square", (Style.SLIDE,), _slides),
    StreamSpec("castling", "games that castle, king first", (Style.PLAIN,), _castling),
    StreamSpec(
        "promotions",
        "promotions through the pawn or direct",
        (Style.PLAIN, Style.PROMOTE_VIA_PAWN),
        _promotions,
    ),
    StreamSpec("mixed", "every style, one per move at random", tuple(Style), _mixed),
    StreamSpec(
        "millennium",
        "every style; Millennium: a reading every 41 ms, no clock",
        tuple(Style),
        _mixed,
        clock=False,
        scan=0.041,
    ),
    StreamSpec(
        "chessnut",
        "every style; Chessnut Air: a reading every 0.45 s, no clock",
        tuple(Style),
        _mixed,
        clock=False,
        scan=CHESSNUT_SCAN,
        dwell=BLE_DWELL,
        flicker=BLE_FLICKER,
        family_scan=CHESSNUT_SCAN,
    ),
    StreamSpec(
        "certabo",
        "every style; Certabo: a reading every second, no clock",
        tuple(Style),
        _mixed,
        clock=False,
        scan=1.0,
        dwell=CERTABO_DWELL,
        flicker=CERTABO_FLICKER,
        family_scan=CERTABO_SCAN,
    ),
    StreamSpec(
        "occupancy",
        "every style; DGT Pegasus: occupancy only (UNKNOWN pieces), no clock",
        tuple(Style),
        _mixed,
        clock=False,
        occupancy=True,
        dwell=BLE_DWELL,
        flicker=BLE_FLICKER,
    ),
    StreamSpec(
        "overlap",
        "every style, replies begun early; DGT board without a clock",
        tuple(Style),
        _mixed,
        clock=False,
        overlap=True,
    ),
    StreamSpec(
        "overlap_clock",
        "every style, replies begun early; DGT board with a clock",
        tuple(Style),
        _mixed,
        overlap=True,
    ),
    StreamSpec(
        "overlap_millennium",
        "every style, replies begun early; Millennium: a reading every 41 ms, no clock",
        tuple(Style),
        _mixed,
        clock=False,
        scan=0.041,
        overlap=True,
    ),
    StreamSpec(
        "overlap_chessnut",
        "every style, replies begun early; Chessnut Air: a reading every 0.45 s, no clock",
        tuple(Style),
        _mixed,
        clock=False,
        scan=CHESSNUT_SCAN,
        dwell=BLE_DWELL,
        flicker=BLE_FLICKER,
        family_scan=CHESSNUT_SCAN,
        overlap=True,
    ),
)
"""The streams, each of independent random games: seven hand styles on a DGT board with a
clock, one stream per other board family, then games whose replies begin before the move they
answer has landed (two hands on the board), with and without a clock."""


# -- streams ------------------------------------------------------------------------------------


def random_game(
    rng: random.Random, favour: Favour, *, max_plies: int = 120, queens_only: bool = False
) -> list[chess.Move]:
    """A random legal game drawn with ``favour`` (to the end of the game or ``max_plies``)."""
    board = chess.Board()
    moves: list[chess.Move] = []
    while not board.is_game_over() and len(moves) < max_plies:
        legal = [
            m for m in board.legal_moves if not queens_only or m.promotion in (None, chess.QUEEN)
        ]
        move = rng.choices(legal, weights=[favour(board, m) for m in legal])[0]
        moves.append(move)
        board.push(move)
    return moves


def play(spec: StreamSpec, moves: list[chess.Move], rng: random.Random) -> Game:
    """The events of ``moves`` played by hand in ``spec``'s styles (White's clock on the right),
    as ``spec``'s board reports them."""
    if spec.overlap:
        return overlapping(spec, moves, rng)
    board = chess.Board()
    out: list[Timed] = []
    times = {ClockSide.LEFT: 3600, ClockSide.RIGHT: 3600}
    high = ClockSide.RIGHT
    t = 0.0
    scanner = None if spec.scan is None else _Scanner(spec.scan, board)
    if spec.clock:
        out.append(Timed(_reading(times, high, t), "tick"))
    for move in moves:
        for _ in range(rng.randint(*THINK)):  # thinking: one clock message a second
            t += 1.0
            if spec.clock:
                times[high] -= 1
                out.append(Timed(_reading(times, high, t), "tick"))
        style = rng.choice(spec.styles)
        seq = steps(board, move, style)
        if spec.occupancy:
            seq = occupancy_steps(board, seq)
        slide = style is Style.SLIDE and len(seq) > 2 + board.is_capture(move)
        for i, step in enumerate(seq):
            t += rng.uniform(*(SLIDE_GAP if slide else HAND_GAP))
            last = i == len(seq) - 1
            if scanner is not None:
                out.extend(scanner.step(step, t, (move,) if last else ()))
                continue
            if isinstance(step, Lift):
                event: Event = SquareEmptied(square=step.square, at=t)
                kind: Kind = "lift"
            else:
                piece = UNKNOWN if spec.occupancy else step.piece
                event, kind = SquareOccupied(square=step.square, piece=piece, at=t), "place"
            out.append(Timed(event, kind, (move,) if last else ()))
        if spec.clock:
            t += rng.uniform(*PRESS_GAP)
            high = ClockSide.LEFT if high is ClockSide.RIGHT else ClockSide.RIGHT
            out.append(Timed(_reading(times, high, t), "press"))
        board.push(move)
    if scanner is not None:
        out.extend(scanner.flush())
    return Game(tuple(moves), tuple(out))


def overlapping(spec: StreamSpec, moves: list[chess.Move], rng: random.Random) -> Game:
    """The events of ``moves`` played by two hands that do not wait for each other: about half
    the replies begin (their first lift, or all of them) 0.04-0.25 s before the last step of
    the move they answer; with a clock, each player presses once both hands are done with his
    move (``tests.hands.timeline``)."""
    plies = [
        hands.Ply(
            move,
            rng.choice(spec.styles),
            rng.choice([hands.Overlap.NONE, hands.Overlap.FIRST_LIFT, hands.Overlap.WHOLE])
            if rng.random() < 0.75
            else hands.Overlap.NONE,
            rng.uniform(0.04, 0.25),
        )
        for move in moves
    ]
    laid = hands.timeline(chess.Board(), plies, clock=spec.clock, occupancy=spec.occupancy)
    board = chess.Board()
    scanner = None if spec.scan is None else _Scanner(spec.scan, board)
    times = {ClockSide.LEFT: 3600, ClockSide.RIGHT: 3600}
    high = ClockSide.RIGHT
    out: list[Timed] = [Timed(_reading(times, high, 0.0), "tick")] if spec.clock else []
    made: set[int] = set()
    pushed = 0  # the plies completed so far, in order
    for item in laid:
        if item.press is not None:
            high = ClockSide.LEFT if high is ClockSide.RIGHT else ClockSide.RIGHT
            out.append(Timed(_reading(times, high, item.at), "press"))
            continue
        step = item.step
        assert step is not None
        completes: tuple[chess.Move, ...] = ()
        if item.ends is not None:
            made.add(item.ends)
            first = pushed
            while pushed in made:
                pushed += 1
            completes = tuple(moves[first:pushed])
        if scanner is not None:
            out.extend(scanner.step(step, item.at, completes))
        elif isinstance(step, Lift):
            out.append(Timed(SquareEmptied(square=step.square, at=item.at), "lift", completes))
        else:
            piece = UNKNOWN if spec.occupancy else step.piece
            event = SquareOccupied(square=step.square, piece=piece, at=item.at)
            out.append(Timed(event, "place", completes))
    if scanner is not None:
        out.extend(scanner.flush())
    return Game(tuple(moves), tuple(out))


class _Scanner:
    """A board that reports whole readings every ``period`` seconds: the hand's steps change
    what stands on the squares, and each reading's changes go out as the family's codec sends
    them (``drivers.readings.Readings``: lifts first, a king first of them, then places)."""

    def __init__(self, period: float, board: chess.Board) -> None:
        self.period = period
        self.squares: list[Occupant | None] = [board.piece_at(sq) for sq in chess.SQUARES]
        self.readings = Readings()
        self.readings.feed(self.squares, 0.0)
        self.next_reading = period
        self.pending: tuple[chess.Move, ...] = ()
        """The played moves whose last step is not yet read."""

    def step(self, step: Step, at: float, completes: tuple[chess.Move, ...]) -> list[Timed]:
        """The readings taken before ``at``, then ``step`` done on the board."""
        out = self._read_until(at)
        self.squares[step.square] = None if isinstance(step, Lift) else step.piece
        self.pending += completes
        return out

    def flush(self) -> list[Timed]:
        """The reading after the last step."""
        return self._read_until(self.next_reading + self.period)

    def _read_until(self, at: float) -> list[Timed]:
        out: list[Timed] = []
        while self.next_reading < at:
            events = self.readings.feed(self.squares, self.next_reading)
            timed = [
                Timed(event, "lift" if isinstance(event, SquareEmptied) else "place")
                for event in events
                if isinstance(event, SquareEmptied | SquareOccupied)
            ]
            if timed and self.pending:
                timed[-1] = Timed(timed[-1].event, timed[-1].kind, self.pending)
                self.pending = ()
            out.extend(timed)
            self.next_reading += self.period
        return out


def _reading(times: dict[ClockSide, int], high: ClockSide, at: float) -> ClockReading:
    return ClockReading(
        left=times[ClockSide.LEFT],
        right=times[ClockSide.RIGHT],
        running=True,
        lever_high=high,
        connected=True,
        left_flag=False,
        right_flag=False,
        battery_low=False,
        at=at,
    )


def make_stream(spec: StreamSpec, games: int, seed: int, *, max_plies: int = 120) -> list[Game]:
    """``games`` random games of ``spec``, from their own seed (streams are independent).

    On an occupancy board every promotion is to a queen: the board cannot tell another piece,
    and the engine takes a queen unless an arbiter corrects it.
    """
    rng = random.Random(f"{seed}:{spec.name}")
    return [
        play(
            spec,
            random_game(rng, spec.favour, max_plies=max_plies, queens_only=spec.occupancy),
            rng,
        )
        for _ in range(games)
    ]


# -- the two contenders -------------------------------------------------------------------------

Bucket = Literal["lift", "place", "completing", "press", "tick", "timer"]
BUCKETS: Final[tuple[Bucket, ...]] = ("lift", "place", "completing", "press", "tick", "timer")


@dataclass(slots=True)
class Run:
    """Nanoseconds per event by bucket, and what the contender made of the stream."""

    costs: dict[Bucket, list[int]] = field(default_factory=lambda: {b: [] for b in BUCKETS})
    moves: int = 0
    """Moves recorded (engine) or matched at the event that completes them (matcher)."""
    games_equal: int = 0
    """Games whose recorded moves equal the played ones (engine) or all matched (matcher)."""
    games_ended_early: int = 0
    """Engine: games it ended by a result before the played game's end, the rest equal."""
    phantoms: int = 0
    """Matcher: positions matched at an event that completes no move (a slide's squares)."""
    wrong: int = 0
    """Matcher: another move matched at the event that completes a played one (on occupancy,
    a capture by the same piece elsewhere leaves the same squares occupied)."""
    press_completions: int = 0
    """Engine: moves completed by a clock press."""

    def total_ns(self) -> int:
        """Every event's cost, summed."""
        return sum(sum(values) for values in self.costs.values())

    def sensor(self) -> list[int]:
        """The costs of every lift, place and press."""
        c = self.costs
        return c["lift"] + c["place"] + c["completing"] + c["press"]


def bucket_of(kind: str, moved: bool) -> Bucket:
    """Where a call's cost goes: a lift or place that recorded a move is ``completing``; a press
    (which completes a move still within its dwell), a tick and a timer keep their kind."""
    if moved and kind in ("lift", "place"):
        return "completing"
    return cast(Bucket, kind)


def collect_moves(facts: Iterable[Fact], recorded: list[chess.Move]) -> bool:
    """Append the moves in ``facts`` to ``recorded`` (a superseding move replaces the last);
    whether there were any."""
    moved = False
    for fact in facts:
        if isinstance(fact, MovePlayed):
            moved = True
            if fact.supersedes and recorded:
                recorded.pop()
            recorded.append(fact.move)
    return moved


def time_game(
    arbiter: Arbiter,
    events: Iterable[tuple[Kind, Event]],
    count: Callable[[str, int, bool], None],
) -> list[chess.Move]:
    """Feed one game's ``(kind, event)`` pairs to ``arbiter``, timing each call as the daemon
    makes it (``feed`` or ``handle_timer``, then ``next_deadline``; timers as they fall due).

    ``count(kind, ns, moved)`` is called after each call, outside the time taken: ``kind`` is
    the event's, or ``"timer"``. Returns the moves recorded, a superseding move replacing the
    last.
    """
    clock = time.perf_counter_ns
    recorded: list[chess.Move] = []
    deadline: float | None = None

    def timers_until(until: float | None) -> float | None:
        due = deadline
        while due is not None and (until is None or due <= until):
            t0 = clock()
            facts = arbiter.handle_timer(due)
            due = arbiter.next_deadline()
            cost = clock() - t0
            count("timer", cost, collect_moves(facts, recorded))
        return due

    for kind, event in events:
        at = event.at
        deadline = timers_until(at)
        t0 = clock()
        facts = arbiter.feed(event, at)
        deadline = arbiter.next_deadline()
        cost = clock() - t0
        count(kind, cost, collect_moves(facts, recorded))
    timers_until(None)
    return recorded


def run_engine(games: Iterable[Game], config: EngineConfig, into: Run | None = None) -> Run:
    """Feed every game to a fresh engine, timing each call as the daemon makes it."""
    run = Run() if into is None else into

    def count(kind: str, cost: int, moved: bool) -> None:
        run.costs[bucket_of(kind, moved)].append(cost)
        if kind == "press":
            run.press_completions += moved

    for game in games:
        arbiter = Arbiter(config)
        events = ((timed.kind, timed.event) for timed in game.events)
        recorded = time_game(arbiter, events, count)
        ended = arbiter.result is not None
        run.moves += len(recorded)
        played = list(game.moves)
        if recorded == played:
            run.games_equal += 1
        elif ended and recorded == played[: len(recorded)]:
            run.games_ended_early += 1
    return run


Compare = Literal["fen", "bitboards", "squares", "occupancy"]
"""How the matcher compares a position with the board: FEN placements (as open-source bridges
for boards that know the pieces do: picochess compares the board's FEN with each legal
successor's, JohanSjoblom/picochess: dgt/board.py and picochess.py; python-mchess looks it up in
a dictionary of the successors' FENs, domschl/python-mchess: mchess/chess_link.py; the first
match wins), bitboards (the quickest compare python-chess allows); on an occupancy-only board,
the occupied squares: ``squares`` as the open-source bridge for such a board does
(NicholasBM/chessnut-bridge: src/bridge/sync/reconcile.py) - every legal successor's occupied
squares read off its pieces and compared with the board's, all of them tried, a move only if
exactly one matches (the board cannot tell apart two captures that leave the same squares
occupied) - or ``occupancy``, the quickest compare (one integer, the first match wins)."""


def run_matcher(games: Iterable[Game], compare: Compare, into: Run | None = None) -> Run:
    """The snapshot matcher on every game, timing each event.

    At the event that completes a move it also does what any bridge does for the move it
    publishes, as the engine does: the SAN, the FEN after it and the end-of-game check.
    """
    run = Run() if into is None else into
    clock = time.perf_counter_ns
    for game in games:
        board = chess.Board()
        placement = chess.BaseBoard()
        occupied = placement.occupied
        squares = {chess.square_name(sq) for sq in board.piece_map()}
        board_fen = board.board_fen()
        matched = 0
        for timed in game.events:
            t0 = clock()
            if timed.kind in ("tick", "press"):
                run.costs[timed.kind].append(clock() - t0)
                continue
            event = timed.event
            found: chess.Move | None = None
            if compare == "squares":
                name = chess.square_name(event.square)  # type: ignore[union-attr]
                if isinstance(event, SquareEmptied):
                    squares.discard(name)
                else:
                    squares.add(name)
                if squares != {chess.square_name(sq) for sq in board.piece_map()}:
                    matches = []
                    for move in board.legal_moves:
                        board.push(move)
                        if {chess.square_name(sq) for sq in board.piece_map()} == squares:
                            matches.append(move)
                        board.pop()
                    found = matches[0] if len(matches) == 1 else None
            elif compare == "occupancy":
                occupied ^= chess.BB_SQUARES[event.square]  # type: ignore[union-attr]
                if occupied != board.occupied:
                    for move in board.legal_moves:
                        board.push(move)
                        same = board.occupied == occupied
                        board.pop()
                        if same:
                            found = move
                            break
            else:
                if isinstance(event, SquareEmptied):
                    placement.remove_piece_at(event.square)
                elif isinstance(event, SquareOccupied) and isinstance(event.piece, chess.Piece):
                    placement.set_piece_at(event.square, event.piece)
                if compare == "fen":
                    target = placement.board_fen()
                    if target != board_fen:
                        for move in board.legal_moves:
                            board.push(move)
                            same = board.board_fen() == target
                            board.pop()
                            if same:
                                found = move
                                break
                elif not _same(board, placement):
                    for move in board.legal_moves:
                        board.push(move)
                        same = _same(board, placement)
                        board.pop()
                        if same:
                            found = move
                            break
            played = timed.completes
            for move in played:
                # Follow the game (never search past a missed move), with the move's facts.
                board.san(move)
                board.push(move)
                board.fen()
                board.is_game_over()
                if compare == "fen":
                    board_fen = board.board_fen()
            cost = clock() - t0
            if played:
                # One search finds one move: a reply put down first is a move it misses.
                run.costs["completing"].append(cost)
                matched += found == played[0]
                run.wrong += found is not None and found != played[0]
            else:
                run.costs[timed.kind].append(cost)
                run.phantoms += found is not None
        run.moves += matched
        run.games_equal += matched == len(game.moves)
    return run


def _same(a: chess.BaseBoard, b: chess.BaseBoard) -> bool:
    """The same placement (python-chess's ``BaseBoard.__eq__``, without its dispatch)."""
    return (
        a.occupied == b.occupied
        and a.occupied_co[chess.WHITE] == b.occupied_co[chess.WHITE]
        and a.pawns == b.pawns
        and a.knights == b.knights
        and a.bishops == b.bishops
        and a.rooks == b.rooks
        and a.queens == b.queens
        and a.kings == b.kings
    )


# -- report -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict:
    """One stream's figures against the bars."""

    stream: str
    sensor_median_us: float
    completing_median_us: float
    ratio: float
    """Matcher total time over engine total time (the bar's matcher)."""
    quickest_ratio: float
    """The same against the quickest matcher (bitboards; occupancy: the same matcher)."""
    in_sync: bool
    """The engine recorded every played game (else the two did not do the same work)."""

    def met(self) -> bool:
        """The bar met, and the engine recorded the played games."""
        return self.ratio >= RATIO_BAR and self.in_sync

    def word(self) -> str:
        """The verdict as printed."""
        if not self.in_sync:
            return "MISSED (the engine lost a played game)"
        return "met" if self.met() else "MISSED"


def percentile(values: list[int], q: float) -> float:
    """The ``q`` quantile of nanosecond ``values``, in microseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] / 1000


def _row(label: str, values: list[int]) -> str:
    if not values:
        return f"  {label:26}{0:>8}"
    return (
        f"  {label:26}{len(values):>8}{statistics.median(values) / 1000:9.1f}"
        f"{percentile(values, 0.9):9.1f}{percentile(values, 0.99):9.1f}"
        f"{sum(values) / 1e6:10.1f}"
    )


def _median_us(values: list[int]) -> float:
    return statistics.median(values) / 1000 if values else 0.0


def report(
    spec: StreamSpec, games: list[Game], engine: Run, matchers: dict[Compare, Run]
) -> Verdict:
    """Print one stream's figures; return its verdict (the first matcher is the bar's)."""
    plies = sum(len(g.moves) for g in games)
    board_events = sum(1 for g in games for t in g.events if t.kind in ("lift", "place"))
    presses = sum(1 for g in games for t in g.events if t.kind == "press")
    print(f"\n== {spec.name}: {spec.what}")
    print(
        f"  {len(games)} games, {plies} plies; {board_events} lifts and places, {presses} "
        f"presses, {sum(len(g.events) for g in games)} events in all; {_census(games)}"
    )
    early = f" (+{engine.games_ended_early} ended early by a result)"
    print(
        f"  engine: {engine.moves} moves recorded; the played game recorded in "
        f"{engine.games_equal}/{len(games)} games"
        + (early if engine.games_ended_early else "")
        + (f"; {engine.press_completions} moves completed by the press" if presses else "")
    )
    for compare, matcher in matchers.items():
        print(
            f"  matcher ({compare}): {matcher.moves}/{plies} moves matched at the event that "
            f"completes them ({matcher.wrong} as another move), {matcher.phantoms} phantom "
            "matches on the way"
        )
    print(f"  {'µs per event':26}{'N':>8}{'median':>9}{'p90':>9}{'p99':>9}{'total ms':>10}")
    for bucket in BUCKETS:
        if engine.costs[bucket]:
            print(_row(f"engine {bucket}", engine.costs[bucket]))
    print(_row("engine sensor", engine.sensor()))
    for compare, matcher in matchers.items():
        for bucket in ("lift", "place", "completing"):
            print(_row(f"matcher {compare} {bucket}", matcher.costs[bucket]))
        print(_row(f"matcher {compare} sensor", matcher.sensor()))
    ratios = {c: m.total_ns() / engine.total_ns() for c, m in matchers.items()}
    first, *_ = ratios
    verdict = Verdict(
        stream=spec.name,
        sensor_median_us=_median_us(engine.sensor()),
        completing_median_us=_median_us(engine.costs["completing"]),
        ratio=ratios[first],
        quickest_ratio=min(ratios.values()),
        in_sync=engine.games_equal + engine.games_ended_early == len(games),
    )
    totals = ", ".join(f"matcher ({c}) {m.total_ns() / 1e6:.1f} ms" for c, m in matchers.items())
    print(f"  total: engine {engine.total_ns() / 1e6:.1f} ms, {totals}")
    print("  the engine is " + ", ".join(f"{r:.1f}x the {c} matcher" for c, r in ratios.items()))
    return verdict


def _census(games: list[Game]) -> str:
    counts = {"captures": 0, "castlings": 0, "promotions": 0, "en passant": 0}
    for game in games:
        board = chess.Board()
        for move in game.moves:
            counts["captures"] += board.is_capture(move)
            counts["castlings"] += board.is_castling(move)
            counts["promotions"] += move.promotion is not None
            counts["en passant"] += board.is_en_passant(move)
            board.push(move)
    return ", ".join(f"{n} {what}" for what, n in counts.items())


def summary(verdicts: list[Verdict]) -> None:
    """One line per stream against the bar."""
    print(
        f"\nbar: the engine ≥ {RATIO_BAR:.0f}x the in-sync matcher by total time, on every "
        "stream (FEN matcher; occupancy-only board: the squares matcher); 'quickest': against "
        "the quickest matcher (bitboards; occupancy)"
    )
    print(
        f"{'stream':14}{'ratio':>8}{'quickest':>10}{'sensor µs':>11}{'compl. µs':>11}"
        f"{'wire/compl.':>13}  in sync  verdict"
    )
    for v in verdicts:
        wire = WIRE_US / v.completing_median_us if v.completing_median_us else float("nan")
        print(
            f"{v.stream:14}{v.ratio:7.1f}x{v.quickest_ratio:9.1f}x{v.sensor_median_us:11.1f}"
            f"{v.completing_median_us:11.1f}{wire:12.0f}x  {'yes' if v.in_sync else 'NO ':7}  "
            f"{v.word()}"
        )
    met = sum(v.met() for v in verdicts)
    print(
        f"bar met on {met} of {len(verdicts)} streams"
        + (" (every stream)" if met == len(verdicts) else "")
        + f"; wire/compl.: a DGT field update on the line ({WIRE_US / 1000:g} ms at 9600 baud) "
        "over the engine's median completing event"
    )


def matchers_for(spec: StreamSpec) -> tuple[Compare, ...]:
    """The matchers a stream is compared with, the bar's first."""
    return ("squares", "occupancy") if spec.occupancy else ("fen", "bitboards")


def main() -> None:
    """Run the benchmark from the command line."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per stream (default 20)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--stream",
        action="append",
        choices=[s.name for s in STREAMS],
        help="only this stream (repeatable; default: all)",
    )
    args = parser.parse_args()
    chosen = [s for s in STREAMS if args.stream is None or s.name in args.stream]
    verdicts = []
    for spec in chosen:
        games = make_stream(spec, args.games, args.seed)
        # Warm-up, not counted: the stream once through each contender, as a daemon that has
        # been running a while has read boards before (the search's distance tables, made as
        # first asked, and the interpreter's own caches).
        run_engine(games, spec.config())
        for compare in matchers_for(spec):
            run_matcher(games, compare)
        engine = Run()
        matchers: dict[Compare, Run] = {compare: Run() for compare in matchers_for(spec)}
        for game in games:  # side by side, game by game: a burst of machine noise hits both
            gc.collect()
            run_engine([game], spec.config(), engine)
            for compare, matcher in matchers.items():
                gc.collect()
                run_matcher([game], compare, matcher)
        verdicts.append(report(spec, games, engine, matchers))
    summary(verdicts)


if __name__ == "__main__":
    main()
