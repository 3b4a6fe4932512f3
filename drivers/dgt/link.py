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

import serial
import serial_asyncio_fast

from drivers.dgt import codec, memory
from drivers.dgt.events import ClockAck, DgtEvent, StoredChange, StoredClockTime, StoredMarker
from drivers.errors import BoardNotFoundError, LinkLostError, NotABoardError
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
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._info = BoardInfo(at=0.0)
        self._write_lock = asyncio.Lock()
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
        try:
            self._reader, self._writer = await serial_asyncio_fast.open_serial_connection(
                url=self.path, baudrate=BAUD, bytesize=8, parity="N", stopbits=1
            )
        except (OSError, serial.SerialException) as exc:
            raise BoardNotFoundError(
                self.path,
                f"cannot open board at {self.path}: {_reason(exc)}; check that the board is "
                "plugged in and the path is right (e.g. dgt:/dev/ttyACM0)",
            ) from exc
        await self.send(*STARTUP)
        try:
            await asyncio.wait_for(self._identify(), self._identify_timeout)
        except TimeoutError:
            await self.close()
            raise NotABoardError(
                self.path,
                f"{self.path} opened but no DGT board answered within "
                f"{self._identify_timeout:g} s (expected a DGT e-board speaking the DGT serial "
                "protocol at 9600 baud)",
            ) from None

    async def send(self, *commands: bytes) -> None:
        """Write commands to the board, in order."""
        writer = self._writer
        if writer is None:
            return
        async with self._write_lock:
            for command in commands:
                writer.write(command)
            with contextlib.suppress(OSError, serial.SerialException):
                await writer.drain()

    async def run(self) -> None:
        """Read and decode until the board goes silent or the port closes (``LinkLostError``)."""
        reader = self._reader
        assert reader is not None, "open() first"
        keepalive = asyncio.create_task(self._keep_alive())
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    data = await asyncio.wait_for(reader.read(4096), self._dead_after)
                except TimeoutError:
                    raise LinkLostError(
                        self.path, f"board at {self.path} silent for {self._dead_after:g} s"
                    ) from None
                except (OSError, serial.SerialException) as exc:
                    raise LinkLostError(
                        self.path, f"board at {self.path} lost: {_reason(exc)}"
                    ) from exc
                if not data:
                    raise LinkLostError(self.path, f"board at {self.path} closed the connection")
                for event in self.codec.feed(data, loop.time()):
                    self._dispatch(event)
        finally:
            keepalive.cancel()
            await self.close()

    async def close(self) -> None:
        """Close the port (idempotent)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _identify(self) -> None:
        """Read until the board has answered with its version and its full board."""
        reader = self._reader
        assert reader is not None
        loop = asyncio.get_running_loop()
        seen_version = seen_board = False
        while not (seen_version and seen_board):
            data = await reader.read(4096)
            if not data:
                raise LinkLostError(self.path, f"board at {self.path} closed the connection")
            for event in self.codec.feed(data, loop.time()):
                if isinstance(event, BoardInfo):
                    seen_version = seen_version or event.version is not None
                    self._info = merge_info(self._info, event)
                elif isinstance(event, BoardSnapshot):
                    seen_board = True
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

    async def _keep_alive(self) -> None:
        while True:
            await asyncio.sleep(self._keepalive)
            await self.send(codec.serial_number())


def _reason(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError) or "No such file" in str(exc):
        return "no such device"
    if isinstance(exc, PermissionError) or "Permission denied" in str(exc):
        return "permission denied (is the user in the dialout group?)"
    return str(exc) or type(exc).__name__


def create(path: str, on_event: EventCallback, settings: LinkSettings | None = None) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a DGT board on the port at ``path``."""
    return DgtSerialLink(path, on_event)
