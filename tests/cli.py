"""``chessbridge`` as a person or systemd starts it: a subprocess of this interpreter."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping

PIPE = asyncio.subprocess.PIPE


def argv(*args: str) -> list[str]:
    """The command line of ``chessbridge ARGS``, as this interpreter runs it."""
    return [sys.executable, "-m", "bridge", *args]


async def chessbridge(
    *args: str,
    stdin: int | None = None,
    stdout: int | None = PIPE,
    env: Mapping[str, str] | None = None,
) -> asyncio.subprocess.Process:
    """Start ``chessbridge ARGS``: stderr and (unless told) stdout piped, stdin only if asked."""
    return await asyncio.create_subprocess_exec(
        *argv(*args), stdin=stdin, stdout=stdout, stderr=PIPE, env=env
    )
