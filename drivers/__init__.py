"""Board drivers: one family per protocol, and the one registry from URI scheme to link.

``parse_board_uri("dgt:/dev/ttyACM0")`` names the family and its address;
``create_link(uri, on_event)`` builds that family's :class:`~drivers.link.BoardLink`, importing
its module only then, so that a serial board never loads the Bluetooth stack (bleak) and the
daemon never names a family. Adding a family is a module with a ``create(address, on_event)``
function and one line in :data:`FAMILIES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, cast

from drivers.link import BoardLink, EventCallback


@dataclass(frozen=True, slots=True)
class Family:
    """A board family: its URI scheme, what its address is, and where its link is."""

    scheme: str
    description: str
    module: str | None
    """The module whose ``create(address, on_event)`` builds the link; ``None``: not written yet."""


FAMILIES: Final[Mapping[str, Family]] = MappingProxyType(
    {
        family.scheme: family
        for family in (
            Family(
                "dgt",
                "DGT e-board over serial, USB or classic-Bluetooth rfcomm (a device path)",
                "drivers.dgt.link",
            ),
            Family("pegasus", "DGT Pegasus over Bluetooth LE (an address)", None),
            Family("chessnut", "Chessnut Air/Pro/Go over Bluetooth LE (an address)", None),
            Family("millennium", "Millennium ChessLink over USB serial (a device path)", None),
            Family("millennium-ble", "Millennium ChessLink over Bluetooth LE (an address)", None),
            Family("certabo", "Certabo over USB serial (a device path)", None),
        )
    }
)
"""Every board family of the contract, by URI scheme."""

SCHEMES: Final = MappingProxyType({scheme: f.description for scheme, f in FAMILIES.items()})
"""Every board URI scheme of the contract, with what its address is."""

AVAILABLE: Final = frozenset(scheme for scheme, f in FAMILIES.items() if f.module is not None)
"""Schemes with a driver in this version."""


@dataclass(frozen=True, slots=True)
class BoardUri:
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


def create_link(uri: BoardUri, on_event: EventCallback) -> BoardLink:
    """A new, unopened link to the board at ``uri``, delivering its events to ``on_event``.

    Raises:
        ValueError: the scheme has no driver in this version.
    """
    family = FAMILIES.get(uri.scheme)
    if family is None or family.module is None:
        raise ValueError(f"no driver for {uri.scheme!r} board URIs in this version")
    module = importlib.import_module(family.module)
    create = cast("Callable[[str, EventCallback], BoardLink]", module.create)
    return create(uri.address, on_event)
