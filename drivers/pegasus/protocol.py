"""DGT Pegasus Bluetooth LE protocol: byte values and UUIDs only.

Restates board-protocols.md §2: the Nordic UART service carrying the DGT serial framing (§1.4)
with mostly the DGT commands, but occupancy only and no clock. The commands and messages it
shares with a DGT board are named here by their DGT values (:mod:`drivers.dgt.protocol`). This
module holds data, no behaviour; the codec in ``drivers.pegasus.codec`` interprets it.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from types import MappingProxyType
from typing import Final

from drivers.dgt import protocol as dgt

# --- §2 GATT: Nordic UART Service -------------------------------------------------------------

SERVICE: Final = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
WRITE: Final = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
"""RX: the host writes commands here (write without response)."""
NOTIFY: Final = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
"""TX: the board notifies its messages here."""

NAME_PREFIXES: Final = ("DGT_PEGASUS",)
"""Advertised names: ``DGT_PEGASUS_<serial>`` (§2 [uncertain])."""

MODEL: Final = "DGT Pegasus"
"""The board's model, published once its trademark message identifies it."""
SERIAL_LABEL: Final = "serial no:"
"""The trademark's last line is ``hardware version: x, serial no: z`` (§2, DCMA)."""

# --- §1.3 / §2 host → board commands ----------------------------------------------------------

CMD_RESET: Final = dgt.CMD_SEND_RESET
"""No reply (§2)."""
CMD_SEND_BRD: Final = dgt.CMD_SEND_BRD
CMD_SEND_UPDATE_BRD: Final = dgt.CMD_SEND_UPDATE_BRD
"""Field updates only: the Pegasus has no clock (§2)."""
CMD_SEND_TRADEMARK: Final = dgt.CMD_SEND_TRADEMARK
CMD_SEND_BATTERY_STATUS: Final = dgt.CMD_SEND_BATTERY_STATUS
CMD_SEND_VERSION: Final = dgt.CMD_SEND_VERSION
CMD_LEDS: Final = 0x60
"""``60 <len> 05 <speed> <mode> <brightness> <square...> 00``; off is ``60 02 00 00`` (§2)."""
LEDS_ON: Final = 0x05
LED_SPEED: Final = 0x01
LED_MODE_STEADY: Final = 0x00
"""Repeat 0: forever (§2, MONO)."""
LED_BRIGHTEST: Final = 0x00

# --- §1.4 / §1.5 / §2 board → host messages, in the DGT framing -----------------------------

MSG_BOARD_DUMP: Final = dgt.MSG_BOARD_DUMP
MSG_FIELD_UPDATE: Final = dgt.MSG_FIELD_UPDATE
MSG_SERIALNR: Final = dgt.MSG_SERIALNR
MSG_TRADEMARK: Final = dgt.MSG_TRADEMARK
MSG_VERSION: Final = dgt.MSG_VERSION
MSG_BATTERY_STATUS: Final = dgt.MSG_BATTERY_STATUS
MSG_LONG_SERIALNR: Final = dgt.MSG_LONG_SERIALNR
MESSAGES: Final = (
    MSG_BOARD_DUMP,
    MSG_FIELD_UPDATE,
    MSG_SERIALNR,
    MSG_TRADEMARK,
    MSG_VERSION,
    MSG_BATTERY_STATUS,
    MSG_LONG_SERIALNR,
)
"""The DGT messages a Pegasus sends (§2)."""

HEADER_SIZE: Final = dgt.HEADER_SIZE
MAX_TRADEMARK_SIZE: Final = HEADER_SIZE + 200
"""The Pegasus trademark is four lines of text (§2), longer than a DGT board's 64 bytes."""

MESSAGE_NAMES: Final[Mapping[int, str]] = MappingProxyType(
    {message: dgt.MESSAGE_NAMES[message] for message in MESSAGES}
)
MESSAGE_SIZES: Final[Mapping[int, Container[int]]] = MappingProxyType(
    {message: dgt.MESSAGE_SIZES[message] for message in MESSAGES}
    | {MSG_TRADEMARK: range(HEADER_SIZE, MAX_TRADEMARK_SIZE + 1)}
)
"""As a DGT board's (§1.5), but for the longer trademark."""

EMPTY_CODES: Final = frozenset({0x00, 0x7F})
"""A square with nothing on it: 0x00 (DCMA's emulator, MONO), or 0x7F (DCMA's sniffer on a
real board, §2 [conflict]). Any other code is a piece, which the board cannot identify."""
