"""Board drivers: one family per protocol, and the one registry from URI scheme to link.

``parse_board_uri("dgt:/dev/ttyACM0")`` names the family and its address;
``create_link(uri, on_event, settings)`` builds that family's :class:`~drivers.link.BoardLink`,
importing its module only then, so that a serial board never loads the Bluetooth stack (bleak)
and the daemon never names a family. Adding a family is a module with a
``create(address, on_event, settings)`` function and one line in :data:`FAMILIES`.

A family also says how fast its board reports, as the engine's timing defaults for it (``dwell``
and ``flicker``, see ``bridge/arbiter/engine.py``): a Bluetooth LE board reports at about half a
DGT board's rate, so its pieces rest twice as long on a square they slide over, and a flicker
lasts up to two of its scans; a Certabo board reads the whole board about once a second.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final, cast

import msgspec

from drivers.link import BoardLink, EventCallback, LinkSettings

BLE_DWELL: Final = 0.8
"""Dwell for Bluetooth LE boards: twice the engine's 0.4 s, set for a DGT board's 200-250 ms
scan, since a BLE board reports a change every 400-500 ms (board-protocols.md §1.1: half speed)."""

BLE_FLICKER: Final = 0.3
"""Flicker for Bluetooth LE boards: a badly placed piece reads empty for one scan, twice as long
as on a DGT board; still shorter than a deliberate lift and put-back (a third of a second)."""


CHESSNUT_SCAN: Final = 0.45
"""Seconds between two notifications of a Chessnut board at most (each holds the whole position,
sent on a change at Bluetooth LE pace; the vendor publishes no rate): both players' hands can
act within one, so a notification may show a lift of each (two hands on the board)."""

CERTABO_DWELL: Final = 1.6
"""Dwell for Certabo boards: a reading of the whole board comes about once a second (the
vendor's own simulator; real boards' rate is unpublished), so a piece slid over a square can
show there for a whole second: 1.6 readings, as the DGT's 0.4 s is 1.6 of its scans."""

CERTABO_FLICKER: Final = 1.2
"""Flicker for Certabo boards: a tag missed in one reading reads empty for a whole second."""

CERTABO_SCAN: Final = 1.0
"""Seconds between two readings of a Certabo board: two hands can both act within one."""

# A Millennium board scans every 41 ms (its link sets that), faster than a DGT board: a flicker
# lasts less than the engine's 0.15 s, and the dwell is bound by the hand, not the scan (a slid
# piece is seen on each square for as long as the hand lingers there), so the engine's defaults
# fit it.


class Family(msgspec.Struct, frozen=True):
    """A board family: its URI scheme, what its address is, and where its link is."""

    scheme: str
    description: str
    module: str | None
    """The module whose ``create(address, on_event, settings)`` builds the link; ``None``: not
    written yet."""
    bluetooth_le: bool = False
    """Reached over Bluetooth LE (its module defines ``FAMILY``, a ``BleFamily``, for scan)."""
    emulator: str | None = None
    """``module:Class`` of its emulator (a :class:`drivers.emulation.EmulatedBoard`), if any."""
    dwell: float | None = None
    """The engine's dwell for this family's scan rate; ``None``: the engine's default."""
    flicker: float | None = None
    """The engine's flicker window for this family's scan rate; ``None``: the engine's default."""
    scan: float | None = None
    """Seconds between two readings of a board that reads itself whole at a slow pace (the
    engine's ``scan``); ``None``: it reports changes as they come, or scans quicker than hands."""


