"""A Raspberry Pi stand-in: processes started under a CPU quota (a cgroup's CPU bandwidth limit).

``with cpu_quota(25) as limit:`` makes a cgroup that lets its processes use 25% of one CPU
(2.5 ms in every 10 ms), and ``limit.argv(cmd)`` is ``cmd`` prefixed so that the process
enters the cgroup before it ``exec``s (its start is throttled too). cgroup v2 (``cpu.max``) is
used where its cpu controller is enabled, else cgroup v1 (``cpu.cfs_quota_us``). It needs the
right to make a cgroup (root, or a delegated subtree); :func:`cpu_quota` raises
:class:`QuotaUnavailableError` saying why otherwise. ``systemd-run --property=CPUQuota=25%``
does the same where systemd is the init system (it is not on every machine this runs on), in
periods of 100 ms.

A Pi 4's Cortex-A72 runs CPython some 4-8 times slower than a desktop x86 core; 25% of one
core is the milder end of that. A quota is not a slower CPU: a process runs at full speed until
its share of the period is spent, then waits for the next period. The period is therefore
short by default (10 ms; ``period_ms``, the benchmarks' ``--cpu-period``): work longer than a
few milliseconds, such as a start, is then slowed about evenly, as on a slower CPU. With the
kernel's usual 100 ms, a start's wall time moves in steps of three quarters of a period, coarser
than the difference between two starts being compared. Bursts shorter than the share (a move's
millisecond) run at full speed whatever the period: the stand-in says what a start or a game
costs where the CPU is scarce, not a Pi's latency.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CGROUP: Final = Path("/sys/fs/cgroup")
PERIOD_MS: Final = 10.0
"""The quota's period by default, in milliseconds (the kernel takes 1-1000)."""


class QuotaUnavailableError(RuntimeError):
    """No cgroup with a CPU limit can be made here; the message says why."""


@dataclass(frozen=True)
class CpuQuota:
    """A cgroup limiting its processes to ``percent`` of one CPU."""

    percent: float
    period_ms: float
    procs: Path
    """The cgroup's ``cgroup.procs``: a PID written there joins the cgroup."""

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run so that it enters this cgroup first (a shell writes its own PID)."""
        return ["/bin/sh", "-c", f'echo $$ > {self.procs} && exec "$@"', "quota", *argv]

    def label(self) -> str:
        return f"{self.percent:g}% of one CPU ({self.percent:g}% of every {self.period_ms:g} ms)"


def bandwidth(percent: float, period_ms: float) -> tuple[int, int]:
    """``(quota_us, period_us)``: ``percent`` of one CPU in every ``period_ms``, as the kernel
    takes them; :class:`QuotaUnavailableError` if it would refuse them."""
    period_us = round(period_ms * 1000)
    quota_us = round(period_us * percent / 100)
    if not 1000 <= period_us <= 1_000_000 or quota_us < 1000:
        # The kernel's own limits (cfs_period_us, cpu.max): it would refuse the write.
        raise QuotaUnavailableError(
            f"{percent:g}% of every {period_ms:g} ms cannot be set: the period must be 1-1000 ms "
            "and the CPU time in it at least 1 ms"
        )
    return quota_us, period_us


@contextlib.contextmanager
def cpu_quota(percent: float, period_ms: float = PERIOD_MS) -> Iterator[CpuQuota]:
    """A fresh cgroup limited to ``percent`` of one CPU, in every ``period_ms``, removed
    afterwards."""
    quota_us, period_us = bandwidth(percent, period_ms)
    name = f"chessbridge-bench-{uuid.uuid4().hex[:8]}"
    v2 = CGROUP / "cgroup.controllers"
    if v2.exists() and "cpu" in v2.read_text().split():
        group = CGROUP / name
        settings = {"cpu.max": f"{quota_us} {period_us}"}
    elif (CGROUP / "cpu" / "cpu.cfs_quota_us").exists():
        group = CGROUP / "cpu" / name
        settings = {"cpu.cfs_period_us": str(period_us), "cpu.cfs_quota_us": str(quota_us)}
    else:
        raise QuotaUnavailableError(
            "no cgroup cpu controller here (neither cgroup v2 with cpu enabled nor v1's cpu)"
        )
    try:
        group.mkdir()
    except OSError as exc:
        raise QuotaUnavailableError(f"cannot make a cgroup in {group.parent}: {exc}") from exc
    try:
        for key, value in settings.items():
            (group / key).write_text(value)
        yield CpuQuota(percent, period_ms, group / "cgroup.procs")
    finally:
        # The cgroup can go only once its processes have exited or moved.
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)
        with contextlib.suppress(OSError):
            group.rmdir()


def add_arguments(parser: argparse.ArgumentParser, who: str) -> None:
    """``--cpu-quota PCT`` and ``--cpu-period MS`` for a benchmark that runs ``who`` under it."""
    parser.add_argument(
        "--cpu-quota",
        type=float,
        metavar="PCT",
        help=f"run {who} under PCT%% of one CPU, a Raspberry Pi stand-in",
    )
    parser.add_argument(
        "--cpu-period",
        type=float,
        metavar="MS",
        default=PERIOD_MS,
        help="the quota's period: PCT%% of every MS ms (default %(default)g)",
    )


def from_arguments(args: argparse.Namespace, stack: contextlib.ExitStack) -> CpuQuota | None:
    """The quota ``add_arguments``' options ask for, held by ``stack``; ``None`` without one."""
    if not args.cpu_quota:
        return None
    try:
        return stack.enter_context(cpu_quota(args.cpu_quota, args.cpu_period))
    except QuotaUnavailableError as exc:
        raise SystemExit(f"--cpu-quota: {exc}") from None
