"""DGT board over a serial port (USB, RS232, classic-Bluetooth rfcomm): the I/O shell.

Opens the port at 9600 8N1, takes the board out of bus mode, identifies it, asks for the full
board and puts it in UPDATE_NICE mode so that field changes and clock data arrive by themselves
(board-protocols.md §1.2, §1.10). A keep-alive asks for the serial number every second; a board
that stays silent for ``dead_after`` seconds is declared lost. All decoding is the codec's.

Capabilities (:mod:`drivers.link`): the board's memory (EE_MOVES, §1.11) and the DGT 3000
clock's SETNRUN. The DGT-only events of the codec (clock acknowledgements, the stored log) stay
here; the daemon gets the events of :mod:`drivers.events` only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Final

from drivers import _serial
from drivers._serial import SerialPort
from drivers.dgt import codec, memory
from drivers.dgt.events import ClockAck, DgtEvent, StoredChange, StoredClockTime, StoredMarker
from drivers.events import BoardInfo, BoardSnapshot, Occupant, merge_info
from drivers.link import (
    BatteryGauge,
    BoardLink,
    ClockSetting,
    EventCallback,
    LedDisplay,
    LinkSettings,
    SquareChange,
)

log = logging.getLogger(__name__)

BAUD: Final = 9600
"""DGT serial speed (§1.1)."""

STARTUP: Final = (
    codec.reset(),  # leaves bus mode (any single-board command does), IDLE
    codec.version(),
    codec.serial_number(),
    codec.send_board(),
    codec.update_nice(),  # field updates + clock data when it changes (§1.2)
    codec.clock_version(),  # a clock behind the board answers with an ack
)
"""What the host sends after opening the port."""

MEMORY_TIMEOUT: Final = 15.0
"""Seconds to wait for the board's memory (a full DGT EEPROM takes about 8 s at 9600 baud)."""


class DgtSerialLink:
    """One open connection to a DGT board; ``run()`` reads until the link dies."""

    def __init__(
        self,
        path: str,
        on_event: EventCallback,
        *,
        identify_timeout: float = 3.0,
        keepalive: float = 1.0,
        dead_after: float = 4.0,
    ) -> None:
        self.path = path
        self._on_event = on_event
        self._identify_timeout = identify_timeout
        self._keepalive = keepalive
        self._dead_after = dead_after
        self.codec = codec.DgtCodec()
        self._port: SerialPort | None = None
        self._info = BoardInfo(at=0.0)
        self._stored: list[DgtEvent] | None = None
        self._stored_arrived = asyncio.Event()

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def info(self) -> BoardInfo:
        """What the board said of itself during ``open()``."""
        return self._info

    @property
    def memory(self) -> DgtSerialLink:
        """The board's EEPROM log of changes: :meth:`recall`."""
        return self

    @property
    def clock(self) -> DgtSerialLink:
        """The DGT 3000 behind the board: :meth:`set_clock`."""
        return self

    @property
    def leds(self) -> LedDisplay | None:
        """A DGT serial board has no square lights."""
        return None

    @property
    def battery(self) -> BatteryGauge | None:
        """A DGT serial board is powered by its cable."""
        return None

    async def recall(self, last_seen: Sequence[Occupant | None]) -> list[SquareChange] | None:
        """Ask for the board's memory (EE_MOVES) and read the changes made since ``last_seen``.

        Waits for the first stored entries, at most ``MEMORY_TIMEOUT`` seconds.
        """
        self._stored = []
        self._stored_arrived.clear()
        try:
            await self.send(codec.ee_moves())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stored_arrived.wait(), MEMORY_TIMEOUT)
            stored = self._stored
        finally:
            self._stored = None
        return memory.changes_since(stored, last_seen)

    async def set_clock(self, setting: ClockSetting) -> None:
        """SETNRUN: both times, and which side counts down (or pause)."""
        await self.send(
            codec.clock_set_and_run(
                setting.left,
                setting.right,
                left_runs=setting.left_runs,
                right_runs=setting.right_runs,
                pause=setting.pause,
            )
        )

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and check that a DGT board answers; raise a ``LinkError`` if not."""
        self._port = port = await SerialPort.open(
            self.path, baudrate=BAUD, example="dgt:/dev/ttyACM0"
        )
        await port.write(*STARTUP)
        seen: set[str] = set()

        def answered(data: bytes, now: float) -> bool:
            for event in self.codec.feed(data, now):
                if isinstance(event, BoardInfo):
                    if event.version is not None:
                        seen.add("version")
                    self._info = merge_info(self._info, event)
                elif isinstance(event, BoardSnapshot):
                    seen.add("board")
                self._dispatch(event)
            return seen == {"version", "board"}

        await port.identify(
            answered,
            within=self._identify_timeout,
            failure=f"{self.path} opened but no DGT board answered within "
            f"{self._identify_timeout:g} s (expected a DGT e-board speaking the DGT serial "
            "protocol at 9600 baud)",
        )

    async def send(self, *commands: bytes) -> None:
        """Write commands to the board, in order."""
        if self._port is not None:
            await self._port.write(*commands)

    async def run(self) -> None:
        """Read and decode until the board goes silent or the port closes (``LinkLostError``)."""
        port = self._port
        assert port is not None, "open() first"
        await port.pump(
            self._feed,
            dead_after=self._dead_after,
            keepalive=codec.serial_number(),
            every=self._keepalive,
        )

    async def close(self) -> None:
        """Close the port (idempotent)."""
        if self._port is not None:
            await self._port.close()

    def _feed(self, data: bytes, now: float) -> None:
        for event in self.codec.feed(data, now):
            self._dispatch(event)

    def _dispatch(self, event: DgtEvent) -> None:
        """Generic events to the callback; the stored log to :meth:`recall`; acks nowhere."""
        if isinstance(event, StoredChange | StoredMarker | StoredClockTime):
            stored = self._stored
            if stored is not None:
                stored.append(event)
                # Set after the rest of this message: the codec reports a whole answer at once.
                asyncio.get_running_loop().call_soon(self._stored_arrived.set)
        elif not isinstance(event, ClockAck):
            self._on_event(event)


def create(path: str, on_event: EventCallback, settings: LinkSettings | None = None) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a DGT board on the port at ``path``."""
    return DgtSerialLink(path, on_event)


async def probe(path: str, within: float = 1.5) -> BoardInfo | None:
    """Whether a DGT board answers at ``path`` (for ``chessbridge scan``): its identity.

    Sends only the reset (leaving bus mode), version and serial number requests.
    """
    dgt = codec.DgtCodec()
    info = BoardInfo(at=0.0, trademark="DGT e-board")

    def identity(data: bytes, now: float) -> BoardInfo | None:
        nonlocal info
        for event in dgt.feed(data, now):
            if isinstance(event, BoardInfo):
                info = merge_info(info, event)
        return info if info.version is not None and info.serial is not None else None

    return await _serial.probe(
        path,
        baudrate=BAUD,
        send=(codec.reset(), codec.version(), codec.serial_number()),
        identity=identity,
        within=within,
    )
