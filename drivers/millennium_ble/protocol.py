"""Millennium ChessLink over Bluetooth LE: UUIDs and name (board-protocols.md §4).

The bytes are the serial ChessLink protocol's (``drivers.millennium``: 7-bit ASCII with odd
parity in bit 7, block check), carried by Microchip's "transparent UART" service.
"""

from __future__ import annotations

from typing import Final

SERVICE: Final = "49535343-fe7d-4ae5-8fa9-9fafd205e455"
"""Microchip transparent UART (generic: other gadgets use it too)."""
NOTIFY: Final = "49535343-1e4d-4bd9-ba61-23c647249616"
"""Board → host."""
WRITE: Final = "49535343-8841-43f4-a8d4-ecbe34729bb3"
"""Host → board."""
NAME_PREFIXES: Final = ("MILLENNIUM CHESS",)
WRITE_GAP: Final = 0.1
"""Seconds between two commands: python-mchess keeps at least this much between BLE writes."""
