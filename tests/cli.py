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


async def chessbridge_without_amqtt(*args: str) -> asyncio.subprocess.Process:
    """Start ``chessbridge ARGS`` in an interpreter where amqtt (the ``demo`` extra) cannot be
    imported, as on a table's Pi."""
    return await chessbridge_without(("amqtt", "amqtt.broker"), *args)


async def chessbridge_without(modules: tuple[str, ...], *args: str) -> asyncio.subprocess.Process:
    """Start ``chessbridge ARGS`` in an interpreter where ``modules`` cannot be imported (an
    extra not installed)."""
    code = (
        "import sys\n"
        f"for name in {list(modules)!r}: sys.modules[name] = None\n"
        "from bridge.__main__ import main\n"
        f"sys.exit(main({list(args)!r}))\n"
    )
    return await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=PIPE, stderr=PIPE
    )


async def output(proc: asyncio.subprocess.Process, within: float = 120.0) -> str:
    """Everything ``proc`` writes to stdout and stderr until it exits (within ``within`` s)."""
    out, err = await asyncio.wait_for(proc.communicate(), within)
    return (out or b"").decode() + (err or b"").decode()
