"""The one reconnect policy: capped, jittered, doubling, reset on success."""

from __future__ import annotations

import random

import pytest

from drivers.backoff import Backoff


def test_delays_double_up_to_the_cap_with_jitter_in_the_upper_half() -> None:
    backoff = Backoff(0.5, 4.0, rng=random.Random(7))
    ceilings = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    for ceiling in ceilings:
        delay = backoff.next()
        assert ceiling / 2 <= delay <= ceiling


def test_reset_starts_again_from_the_lowest_delay() -> None:
    backoff = Backoff(1.0, 30.0, rng=random.Random(1))
    for _ in range(6):
        backoff.next()
    backoff.reset()
    assert 0.5 <= backoff.next() <= 1.0


def test_jitter_spreads_many_clients() -> None:
    delays = {round(Backoff(1.0, 8.0).next(), 6) for _ in range(50)}
    assert len(delays) > 40  # not in lockstep


@pytest.mark.parametrize(("low", "high"), [(0.0, 1.0), (2.0, 1.0), (-1.0, 1.0)])
def test_nonsense_bounds_are_refused(low: float, high: float) -> None:
    with pytest.raises(ValueError, match="backoff"):
        Backoff(low, high)
