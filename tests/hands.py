"""Two hands on the board: games played by two people who do not wait for each other.

A player often reaches for his reply before his opponent's piece has landed: he lifts his own
piece (the reply's first lift), or even makes his whole reply, while the last step of the
opponent's move is still to come. ``timeline`` lays out a game so, step by step in time;
``play`` feeds it to an engine the way a board family reports it: every lift and place as it
happens (a DGT board, a Chessnut, a Pegasus that senses occupancy only), or whole readings of
the board at a fixed period (a Millennium board every 41 ms, a Certabo about once a second),
with or without a clock. Pure: the engine's time is the timeline's.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess
import msgspec

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import AlertRaised, Fact
from drivers import FAMILIES
from drivers.choreography import Lift, Place, Step, Style, occupancy_steps, steps
from drivers.events import (
    UNKNOWN,
    BoardEvent,
    ClockReading,
    ClockSide,
    Occupant,
    SquareEmptied,
    SquareOccupied,
)
from drivers.readings import Readings
from tests.table import recorded

WHITE_SIDE = ClockSide.RIGHT


class Overlap(enum.Enum):
    """How the reply to a move begins."""

    NONE = "after the move has landed"
    FIRST_LIFT = "its first lift before the move's last step"
    WHOLE = "all of it before the move's last step"


class Shape(enum.Enum):
    """How a board family reports the hands."""

    EVENTS = "every lift and place (DGT, Chessnut)"
    OCCUPANCY = "every lift and place, occupancy only (Pegasus)"
    MILLENNIUM = "whole readings every 41 ms"
    CERTABO = "whole readings about once a second"


SLIDE_STEP = 0.1
"""Seconds between the steps of a slide: the hand crosses a square in about a scan."""

AGAIN = 0.6
"""Seconds after his move has landed before a player reaches for the board again."""

READING_PERIOD = {Shape.MILLENNIUM: 0.041, Shape.CERTABO: 1.0}
FAMILY = {
    Shape.EVENTS: "dgt",
    Shape.OCCUPANCY: "pegasus",
    Shape.MILLENNIUM: "millennium",
    Shape.CERTABO: "certabo",
}
"""The family whose timing each shape takes (a Chessnut reports as a DGT board, at BLE pace)."""


@dataclass(frozen=True)
class Ply:
    """One ply of a game: the move, how it is made, how its reply begins, and how early."""

    move: chess.Move
    style: Style = Style.PLAIN
    overlap: Overlap = Overlap.NONE
    """How the reply to this move begins (the last ply's is ignored)."""
    early: float = 0.15
    """Seconds between the reply's first step and this move's last step (an overlap)."""


@dataclass(frozen=True)
class Timed:
    """A step at a time, or a press of the clock by ``press``."""

    at: float
    step: Step | None = None
    press: chess.Color | None = None
    ends: int | None = None
    """The index of the ply whose last step this is (``plies[ends]`` is physically made)."""


def timeline(
    start: chess.Board,
    plies: list[Ply],
    *,
    pace: float = 0.3,
    think: float = 1.5,
    clock: bool = False,
    occupancy: bool = False,
) -> list[Timed]:
    """The game ``plies`` from ``start``, each move's steps ``pace`` apart, ``think`` between a
    move and a reply that does not overlap it; with ``clock``, each player presses once both
    hands are done with his move (the mover after the early part of the reply)."""
    board = start.copy()
    moves: list[list[Step]] = []
    gaps: list[float] = []
    for ply in plies:
        seq = steps(board, ply.move, ply.style)
        moves.append(occupancy_steps(board, seq) if occupancy else seq)
        # A slide crosses its squares quickly: a square a scan or so each.
        gaps.append(SLIDE_STEP if ply.style is Style.SLIDE and len(seq) > 2 else pace)
        board.push(ply.move)
    out: list[Timed] = []
    t = 0.0
    begun = 0  # steps of the current move already laid out (the early part of a reply)
    color = start.turn
    done = {chess.WHITE: float("-inf"), chess.BLACK: float("-inf")}
    """When each player's last move landed: nobody reaches again within ``AGAIN`` of it."""
    for i, seq in enumerate(moves):
        rest = seq[begun:]
        gap = gaps[i]
        overlap = plies[i].overlap if i + 1 < len(moves) else Overlap.NONE
        reply = moves[i + 1] if i + 1 < len(moves) else []
        early = reply[:1] if overlap is Overlap.FIRST_LIFT else reply
        if overlap is not Overlap.NONE and len(rest) > 0:
            begin = t + gap * (len(rest) - 1)  # the reply's first step
            touched = {step.square for step in seq}
            if begin < done[not color] + AGAIN or any(step.square in touched for step in early):
                # Nobody reaches again at once, nor for a square the move has yet to reach.
                overlap = Overlap.NONE
        if overlap is Overlap.NONE or len(rest) == 0:
            for k, step in enumerate(rest):
                out.append(Timed(t, step, ends=i if k == len(rest) - 1 else None))
                t += gap
            done[color] = t - gap
            t += pace - gap
            if clock:
                out.append(Timed(t, press=color))
                t += pace
            t += think
            begun = 0
        else:
            for step in rest[:-1]:
                out.append(Timed(t, step))
                t += gap
            reply_gap = gaps[i + 1]
            last_at = t + plies[i].early + reply_gap * (len(early) - 1)
            whole = overlap is Overlap.WHOLE
            for k, step in enumerate(early):
                last = whole and k == len(early) - 1
                out.append(Timed(t + reply_gap * k, step, ends=i + 1 if last else None))
            out.append(Timed(last_at, rest[-1], ends=i))
            done[color] = last_at
            done[not color] = t + reply_gap * (len(early) - 1)
            t = last_at + pace
            if clock:
                out.append(Timed(t, press=color))
                t += pace
            begun = len(early)
        color = not color
    return sorted(out, key=lambda timed: timed.at)


class Bench:
    """An engine fed by a board of one ``shape``, with or without a clock."""

    def __init__(self, start: chess.Board, shape: Shape, *, clock: bool = False) -> None:
        family = FAMILIES[FAMILY[shape]]
        config = EngineConfig(white_side=WHITE_SIDE if clock else None)
        if family.dwell is not None:
            config = msgspec.structs.replace(config, dwell=family.dwell)
        if family.flicker is not None:
            config = msgspec.structs.replace(config, flicker=family.flicker)
        if family.scan is not None:
            config = msgspec.structs.replace(config, scan=family.scan)
        self.arbiter = Arbiter(config, start)
        self.shape = shape
        self.clock = clock
        self.facts: list[Fact] = []
        self.now = 0.0
        self.lever = WHITE_SIDE if start.turn == chess.WHITE else ClockSide.LEFT
        self.squares: list[Occupant | None] = [start.piece_at(sq) for sq in chess.SQUARES]
        if shape is Shape.OCCUPANCY:
            self.squares = [None if p is None else UNKNOWN for p in self.squares]
        self.readings = Readings()
        if shape in READING_PERIOD:
            self.readings.feed(self.squares, 0.0)  # the first reading: the board as it stands
        if clock:
            self._feed(self.reading(0.0), 0.0)

    def play(self, timed: list[Timed], settle: float = 15.0) -> list[Fact]:
        """Perform ``timed``, then let ``settle`` seconds pass."""
        period = READING_PERIOD.get(self.shape)
        end = (timed[-1].at if timed else 0.0) + settle
        read_at = period
        for item in timed:
            while period is not None and read_at is not None and read_at <= item.at:
                self._read(read_at)
                read_at += period
            if item.press is not None:
                self._press(item.press, item.at)
            else:
                assert item.step is not None
                self._step(item.step, item.at)
        while period is not None and read_at is not None and read_at <= end:
            self._read(read_at)
            read_at += period
        self._advance(end)
        return self.facts

    def recorded(self) -> list[chess.Move]:
        """The moves the engine published, superseding moves replacing the last."""
        return recorded(self.facts)

    def alerts(self) -> list[AlertRaised]:
        return [f for f in self.facts if isinstance(f, AlertRaised)]

    def _step(self, step: Step, at: float) -> None:
        occupant: Occupant | None = None
        if isinstance(step, Place):
            occupant = UNKNOWN if self.shape is Shape.OCCUPANCY else step.piece
        self.squares[step.square] = occupant
        if self.shape in READING_PERIOD:
            return
        event: BoardEvent
        if isinstance(step, Lift):
            event = SquareEmptied(square=step.square, at=at)
        else:
            assert occupant is not None
            event = SquareOccupied(square=step.square, piece=occupant, at=at)
        self._feed(event, at)

    def _read(self, at: float) -> None:
        for event in self.readings.feed(self.squares, at):
            self._feed(event, at)

    def _press(self, color: chess.Color, at: float) -> None:
        mine = WHITE_SIDE if color == chess.WHITE else ClockSide.LEFT
        self.lever = ClockSide.LEFT if mine is ClockSide.RIGHT else ClockSide.RIGHT
        self._feed(self.reading(at), at)

    def reading(self, at: float) -> ClockReading:
        """What the clock reports now: both times, the lever as the last press left it."""
        return ClockReading(
            left=300,
            right=300,
            running=True,
            lever_high=self.lever,
            connected=True,
            left_flag=False,
            right_flag=False,
            battery_low=False,
            at=at,
        )

    def _feed(self, event: BoardEvent, at: float) -> None:
        self._advance(at)
        self.facts.extend(self.arbiter.feed(event, at))
        self.now = at

    def _advance(self, t: float) -> None:
        deadline = self.arbiter.next_deadline()
        while deadline is not None and deadline <= t:
            self.facts.extend(self.arbiter.handle_timer(deadline))
            deadline = self.arbiter.next_deadline()
        self.now = max(self.now, t)
