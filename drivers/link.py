"""The seam between the daemon and every board family: what a board link is and may do.

A link is one open connection to one board, over whatever transport its family uses (a serial
port, Bluetooth LE). The daemon knows only this :class:`BoardLink` protocol: it opens the link,
receives the board's physical events through the ``on_event`` callback given to the link's
factory (``drivers.create_link``), and closes it. Everything a family may or may not be able to
do beyond that is an optional *capability*, ``None`` when the family lacks it, so the daemon
asks instead of assuming:

- :class:`BoardMemory`: recall what the board stored while nobody listened (DGT EEPROM);
- :class:`ClockControl`: set and start the clock behind the board (DGT 3000);
- :class:`LedDisplay`: light squares (Chessnut, Millennium, Certabo);
- :class:`BatteryGauge`: read the battery level (Bluetooth boards).

Links raise :class:`~drivers.errors.LinkError` subclasses: ``BoardNotFoundError`` when the board
cannot be reached at all, ``NotABoardError`` when something answers but not as the family does,
``LinkLostError`` when an open link dies. Board *bytes* never raise.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Protocol

import chess
import msgspec

from drivers.events import BoardEvent, BoardInfo, ClockSide, Occupant

EventCallback = Callable[[BoardEvent], None]
"""Receives each physical event, in order, in the event loop's thread."""

SquareChange = tuple[chess.Square, Occupant | None]
"""A square and what it holds after a change (``None``: empty), in the board's own frame."""


class StoredPress(msgspec.Struct, frozen=True):
    """The clock's lever pressed down on ``side`` (a physical side, never rotated): the player
    on that side ended his turn. As a board's memory recorded it, in order with the changes."""

    side: ClockSide


RecoveredStep = SquareChange | StoredPress
"""One entry of what a board stored while nobody listened: a square change or a clock press."""


class LinkSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How links reach their boards, from the config file (``[ble]``) and the environment."""

    ble_radio: str | None = None
    """A virtual radio's socket (docs/virtual-radio.md) to use instead of the system's
    Bluetooth: for emulated boards (``chessbridge emulate chessnut``) and tests."""
    ble_scan_timeout: float = 10.0
    """Seconds to look for a Bluetooth LE board before giving up (the supervisor retries)."""
    ble_connect_timeout: float = 20.0
    """Seconds one Bluetooth LE connection attempt may take (``[ble] connect_timeout``)."""
    state_dir: str | None = None
    """The table's state directory, where a link may keep what it learnt of its board (a
    Certabo link: which piece each tag is on); ``None``: nothing is kept on disk."""


class ClockSetting(msgspec.Struct, frozen=True, kw_only=True):
    """What to set on the clock, by its physical sides."""

    left: int
    """Seconds on the left display."""
    right: int
    """Seconds on the right display."""
    left_runs: bool
    right_runs: bool
    pause: bool


class BoardMemory(Protocol):
    """A board that logs every change while it is powered, and can be asked for the log."""

    async def recall(self, last_seen: Sequence[Occupant | None]) -> list[RecoveredStep] | None:
        """What was done since the board last looked like ``last_seen`` (its own frame): its
        square changes and the clock presses it stored, oldest first.

        ``None`` when the log cannot say (no starting point in it, nothing stored, or the board
        did not answer): the caller then relies on the full board alone. A board that does not
        answer costs at most a few seconds.

        Once the log is read, the link reports the full board again (a ``BoardSnapshot`` after
        the log's last entry), so that the log and the board reading do not overlap: the
        caller takes the log, then that board, then what follows it.
        """
        ...


class ClockControl(Protocol):
    """A clock the host can set."""

    async def set_clock(self, setting: ClockSetting) -> None:
        """Set both times and which side runs (or pause)."""
        ...


class LedDisplay(Protocol):
    """Lights on or beside the squares."""

    async def show(self, squares: Collection[chess.Square]) -> None:
        """Light exactly ``squares`` (board frame); an empty collection turns every light off."""
        ...


class BatteryGauge(Protocol):
    """A battery the host can ask about."""

    async def battery(self) -> int | None:
        """The charge in percent, or ``None`` if the board did not say."""
        ...


class Capabilities:
    """A link's :attr:`info` and its optional capabilities, each ``None`` (the family lacks it):
    a family's link subclasses this and overrides the capabilities its boards have."""

    _info: BoardInfo

    @property
    def info(self) -> BoardInfo:
        """What the board said of itself so far."""
        return self._info

    @property
    def memory(self) -> BoardMemory | None:
        """The board keeps no log of its changes that the host could read back."""
        return None

    @property
    def clock(self) -> ClockControl | None:
        """No clock the host can set is attached to the board."""
        return None

    @property
    def leds(self) -> LedDisplay | None:
        """The board has no square lights."""
        return None

    @property
    def battery(self) -> BatteryGauge | None:
        """The host cannot read the board's battery (a serial board is powered by its cable)."""
        return None


class BoardLink(Protocol):
    """One connection to one board.

    ``open()`` connects and checks that the board answers as its family does (raising a
    ``LinkError`` otherwise); ``run()`` then delivers events until the link dies (raising
    ``LinkLostError``) or is cancelled; ``close()`` is idempotent.
    """

    @property
    def info(self) -> BoardInfo:
        """What the board said of itself so far (model, serial, firmware, battery)."""
        ...

    @property
    def memory(self) -> BoardMemory | None:
        """The board's own log of changes, if it keeps one."""
        ...

    @property
    def clock(self) -> ClockControl | None:
        """The clock behind the board, if the host can set it."""
        ...

    @property
    def leds(self) -> LedDisplay | None:
        """The board's square lights, if it has any."""
        ...

    @property
    def battery(self) -> BatteryGauge | None:
        """The board's battery, if the host can read it."""
        ...

    async def open(self) -> None:
        """Connect and identify the board."""
        ...

    async def run(self) -> None:
        """Deliver events to the callback until the link dies."""
        ...

    async def close(self) -> None:
        """Disconnect (idempotent)."""
        ...
