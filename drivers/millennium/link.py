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
from drivers._serial import SerialBoardLink
from drivers.events import BoardInfo, merge_info
from drivers.link import BoardLink, EventCallback, LinkSettings
from drivers.millennium import codec
from drivers.millennium.codec import Acknowledged, MillenniumCodec, MillenniumEvent
from drivers.millennium.protocol import BAUD

log = logging.getLogger(__name__)

MODEL: Final = "Millennium ChessLink"
"""What the board is called in its ``board`` topic (it does not name itself)."""


class MillenniumSerialLink(SerialBoardLink[MillenniumEvent]):
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
        super().__init__(
            path,
            on_event,
            info=BoardInfo(at=0.0, trademark=MODEL),
            identify_timeout=identify_timeout,
            dead_after=dead_after,
            keepalive=codec.status(),
            every=keepalive,
        )
        self.codec: MillenniumCodec = MillenniumCodec()

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def leds(self) -> MillenniumSerialLink:
        """The 81 corner lights: :meth:`show`."""
        return self

    async def show(self, squares: Collection[chess.Square]) -> None:
        """Light ``squares`` (board frame), every other light off.

        The lights are on the corners: a square between two lit ones in a line shares all
        its corners with them and looks lit too (e3, for e2 and e4).
        """
        await self.send(codec.leds(squares) if squares else codec.leds_off())

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port and check that a Millennium board answers; raise a ``LinkError`` if not."""
        await self._open_port(
            baudrate=BAUD, example="millennium:/dev/ttyUSB0", startup=codec.setup()
        )
        await self._identify(
            failure=f"{self.path} opened but no Millennium board answered within "
            f"{self._identify_timeout:g} s (expected a ChessLink board at 38400 baud, 7 bits, "
            "odd parity)",
            version=True,
        )

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
