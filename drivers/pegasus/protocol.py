"""DGT Pegasus Bluetooth LE protocol: byte values and UUIDs only.

Restates board-protocols.md §2: the Nordic UART service carrying the DGT serial framing (§1.4)
with mostly the DGT commands, but occupancy only and no clock. This module holds data, no
behaviour; the codec in ``drivers.pegasus.codec`` interprets it.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from types import MappingProxyType
from typing import Final

# --- §2 GATT: Nordic UART Service -------------------------------------------------------------

SERVICE: Final = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
WRITE: Final = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
"""RX: the host writes commands here (write without response)."""
NOTIFY: Final = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
"""TX: the board notifies its messages here."""

NAME_PREFIXES: Final = ("DGT_PEGASUS",)
"""Advertised names: ``DGT_PEGASUS_<serial>`` (§2 [uncertain])."""

# --- §1.3 / §2 host → board commands ----------------------------------------------------------

CMD_RESET: Final = 0x40
"""No reply (§2)."""
CMD_SEND_BRD: Final = 0x42
CMD_SEND_UPDATE_BRD: Final = 0x44
"""Field updates only: the Pegasus has no clock (§2)."""
CMD_SEND_TRADEMARK: Final = 0x47
CMD_SEND_BATTERY_STATUS: Final = 0x4C
CMD_SEND_VERSION: Final = 0x4D
CMD_LEDS: Final = 0x60
"""``60 <len> 05 <speed> <mode> <brightness> <square...> 00``; off is ``60 02 00 00`` (§2)."""
LEDS_ON: Final = 0x05
LED_SPEED: Final = 0x01
LED_MODE_STEADY: Final = 0x00
"""Repeat 0: forever (§2, MONO)."""
LED_BRIGHTEST: Final = 0x00

# --- §1.4 / §1.5 / §2 board → host messages, in the DGT framing -----------------------------

MSG_BOARD_DUMP: Final = 0x86
MSG_FIELD_UPDATE: Final = 0x8E
MSG_SERIALNR: Final = 0x91
MSG_TRADEMARK: Final = 0x92
MSG_VERSION: Final = 0x93
MSG_BATTERY_STATUS: Final = 0xA0
MSG_LONG_SERIALNR: Final = 0xA2

HEADER_SIZE: Final = 3
MAX_TRADEMARK_SIZE: Final = HEADER_SIZE + 200
"""The Pegasus trademark is four lines of text (§2), longer than a DGT board's 64 bytes."""

MESSAGE_NAMES: Final[Mapping[int, str]] = MappingProxyType(
    {
        MSG_BOARD_DUMP: "BOARD_DUMP",
        MSG_FIELD_UPDATE: "FIELD_UPDATE",
        MSG_SERIALNR: "SERIALNR",
        MSG_TRADEMARK: "TRADEMARK",
        MSG_VERSION: "VERSION",
        MSG_BATTERY_STATUS: "BATTERY_STATUS",
        MSG_LONG_SERIALNR: "LONG_SERIALNR",
    }
)
MESSAGE_SIZES: Final[Mapping[int, Container[int]]] = MappingProxyType(
    {
        MSG_BOARD_DUMP: frozenset({67}),
        MSG_FIELD_UPDATE: frozenset({5}),
        MSG_SERIALNR: frozenset({8, 12}),
        MSG_TRADEMARK: range(HEADER_SIZE, MAX_TRADEMARK_SIZE + 1),
        MSG_VERSION: frozenset({5}),
        MSG_BATTERY_STATUS: frozenset({12}),
        MSG_LONG_SERIALNR: frozenset({13}),
    }
)

EMPTY_CODES: Final = frozenset({0x00, 0x7F})
"""A square with nothing on it: 0x00 (DCMA's emulator, MONO), or 0x7F (DCMA's sniffer on a
real board, §2 [conflict]). Any other code is a piece, which the board cannot identify."""
