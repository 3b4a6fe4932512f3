"""What every board emulator offers, whatever its family and transport.

Emulators serve a board as a real host would meet it: a serial family on a pseudo-terminal, a
Bluetooth LE family on the virtual radio. Tests, the demo, the benchmarks and ``chessbridge
emulate`` drive them through this protocol only, with squares by name (``"e2"``) and pieces as
FEN letters (``"P"``, ``"n"``). A board that senses only occupancy ignores the letter; a board
without a clock ignores ``press``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Protocol, Self


class EmulatedBoard(Protocol):
    """A board being played by hand, reachable at ``f"{scheme}:{address}"``."""

    @property
    def scheme(self) -> str:
        """The board URI scheme a host uses for it (``"dgt"``, ``"chessnut"``...)."""
        ...

    @property
    def address(self) -> str:
        """What follows ``scheme:`` in the board URI: a device path, or a Bluetooth address."""
        ...

    @property
    def position(self) -> dict[str, str]:
        """The pieces standing on the board, by square name."""
        ...

    async def lift(self, square: str) -> str | None:
        """Take the piece off ``square``; returns its letter (``None``: the square was empty)."""
        ...

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` (a FEN letter) on ``square``."""
        ...

    async def press(self, side: str) -> None:
        """Press the clock's lever on ``side`` (``"left"``/``"right"``)."""
        ...

    async def __aenter__(self) -> Self:
        """Start serving the board."""
        ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving it."""
        ...
