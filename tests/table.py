"""An arbiter fed by hand, with time of its own: the harness of the engine tests."""

from __future__ import annotations

from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import Fact
from drivers.choreography import Step, to_events


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
