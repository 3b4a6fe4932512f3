"""Chessnut Bluetooth LE protocol: byte values and UUIDs only.

Every table restates board-protocols.md §3 (Chessnut's own published API, with the
reverse-engineering notes where it is silent). This module holds data, no behaviour; the codec in
``drivers.chessnut.codec`` interprets it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

import chess

# --- §3 GATT services and characteristics ----------------------------------------------------

FEN_SERVICE: Final = "1b7e8261-2877-41c3-b46e-cf057c562023"
FEN_NOTIFY: Final = "1b7e8262-2877-41c3-b46e-cf057c562023"
"""The board notifies its position here."""
OPERATION_SERVICE: Final = "1b7e8271-2877-41c3-b46e-cf057c562023"
OPERATION_WRITE: Final = "1b7e8272-2877-41c3-b46e-cf057c562023"
"""The host writes commands here."""
OPERATION_NOTIFY: Final = "1b7e8273-2877-41c3-b46e-cf057c562023"
"""The board answers commands here (the battery level)."""

NAME_PREFIXES: Final = ("Chessnut", "Smart Chess")
"""Advertised names start with one of these (§3)."""

# --- §3 position notification: 01 24, 32 position bytes, 4 more bytes ------------------------

POSITION_HEADER: Final = bytes([0x01, 0x24])
"""A position notification starts with these; 0x24 = 36 bytes follow."""
POSITION_SIZE: Final = 38
"""Total size of a position notification (the 36 bytes after the header, §3 [conflict])."""
POSITION_BYTES: Final = 32
"""Bytes 2..33: two squares per byte, low nibble first."""

SQUARE_ORDER: Final = tuple(chess.square(7 - i % 8, 7 - i // 8) for i in range(64))
"""Squares in the order of the nibbles: h8, g8, ..., a8, h7, ..., a1 (§3)."""

NIBBLE_PIECES: Final[Mapping[int, str | None]] = MappingProxyType(
    {
        0x0: None, 0x1: "q", 0x2: "k", 0x3: "b", 0x4: "p", 0x5: "n", 0x6: "R",
        0x7: "P", 0x8: "r", 0x9: "B", 0xA: "N", 0xB: "Q", 0xC: "K",
    }
)  # fmt: skip
"""Nibble → FEN letter (``None``: empty); 0xD-0xF are not pieces."""

# --- §3 commands (written to OPERATION_WRITE) and their answers -------------------------------

CMD_REALTIME: Final = bytes([0x21, 0x01, 0x00])
"""Enable real-time reporting: the position now and on every change."""
CMD_BATTERY: Final = bytes([0x29, 0x01, 0x00])
"""Ask for the battery level."""
CMD_LEDS: Final = bytes([0x0A, 0x08])
"""Followed by 8 bytes, one per rank from 8 to 1; bit 7 = a-file .. bit 0 = h-file."""

ANSWER_BATTERY: Final = 0x2A
"""``2A 02 <level> <x>``: level bits 0-6 are the percent; charging is bit 7 of the level (§3),
or x == 1 (§3 [conflict]: both are read)."""
BATTERY_CHARGING_BIT: Final = 0x80
BATTERY_PERCENT_MASK: Final = 0x7F
MAX_ANSWER_SIZE: Final = 64
"""Longest answer payload accepted on the operation characteristic."""
