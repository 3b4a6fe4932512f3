"""Board drivers: one codec per protocol family, and the URI scheme that selects it.

``parse_board_uri("dgt:/dev/ttyACM0")`` names the driver and its address. Links are imported
lazily by the daemon so that the serial path never imports the BLE stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

SCHEMES: Final = {
    "dgt": "DGT e-board over serial, USB or classic-Bluetooth rfcomm (a device path)",
    "pegasus": "DGT Pegasus over Bluetooth LE (an address)",
    "chessnut": "Chessnut Air/Pro/Go over Bluetooth LE (an address)",
    "millennium": "Millennium ChessLink over USB serial (a device path)",
    "millennium-ble": "Millennium ChessLink over Bluetooth LE (an address)",
    "certabo": "Certabo over USB serial (a device path)",
}
"""Every board URI scheme of the contract, with what its address is."""

AVAILABLE: Final = frozenset({"dgt"})
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
