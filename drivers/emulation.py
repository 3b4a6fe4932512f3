"""What every board emulator offers, whatever its family and transport.

Emulators serve a board as a real host would meet it: a serial family on a pseudo-terminal, a
Bluetooth LE family on the virtual radio. Tests, the demo, the benchmarks and ``chessbridge
emulate`` drive them through this protocol only, with squares by name (``"e2"``) and pieces as
FEN letters (``"P"``, ``"n"``). A board that senses only occupancy ignores the letter; a board
without a clock ignores ``press``.

``drivers.FAMILIES`` says which families have an emulator; :func:`create_emulator` builds one,
importing its module only then. :class:`SettableClock` and :class:`Switchable` are what some
emulated boards can do besides.
"""

from __future__ import annotations

import importlib
import inspect
from types import TracebackType
from typing import Protocol, Self, runtime_checkable


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


@runtime_checkable
class SettableClock(Protocol):
    """An emulated board with a clock whose times a person can set (the DGT 3000 behind a DGT)."""

    @property
    def has_clock(self) -> bool:
        """Whether the clock is there (``False``: built without one, ``clock=False``)."""
        ...

    def set_clock(
        self, left: int, right: int, *, running: str | None = None, increment: int = 0
    ) -> None:
        """Set both displays (seconds); ``running`` side starts now, ``None`` leaves it paused."""
        ...


@runtime_checkable
class Switchable(Protocol):
    """A wireless board that can be switched off and on (its host loses and finds it)."""

    async def power_off(self) -> None:
        """Switch the board off: the host's connection drops."""
        ...

    async def power_on(self) -> None:
        """Switch it on again: it advertises and can be connected to."""
        ...


def has_clock(board: EmulatedBoard) -> bool:
    """Whether a clock stands behind ``board``, so that a press does something."""
    return isinstance(board, SettableClock) and board.has_clock


def emulated_families() -> list[str]:
    """The board URI schemes whose family has an emulator (``FAMILIES``' ``emulator``)."""
    from drivers import EMULATED

    return list(EMULATED)


def create_emulator(
    scheme: str,
    *,
    speed: float = 1.0,
    clock: bool = True,
    rotated: bool = False,
    radio: object | None = None,
) -> EmulatedBoard:
    """A new, unstarted emulator of ``scheme``'s family, importing its module only now.

    Each option goes to the emulator only if its class takes it: a board without a clock has
    no ``speed`` or ``clock``. A Bluetooth LE family's board is served on ``radio`` (a
    ``drivers.ble.radio.VirtualRadio``).

    Raises:
        ValueError: no emulator for ``scheme``, or ``rotated`` for a board that cannot be.
    """
    from drivers import FAMILIES

    family = FAMILIES.get(scheme)
    if family is None or family.emulator is None:
        raise ValueError(
            f"no emulator for {scheme!r} boards; emulated families: "
            f"{', '.join(emulated_families())}"
        )
    module_name, _, class_name = family.emulator.partition(":")
    board_class = getattr(importlib.import_module(module_name), class_name)
    accepted = inspect.signature(board_class).parameters
    wanted: dict[str, object] = {"speed": speed, "clock": clock, "radio": radio}
    options = {name: value for name, value in wanted.items() if name in accepted}
    if rotated:
        if "rotated" not in accepted:
            raise ValueError(f"the {scheme} emulator cannot be set up rotated")
        options["rotated"] = True
    board: EmulatedBoard = board_class(**options)
    return board
