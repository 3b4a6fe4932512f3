"""The Pi stand-in's quota (bench.quota): the bandwidth it asks the kernel for, and its options.

Making the cgroup itself needs root and a cgroup cpu controller; what is checked here is what
would be written, and that an impossible quota is refused with its reason before anything is
made.
"""

from __future__ import annotations

import argparse
import contextlib

import pytest

from bench import quota


def test_the_default_period_is_short_so_a_start_is_slowed_evenly() -> None:
    assert quota.PERIOD_MS == 10.0
    assert quota.bandwidth(25, quota.PERIOD_MS) == (2_500, 10_000)


@pytest.mark.parametrize(
    ("percent", "period_ms", "expected"),
    [(25, 100, (25_000, 100_000)), (50, 4, (2_000, 4_000)), (25, 4, (1_000, 4_000))],
)
def test_bandwidth_is_the_share_of_the_period_in_microseconds(
    percent: float, period_ms: float, expected: tuple[int, int]
) -> None:
    assert quota.bandwidth(percent, period_ms) == expected


@pytest.mark.parametrize(
    ("percent", "period_ms"),
    [(25, 0.5), (25, 1001), (10, 5), (25, 3)],
)
def test_a_quota_the_kernel_would_refuse_is_refused_with_the_reason(
    percent: float, period_ms: float
) -> None:
    with pytest.raises(quota.QuotaUnavailableError, match="period must be 1-1000 ms"):
        quota.bandwidth(percent, period_ms)
    with pytest.raises(quota.QuotaUnavailableError), quota.cpu_quota(percent, period_ms):
        pytest.fail("no cgroup may be made for a quota the kernel refuses")


def _parsed(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    quota.add_arguments(parser, "the daemon")
    return parser.parse_args(argv)


def test_the_options_default_to_no_quota_in_periods_of_ten_ms() -> None:
    args = _parsed([])
    assert args.cpu_quota is None
    assert args.cpu_period == quota.PERIOD_MS
    with contextlib.ExitStack() as stack:
        assert quota.from_arguments(args, stack) is None
    assert _parsed(["--cpu-quota", "25", "--cpu-period", "100"]).cpu_period == 100


def test_an_impossible_quota_on_the_command_line_exits_saying_why() -> None:
    args = _parsed(["--cpu-quota", "25", "--cpu-period", "0.5"])
    with contextlib.ExitStack() as stack, pytest.raises(SystemExit) as exited:
        quota.from_arguments(args, stack)
    assert str(exited.value).startswith("--cpu-quota: 25% of every 0.5 ms cannot be set")
