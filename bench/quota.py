"""A Raspberry Pi stand-in: processes started under a CPU quota (a cgroup's CPU bandwidth limit).

``with cpu_quota(25) as limit:`` makes a cgroup that lets its processes use 25% of one CPU
(25 ms in every 100 ms), and ``limit.argv(cmd)`` is ``cmd`` prefixed so that the process
enters the cgroup before it ``exec``s (its start is throttled too). cgroup v2 (``cpu.max``) is
used where its cpu controller is enabled, else cgroup v1 (``cpu.cfs_quota_us``). It needs the
right to make a cgroup (root, or a delegated subtree); :func:`cpu_quota` raises
:class:`QuotaUnavailableError` saying why otherwise. ``systemd-run --property=CPUQuota=25%``
does the same where systemd is the init system (it is not on every machine this runs on).

A Pi 4's Cortex-A72 runs CPython some 4-8 times slower than a desktop x86 core; 25% of one
core is the milder end of that.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

CGROUP: Final = Path("/sys/fs/cgroup")
PERIOD_US: Final = 100_000


class QuotaUnavailableError(RuntimeError):
    """No cgroup with a CPU limit can be made here; the message says why."""


@dataclass(frozen=True)
class CpuQuota:
    """A cgroup limiting its processes to ``percent`` of one CPU."""

    percent: float
    procs: Path
    """The cgroup's ``cgroup.procs``: a PID written there joins the cgroup."""

    def argv(self, argv: list[str]) -> list[str]:
        """``argv`` run so that it enters this cgroup first (a shell writes its own PID)."""
        return ["/bin/sh", "-c", f'echo $$ > {self.procs} && exec "$@"', "quota", *argv]

    def label(self) -> str:
        return f"{self.percent:g}% of one CPU"


@contextlib.contextmanager
def cpu_quota(percent: float) -> Iterator[CpuQuota]:
    """A fresh cgroup limited to ``percent`` of one CPU, removed afterwards."""
    quota_us = int(PERIOD_US * percent / 100)
    name = f"chessbridge-bench-{uuid.uuid4().hex[:8]}"
    v2 = CGROUP / "cgroup.controllers"
    if v2.exists() and "cpu" in v2.read_text().split():
        group = CGROUP / name
        settings = {"cpu.max": f"{quota_us} {PERIOD_US}"}
    elif (CGROUP / "cpu" / "cpu.cfs_quota_us").exists():
        group = CGROUP / "cpu" / name
        settings = {"cpu.cfs_period_us": str(PERIOD_US), "cpu.cfs_quota_us": str(quota_us)}
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
        yield CpuQuota(percent, group / "cgroup.procs")
    finally:
        # The cgroup can go only once its processes have exited or moved.
        for pid in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                os.kill(int(pid), 9)
        with contextlib.suppress(OSError):
            group.rmdir()