FAMILIES: Final[Mapping[str, Family]] = MappingProxyType(
    {
        family.scheme: family
        for family in (
            Family(
                "dgt",
                "DGT e-board over serial, USB or classic-Bluetooth rfcomm (a device path)",
                "drivers.dgt.link",
                emulator="drivers.dgt.emulator:DgtEmulator",
            ),
            Family(
                "pegasus",
                "DGT Pegasus over Bluetooth LE (an address or advertised name)",
                "drivers.pegasus.link",
                bluetooth_le=True,
                emulator="drivers.pegasus.emulator:PegasusEmulator",
                dwell=BLE_DWELL,
                flicker=BLE_FLICKER,
            ),
            Family(
                "chessnut",
                "Chessnut Air/Pro/Go over Bluetooth LE (an address or advertised name)",
                "drivers.chessnut.link",
                bluetooth_le=True,
                emulator="drivers.chessnut.emulator:ChessnutEmulator",
                dwell=BLE_DWELL,
                flicker=BLE_FLICKER,
                scan=CHESSNUT_SCAN,
            ),
            Family(
                "millennium",
                "Millennium ChessLink over USB serial (a device path)",
                "drivers.millennium.link",
                emulator="drivers.millennium.emulator:MillenniumEmulator",
            ),
            Family(
                "millennium-ble",
                "Millennium ChessLink over Bluetooth LE (an address or advertised name)",
                "drivers.millennium_ble.link",
                bluetooth_le=True,
                emulator="drivers.millennium_ble.emulator:MillenniumBleEmulator",
                dwell=BLE_DWELL,
                flicker=BLE_FLICKER,
            ),
            Family(
                "certabo",
                "Certabo over USB serial (a device path)",
                "drivers.certabo.link",
                emulator="drivers.certabo.emulator:CertaboEmulator",
                dwell=CERTABO_DWELL,
                flicker=CERTABO_FLICKER,
                scan=CERTABO_SCAN,
            ),
        )
    }
)
"""Every board family of the contract, by URI scheme."""

SCHEMES: Final = MappingProxyType({scheme: f.description for scheme, f in FAMILIES.items()})
"""Every board URI scheme of the contract, with what its address is."""

AVAILABLE: Final = frozenset(scheme for scheme, f in FAMILIES.items() if f.module is not None)
"""Schemes with a driver in this version."""

EMULATED: Final = tuple(sorted(scheme for scheme, f in FAMILIES.items() if f.emulator is not None))
"""Schemes whose family has an emulator (``chessbridge emulate``), sorted."""


class BoardUri(msgspec.Struct, frozen=True):
    """A parsed board URI: ``scheme:address``."""

    scheme: str
    address: str

    def __str__(self) -> str:
        return f"{self.scheme}:{self.address}"


def parse_board_uri(text: str) -> BoardUri:
    """Parse ``scheme:address``.

    Raises:
        ValueError: unknown scheme, missing address, or a driver not available yet; the message
            lists what is accepted.
    """
    scheme, sep, address = text.partition(":")
    known = ", ".join(f"{name}:…" for name in SCHEMES)
    if not sep or not address:
        raise ValueError(f"board URI {text!r} must be scheme:address, e.g. dgt:/dev/ttyACM0")
    if scheme not in SCHEMES:
        raise ValueError(f"unknown board type {scheme!r} in {text!r}; known: {known}")
    if scheme not in AVAILABLE:
        raise ValueError(
            f"the {scheme} driver ({SCHEMES[scheme]}) is not available in this version; "
            f"available: {', '.join(sorted(AVAILABLE))}"
        )
    return BoardUri(scheme, address)


def create_link(
    uri: BoardUri, on_event: EventCallback, settings: LinkSettings | None = None
) -> BoardLink:
    """A new, unopened link to the board at ``uri``, delivering its events to ``on_event``.

    Raises:
        ValueError: the scheme has no driver in this version.
    """
    family = FAMILIES.get(uri.scheme)
    if family is None or family.module is None:
        raise ValueError(f"no driver for {uri.scheme!r} board URIs in this version")
    module = importlib.import_module(family.module)
    create = cast("Callable[[str, EventCallback, LinkSettings], BoardLink]", module.create)
    return create(uri.address, on_event, settings or LinkSettings())
