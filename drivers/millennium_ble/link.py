"""Millennium ChessLink over Bluetooth LE: the family as the generic link needs it.

The board speaks the serial ChessLink protocol over Microchip's transparent UART service, so the
codec is the serial family's (:class:`drivers.millennium.codec.MillenniumCodec`), fed with the
notifications; everything else is :class:`drivers.ble.link.BleBoardLink`'s. Start-up: version,
scan time, automatic reports on every change, and the whole board once (``codec.setup()``).
The board knows every piece and lights square corners; it has no clock, no battery the host
can read, and no memory of moves.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import chess

from drivers.ble.link import BleBoardLink, BleFamily
from drivers.events import BoardEvent
from drivers.link import BoardLink, EventCallback, LinkSettings
from drivers.millennium import codec
from drivers.millennium_ble import protocol as p


class MillenniumBleCodec:
    """The ChessLink codec on the notifying characteristic; acknowledgements stay here."""

    def __init__(self) -> None:
        self._codec = codec.MillenniumCodec()

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        """Decode a notification; the board's acknowledgements are not physical events."""
        if source != p.NOTIFY:
            return []
        return [e for e in self._codec.feed(data, at) if not isinstance(e, codec.Acknowledged)]


def leds(squares: Collection[chess.Square]) -> bytes:
    """Light exactly ``squares`` (their four corners); none: every LED off."""
    return codec.leds(squares) if squares else codec.leds_off()


FAMILY: Final = BleFamily(
    scheme="millennium-ble",
    label="Millennium ChessLink",
    service=p.SERVICE,
    unique_service=False,
    names=p.NAME_PREFIXES,
    notify=(p.NOTIFY,),
    write=p.WRITE,
    write_gap=p.WRITE_GAP,
    codec=MillenniumBleCodec,
    startup=codec.setup(),
    leds=leds,
)
"""The ChessLink's GATT layout and start-up (§4)."""


def create(address: str, on_event: EventCallback, settings: LinkSettings) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a Millennium board at ``address``."""
    return BleBoardLink(FAMILY, address, on_event, settings)
