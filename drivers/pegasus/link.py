"""DGT Pegasus over Bluetooth LE: the family as the generic link needs it.

Everything but the bytes is :class:`drivers.ble.link.BleBoardLink`'s. The Pegasus speaks the DGT
framing over the Nordic UART service (board-protocols.md §2); it senses occupancy only, so every
piece it reports is :data:`~drivers.events.UNKNOWN` and the engine infers which from the game.
It lights squares and reports its battery; it has no clock and no move memory the host reads.

Start-up: reset, lights off, version, trademark (the codec reads the serial number out of it
and names the model ``DGT Pegasus``), the board, then field updates. The official app also
sends a developer key (``63 07 <key> 00``) that is not public; boards seen by other hosts
report without it (§2 [uncertain]).
"""

from __future__ import annotations

from typing import Final

from drivers.ble.link import BleBoardLink, BleFamily
from drivers.link import BoardLink, EventCallback, LinkSettings
from drivers.pegasus import codec
from drivers.pegasus import protocol as p

FAMILY: Final = BleFamily(
    scheme="pegasus",
    label="DGT Pegasus",
    service=p.SERVICE,
    unique_service=False,  # the Nordic UART service is every other gadget's too
    names=p.NAME_PREFIXES,
    notify=(p.NOTIFY,),
    write=p.WRITE,
    codec=codec.PegasusCodec,
    startup=(
        codec.reset(),
        codec.leds([]),
        codec.version(),
        codec.trademark(),
        codec.send_board(),
        codec.update_board(),
    ),
    battery_request=codec.battery(),
    leds=codec.leds,
)
"""The Pegasus's GATT layout, start-up and commands (§2)."""


def create(address: str, on_event: EventCallback, settings: LinkSettings) -> BoardLink:
    """The registry's factory (``drivers.create_link``): a DGT Pegasus at ``address``."""
    return BleBoardLink(FAMILY, address, on_event, settings)
