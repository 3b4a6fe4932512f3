"""Chessnut Air/Air+/Pro/Go over Bluetooth LE: the family as the generic link needs it.

Everything but the bytes is :class:`drivers.ble.link.BleBoardLink`'s: finding the board,
connecting, reconnecting, pacing writes. The board reports its whole position on every change
once real-time reporting is on (board-protocols.md §3); it knows every piece, lights squares
(:class:`~drivers.link.LedDisplay`) and reports its battery (:class:`~drivers.link.BatteryGauge`).
It has no clock and keeps no log of moves the host could read back.
"""

from __future__ import annotations

from typing import Final

from drivers.ble.link import BleBoardLink, BleFamily
from drivers.chessnut import codec
from drivers.chessnut import protocol as p
from drivers.link import BoardLink, EventCallback, LinkSettings

FAMILY: Final = BleFamily(
    scheme="chessnut",
    label="Chessnut Air/Pro/Go",
    service=p.FEN_SERVICE,
    services=(p.OPERATION_SERVICE,),
    names=p.NAME_PREFIXES,
    notify=(p.FEN_NOTIFY, p.OPERATION_NOTIFY),
    write=p.OPERATION_WRITE,
    write_response=True,
    codec=codec.ChessnutCodec,
    startup=(codec.realtime(),),
    battery_request=codec.battery(),
    leds=codec.leds,
)
"""Chessnut's GATT layout, start-up and commands (§3)."""


def create(address: str, on_event: EventCallback, settings: LinkSettings) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a Chessnut board at ``address``."""
    return BleBoardLink(FAMILY, address, on_event, settings)
