"""What a table published and the relay never got, and the replays asked for it (pure).

:class:`Gaps` notices payloads that never came (a ``seq`` skipped for longer than
:data:`GAP_GRACE`), so that the shell asks the table for a ``replay``. :class:`Backfill` does the
same for a game this relay joined under way: its moves known only from the snapshot have no
clock times, so the table is asked to replay the game's earlier events (its journal is bounded:
what it no longer holds stays unknown). :class:`Wanted` is for a move that cannot be placed: the
position it was played from is in no payload the relay has (the relay never guesses one), so
the table is asked for a ``replay`` of the events before it, a few times at most.

Time: every method takes ``now`` (the relay's clock), never reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

GAP_GRACE: Final = 3.0
"""Seconds a skipped ``seq`` may still arrive (out of order after a reconnect) before a replay.

After a reconnect the daemon sends its ``online`` status and then drains what it queued while
offline, so payloads with lower ``seq`` come a moment after higher ones.
"""

REPLAY_INTERVAL: Final = 10.0
"""Seconds between two replays asked of the same table."""

BACKFILL_PER_PLY: Final = 6
"""Payloads a ply usually makes (its touches, the move, the clock press): how far back, per move
known only from a snapshot, the first replay of a game joined under way reaches."""

BACKFILL_SLACK: Final = 20
"""Payloads more than that (alerts, responses, the table's status)."""

BACKFILL_ROUNDS: Final = 4
"""Replays asked at most for one game joined under way; each reaches twice as far back."""

BACKFILL_WAIT: Final = 30.0
"""Seconds to wait for a replay's response before asking again (one of the rounds)."""

_SEEN_WILLS: Final = 64


# --- gaps ------------------------------------------------------------------------------------


class Gaps:
    """The ``seq`` numbers of one table that should have come and did not.

    ``seq`` is per table, increasing, never reused, across restarts (epochs). Two kinds of hole
    are normal and never asked for: the ``seq`` after each ``online`` status (reserved for the
    Will, which the broker sends only if the table is lost), and everything before the first
    payload this relay saw (live, or from its store after a restart).
    """

    def __init__(self) -> None:
        self.high: int | None = None
        self._missing: list[tuple[int, int, float]] = []  # (first, last, noticed at)
        self._wills: list[int] = []
        self._asked_at: float | None = None

    @property
    def missing(self) -> list[tuple[int, int]]:
        """The holes, as inclusive ``(first, last)`` ranges."""
        return [(lo, hi) for lo, hi, _ in self._missing if not self._is_will(lo, hi)]

    def saw(self, seq: int, received: float, *, online: bool = False) -> None:
        """A payload with ``seq`` arrived live (not a retained copy sent on subscribing)."""
        if online:
            self._wills.append(seq + 1)
            del self._wills[:-_SEEN_WILLS]
        if self.high is None:
            self.high = seq
            return
        if seq > self.high:
            if seq > self.high + 1:
                self._missing.append((self.high + 1, seq - 1, received))
            self.high = seq
            return
        self._fill(seq)

    def _fill(self, seq: int) -> None:
        for index, (lo, hi, since) in enumerate(self._missing):
            if lo <= seq <= hi:
                parts = [(lo, seq - 1, since), (seq + 1, hi, since)]
                self._missing[index : index + 1] = [p for p in parts if p[0] <= p[1]]
                return

    def _is_will(self, lo: int, hi: int) -> bool:
        return lo == hi and lo in self._wills

    def due(self, now: float) -> int | None:
        """The ``from_seq`` of a replay to ask for now, or ``None``."""
        if self._asked_at is not None and now < self._asked_at + REPLAY_INTERVAL:
            return None
        self._missing = [m for m in self._missing if not self._is_will(m[0], m[1])]
        late = [lo for lo, _, since in self._missing if now >= since + GAP_GRACE]
        return min(late) if late else None

    def settle(self) -> None:
        """Forget the holes (after folding stored payloads again: touches were not stored)."""
        self._missing.clear()

    def asked(self, now: float) -> None:
        """A replay was asked: what it can bring comes back; the holes are forgotten."""
        self._asked_at = now
        self._missing.clear()


# --- a game joined under way ----------------------------------------------------------------


@dataclass(slots=True)
class Backfill:
    """The replays asked of a table for the earlier events of a game this relay joined under way.

    ``top`` is the ``seq`` of the snapshot that showed moves this relay had no event for; the
    replay asked starts at ``from_seq`` below it and reaches twice as far back each round, until
    every move has its event, an event of an earlier game came (the replay reached back before
    this game began), the table holds nothing older, or :data:`BACKFILL_ROUNDS` were asked.
    """

    top: int
    from_seq: int
    rounds: int = 0
    asked_at: float | None = None
    done: bool = False
    reached_start: bool = False


# --- a position no payload gave -------------------------------------------------------------

ASK_GRACE: Final = GAP_GRACE
"""Seconds the relay waits for what it lacks to come by itself (the table's next snapshot
follows each move within a second) before asking."""

ASK_TIMES: Final = 3
"""Replays asked at most for one thing the relay lacks; then it waits for the table's next
payloads (a snapshot, a later move) without asking again."""

ASK_INTERVAL: Final = 10.0
"""Seconds between two replays asked for the same thing."""


@dataclass(slots=True)
class Wanted:
    """What the relay lacks to place a table's moves, and the replays asked for it.

    ``key`` names what is lacking (the game and the move that waits for the position it was
    played from); ``None``: nothing. A replay is due :data:`ASK_GRACE` after it was first
    noticed, then every :data:`ASK_INTERVAL`, :data:`ASK_TIMES` times at most. Something else
    lacking starts the count again.
    """

    key: tuple[object, ...] | None = None
    from_seq: int = 0
    noticed: float = 0.0
    times: int = 0
    asked_at: float | None = None

    def lacks(self, key: tuple[object, ...] | None, from_seq: int, since: float) -> None:
        """What is lacking (``None``: nothing), where a replay would bring it, and since when."""
        if key != self.key:
            self.key, self.noticed, self.times, self.asked_at = key, since, 0, None
        self.from_seq = from_seq

    def due(self, now: float) -> int | None:
        """The ``from_seq`` of a replay to ask for now, or ``None``."""
        if self.key is None or self.times >= ASK_TIMES or now < self.noticed + ASK_GRACE:
            return None
        if self.asked_at is not None and now < self.asked_at + ASK_INTERVAL:
            return None
        return self.from_seq

    def asked(self, now: float) -> None:
        """The replay :meth:`due` gave was asked."""
        self.times += 1
        self.asked_at = now
