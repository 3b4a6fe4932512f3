"""Millennium ChessLink board over a serial port (USB): the I/O shell.

Opens the port at 38400 baud as 8N1 (the codec puts the odd-parity bit into bit 7 itself, which
on the wire is the board's 7O1), then sends the codec's setup: the version request, the scan time
and "report every change" in the board's E2ROM, and a status request. The board is identified
once it has answered with its version and its whole board. A status request every second keeps
the link checked (in "report on change" mode a board with nothing to say is silent) and heals a
report lost to line noise; a board silent for ``dead_after`` seconds is declared lost. All
decoding is the codec's (board-protocols.md §4).

Capabilities (:mod:`drivers.link`): the LEDs (the four corner lights of each square).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Final

import chess

from drivers import _serial
from drivers._serial import SerialPort
from drivers.events import BoardInfo, BoardSnapshot, merge_info
from drivers.link import (
    BatteryGauge,
    BoardLink,
    BoardMemory,
    ClockControl,
    EventCallback,
    LinkSettings,
)
from drivers.millennium import codec
from drivers.millennium.codec import Acknowledged, MillenniumCodec, MillenniumEvent
from drivers.millennium.protocol import BAUD

log = logging.getLogger(__name__)

MODEL: Final = "Millennium ChessLink"
"""What the board is called in its ``board`` topic (it does not name itself)."""


class MillenniumSerialLink:
    """One open connection to a Millennium board; ``run()`` reads until the link dies."""

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
        self.codec = MillenniumCodec()
        self._port: SerialPort | None = None
        self._info = BoardInfo(at=0.0, trademark=MODEL)

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def info(self) -> BoardInfo:
        """What the board said of itself during ``open()``."""
        return self._info

    @property
    def memory(self) -> BoardMemory | None:
        """A Millennium board keeps no log of its changes."""
        return None

    @property
    def clock(self) -> ClockControl | None:
        """No clock is attached to a Millennium board."""
        return None

    @property
    def leds(self) -> MillenniumSerialLink:
        """The 81 corner lights: :meth:`show`."""
        return self

    @property
    def battery(self) -> BatteryGauge | None:
        """Powered by its cable."""
        return None

    async def show(self, squares: Collection[chess.Square]) -> None:
        """Light ``squares`` (board frame), every other light off.

        The lights are on the corners: a square between two lit ones in a line shares all
        its corners with them and looks lit too (e3, for e2 and e4).
        """
        await self._write(codec.leds(squares) if squares else codec.leds_off())

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and check that a Millennium board answers; raise a ``LinkError`` if not."""
        self._port = port = await SerialPort.open(
            self.path, baudrate=BAUD, example="millennium:/dev/ttyUSB0"
        )
        await port.write(*codec.setup())
        seen: set[str] = set()

        def answered(data: bytes, now: float) -> bool:
            for event in self.codec.feed(data, now):
                if isinstance(event, BoardInfo):
                    seen.add("version")
                    self._info = merge_info(self._info, event)
                elif isinstance(event, BoardSnapshot):
                    seen.add("board")
                self._dispatch(event)
            return seen == {"version", "board"}

        await port.identify(
            answered,
            within=self._identify_timeout,
            failure=f"{self.path} opened but no Millennium board answered within "
            f"{self._identify_timeout:g} s (expected a ChessLink board at 38400 baud, 7 bits, "
            "odd parity)",
        )

    async def run(self) -> None:
        """Read and decode until the board goes silent or the port closes (``LinkLostError``)."""
        port = self._port
        assert port is not None, "open() first"
        await port.pump(
            self._feed,
            dead_after=self._dead_after,
            keepalive=codec.status(),
            every=self._keepalive,
        )

    async def close(self) -> None:
        """Close the port (idempotent)."""
        if self._port is not None:
            await self._port.close()

    async def _write(self, *commands: bytes) -> None:
        if self._port is not None:
            await self._port.write(*commands)

    def _feed(self, data: bytes, now: float) -> None:
        for event in self.codec.feed(data, now):
            self._dispatch(event)

    def _dispatch(self, event: MillenniumEvent) -> None:
        if isinstance(event, Acknowledged):
            log.debug("%s: %s %s acknowledged", self.path, event.reply, event.data)
        else:
            self._on_event(event)


def create(path: str, on_event: EventCallback, settings: LinkSettings | None = None) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a Millennium board at ``path``."""
    return MillenniumSerialLink(path, on_event)


async def probe(path: str, within: float = 1.5) -> BoardInfo | None:
    """Whether a Millennium board answers at ``path`` (for ``chessbridge scan``): its identity.

    Sends only the version request (nothing is written to the board's E2ROM).
    """
    mill = MillenniumCodec()

    def identity(data: bytes, now: float) -> BoardInfo | None:
        for event in mill.feed(data, now):
            if isinstance(event, BoardInfo):
                return merge_info(BoardInfo(at=now, trademark=MODEL), event)
        return None

    return await _serial.probe(
        path, baudrate=BAUD, send=(codec.version(),), identity=identity, within=within
    )
