"""Tests facing emulated boards: a host at the other end of a serial one, and waits that poll.

:class:`SerialHost` is plain pyserial on the emulator's pseudo-terminal, read without blocking
the event loop; each test module subclasses it to read the bytes by hand in its own family's
terms (from board-protocols.md, never with the project's codec). :func:`until` polls, for an
emulator's state has no event to await. Deadlines are generous; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Self

import serial

DEADLINE: Final = 20.0
"""Seconds a test waits for what it expects."""
POLL: Final = 0.002
"""Seconds between two looks."""


class SerialHost:
    """A host with the emulator's pty open (closed when its ``with`` block ends)."""

    def __init__(self, path: str) -> None:
        self.port = serial.Serial(path, timeout=0)
        self.buffer = bytearray()
        """What was read and not taken yet."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.port.close()

    async def fill(self) -> None:
        """Add what has arrived to :attr:`buffer`, then give the event loop a moment."""
        self.buffer += bytes(self.port.read(4096))
        await asyncio.sleep(POLL)

    async def quiet(self, duration: float) -> bytes:
        """Everything that arrives within ``duration`` (for silence checks only)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + duration
        while loop.time() < end:
            await self.fill()
        return bytes(self.buffer)


async def until(
    condition: Callable[[], bool], *, within: float = DEADLINE, every: float = POLL
) -> None:
    """Return once ``condition()`` holds, looking every ``every`` seconds for ``within``."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110  # polls emulator state; there is no event to await
            await asyncio.sleep(every)
