"""Capped, jittered exponential backoff: one policy for every reconnect loop.

The board supervisor, the publisher, the views and the relay reconnect with it, and the
Bluetooth LE link retries its connection attempts with it. It lives in ``drivers``, the lower of
the two packages (``bridge`` uses ``drivers``, never the other way), so that both share it and
no driver depends on ``bridge``. Each failure waits a random time in ``[d/2, d]``, where ``d``
starts at ``low`` and doubles up to ``high``; a success resets it. The jitter keeps many tables
that lost the same broker (or a venue's power) from coming back in lockstep.
"""

from __future__ import annotations

import random


class Backoff:
    """The delays of one reconnect loop."""

    def __init__(self, low: float = 0.5, high: float = 30.0, *, rng: random.Random | None = None):
        if not 0 < low <= high:
            raise ValueError(f"backoff needs 0 < low <= high, got {low} and {high}")
        self.low = low
        self.high = high
        self._delay = low
        self._rng = rng or random.Random()

    def next(self, *, grow: bool = True) -> float:
        """Seconds to wait before the next attempt; each call (until ``reset``) waits longer,
        unless ``grow`` is false (the next call waits as long as this one)."""
        delay = self._delay
        if grow:
            self._delay = min(delay * 2, self.high)
        return self._rng.uniform(delay / 2, delay)

    def reset(self) -> None:
        """The connection succeeded: the next failure starts from ``low`` again."""
        self._delay = self.low
