"""An arbiter fed by hand, with time of its own: the harness of the engine tests."""

from __future__ import annotations

import chess

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import Fact, MovePlayed
from drivers import BLE_DWELL, BLE_FLICKER
from drivers.choreography import Lift, Step, Style, occupancy_steps, steps, to_events
from drivers.events import UNKNOWN, BoardSnapshot, SquareEmptied, SquareOccupied


class HandFed:
    """Performs lifts and places on ``arbiter`` at a chosen pace, firing its timers on time."""

    def __init__(self, arbiter: Arbiter) -> None:
        self.arbiter = arbiter
        self.now = 100.0
        self.facts: list[Fact] = []

    def do(self, seq: list[Step], interval: float = 0.05) -> list[Fact]:
        """Perform ``seq`` with ``interval`` between steps."""
        out: list[Fact] = []
        for event in to_events(seq, self.now, interval):
            out.extend(self._advance_to(event.at))
            out.extend(self.arbiter.feed(event, event.at))
        self.now += len(seq) * interval
        self.facts.extend(out)
        return out

    def wait(self, seconds: float) -> list[Fact]:
        """Let ``seconds`` pass with nothing touched."""
        out = self._advance_to(self.now + seconds)
        self.now += seconds
        self.facts.extend(out)
        return out

    def _advance_to(self, t: float) -> list[Fact]:
        out: list[Fact] = []
        deadline = self.arbiter.next_deadline()
        while deadline is not None and deadline <= t:
            out.extend(self.arbiter.handle_timer(deadline))
            deadline = self.arbiter.next_deadline()
        return out


class OccupancyBoard(HandFed):
    """A board that senses occupancy only and has no clock (a DGT Pegasus), fed by hand.

    Every piece put down is reported as UNKNOWN; a hand putting a piece on an occupied square
    takes the piece there off first (``occupancy_steps``).
    """

    def __init__(self, board: chess.Board | None = None) -> None:
        super().__init__(Arbiter(EngineConfig(dwell=BLE_DWELL, flicker=BLE_FLICKER), board))

    def do(self, seq: list[Step], interval: float = 0.3) -> list[Fact]:
        """Perform ``seq``, reporting every piece put down as UNKNOWN."""
        out: list[Fact] = []
        for i, step in enumerate(seq):
            at = self.now + i * interval
            out.extend(self._advance_to(at))
            if isinstance(step, Lift):
                event: SquareEmptied | SquareOccupied = SquareEmptied(square=step.square, at=at)
            else:
                event = SquareOccupied(square=step.square, piece=UNKNOWN, at=at)
            out.extend(self.arbiter.feed(event, at))
        self.now += len(seq) * interval
        self.facts.extend(out)
        return out

    def make(
        self,
        board: chess.Board,
        move: chess.Move,
        style: Style = Style.PLAIN,
        pace: float = 0.3,
        think: float = 2.0,
    ) -> list[Fact]:
        """Make ``move`` (legal on ``board``, which is not changed) by hand, then think."""
        out = self.do(occupancy_steps(board, steps(board, move, style)), pace)
        return out + self.wait(think)

    def read_whole(self, board: chess.Board, wait: float = 10.0) -> list[Fact]:
        """The board is read whole (a reconnect): occupancy only, taken as the truth."""
        squares = tuple(UNKNOWN if board.piece_at(sq) else None for sq in chess.SQUARES)
        out = self.arbiter.recover(None, BoardSnapshot(squares=squares, at=self.now), self.now)
        self.facts.extend(out)
        return out + self.wait(wait)

    def recorded(self) -> list[chess.Move]:
        """The moves recorded so far (a superseding move replaces the last)."""
        return recorded(self.facts)


def recorded(facts: list[Fact]) -> list[chess.Move]:
    """The moves ``facts`` record, in order, a superseding move replacing the last."""
    out: list[chess.Move] = []
    for fact in facts:
        if isinstance(fact, MovePlayed):
            if fact.supersedes:
                out.pop()
            out.append(fact.move)
    return out
