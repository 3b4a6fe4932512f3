"""DGT electronic board serial protocol: byte values only.

Every table cites its section of the project's protocol notes (``board-protocols.md``, section 1),
which restate DGT's own ``dgtbrd.h`` header. This module holds data, no behaviour; the codec in
``drivers.dgt.codec`` interprets it. Single-board mode only: in bus mode the same id bytes mean
other messages (§1.12).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from types import MappingProxyType
from typing import Final

import chess

# --- §1.3 Host → board commands (single byte) ------------------------------------------------

CMD_SEND_RESET: Final = 0x40
CMD_SEND_CLK: Final = 0x41
CMD_SEND_BRD: Final = 0x42
CMD_SEND_UPDATE: Final = 0x43
CMD_SEND_UPDATE_BRD: Final = 0x44
CMD_RETURN_SERIALNR: Final = 0x45
CMD_RETURN_BUSADRES: Final = 0x46
CMD_SEND_TRADEMARK: Final = 0x47
CMD_SEND_EE_MOVES: Final = 0x49
CMD_SEND_UPDATE_NICE: Final = 0x4B
CMD_SEND_BATTERY_STATUS: Final = 0x4C
CMD_SEND_VERSION: Final = 0x4D
CMD_RETURN_LONG_SERIALNR: Final = 0x55
CMD_CLOCK_MESSAGE: Final = 0x2B

# --- §1.8 Clock commands, sent inside ``0x2B, size, 0x03, cmd, payload..., 0x00`` -------------

CLOCK_START: Final = 0x03
"""Byte after the size byte in every clock message (§1.8)."""
CLOCK_END_MARK: Final = 0x00
"""Last byte of every clock message (§1.8)."""

CLOCK_DISPLAY: Final = 0x01
CLOCK_ICONS: Final = 0x02
CLOCK_END: Final = 0x03
CLOCK_BUTTON: Final = 0x08
CLOCK_VERSION: Final = 0x09
CLOCK_SETNRUN: Final = 0x0A
CLOCK_BEEP: Final = 0x0B
CLOCK_ASCII: Final = 0x0C

CLOCK_ASCII_CHARS: Final = 8
"""DGT 3000 ASCII text length (§1.8, cmd 0x0C)."""

# §1.8 SETNRUN flags byte.
SETNRUN_LEFT_COUNTS_DOWN: Final = 0x01
SETNRUN_RIGHT_COUNTS_DOWN: Final = 0x02
SETNRUN_PAUSE: Final = 0x04
SETNRUN_TOGGLE_ON_LEVER: Final = 0x08

# --- §1.4 Board → host framing ---------------------------------------------------------------

MSB: Final = 0x80
"""Only a message id byte has the most significant bit set (§1.4)."""
HEADER_SIZE: Final = 3
"""Id byte plus two 7-bit length bytes; the length counts these too (§1.4)."""

# --- §1.5 Board → host message ids -----------------------------------------------------------

MSG_BOARD_DUMP: Final = 0x86
MSG_BWTIME: Final = 0x8D
MSG_FIELD_UPDATE: Final = 0x8E
MSG_EE_MOVES: Final = 0x8F
MSG_BUSADRES: Final = 0x90
MSG_SERIALNR: Final = 0x91
MSG_TRADEMARK: Final = 0x92
MSG_VERSION: Final = 0x93
MSG_BATTERY_STATUS: Final = 0xA0
MSG_LONG_SERIALNR: Final = 0xA2

MAX_SHORT_SIZE: Final = HEADER_SIZE + 64
"""Largest total size of any message but EE_MOVES (§1.4: payloads over 64 bytes are rejected)."""
MAX_EE_MOVES_SIZE: Final = 0x2000 + HEADER_SIZE
"""Largest EE_MOVES total size accepted; the store itself is 0x1F00 bytes (§1.5, §1.11)."""
MAX_MESSAGE_SIZE: Final = MAX_EE_MOVES_SIZE
"""Bound of the codec's message buffer."""

MESSAGE_NAMES: Final[Mapping[int, str]] = MappingProxyType(
    {
        MSG_BOARD_DUMP: "BOARD_DUMP",
        MSG_BWTIME: "BWTIME",
        MSG_FIELD_UPDATE: "FIELD_UPDATE",
        MSG_EE_MOVES: "EE_MOVES",
        MSG_BUSADRES: "BUSADRES",
        MSG_SERIALNR: "SERIALNR",
        MSG_TRADEMARK: "TRADEMARK",
        MSG_VERSION: "VERSION",
        MSG_BATTERY_STATUS: "BATTERY_STATUS",
        MSG_LONG_SERIALNR: "LONG_SERIALNR",
    }
)
"""Known message ids (§1.5)."""

MESSAGE_SIZES: Final[Mapping[int, Container[int]]] = MappingProxyType(
    {
        MSG_BOARD_DUMP: frozenset({67}),
        MSG_BWTIME: frozenset({10}),
        MSG_FIELD_UPDATE: frozenset({5}),
        MSG_EE_MOVES: range(HEADER_SIZE, MAX_EE_MOVES_SIZE + 1),
        MSG_BUSADRES: frozenset({5}),
        # §1.5: 8 in the current header, 12 in the 1998 one (space + storage version) [conflict].
        MSG_SERIALNR: frozenset({8, 12}),
        MSG_TRADEMARK: range(HEADER_SIZE, MAX_SHORT_SIZE + 1),
        MSG_VERSION: frozenset({5}),
        # §1.5 note: the header's own size constant disagrees with its field list; trust 12.
        MSG_BATTERY_STATUS: frozenset({12}),
        MSG_LONG_SERIALNR: frozenset({13}),
    }
)
"""Accepted total sizes (header included) per message id (§1.5)."""

SERIAL_DIGITS: Final = 5
"""SERIALNR carries five ASCII digits, then optionally a space and a version (§1.5)."""

# --- §1.6 Squares and piece codes ------------------------------------------------------------

SQUARE_COUNT: Final = 64
EMPTY: Final = 0x00
PIECE_CODES: Final[Mapping[int, tuple[chess.PieceType, chess.Color]]] = MappingProxyType(
    {
        0x01: (chess.PAWN, chess.WHITE),
        0x02: (chess.ROOK, chess.WHITE),
        0x03: (chess.KNIGHT, chess.WHITE),
        0x04: (chess.BISHOP, chess.WHITE),
        0x05: (chess.KING, chess.WHITE),
        0x06: (chess.QUEEN, chess.WHITE),
        0x07: (chess.PAWN, chess.BLACK),
        0x08: (chess.ROOK, chess.BLACK),
        0x09: (chess.KNIGHT, chess.BLACK),
        0x0A: (chess.BISHOP, chess.BLACK),
        0x0B: (chess.KING, chess.BLACK),
        0x0C: (chess.QUEEN, chess.BLACK),
    }
)
"""Piece code → (type, colour); note 0x05/0x0B are kings, 0x06/0x0C queens (§1.6)."""
MAGIC_PIECE_CODES: Final[Mapping[int, str]] = MappingProxyType(
    {0x0D: "draw", 0x0E: "white wins", 0x0F: "black wins"}
)
"""The "magic pieces" (§1.6); no chess piece, so the codec rejects them."""

# --- §1.7 BWTIME -----------------------------------------------------------------------------

BWTIME_ACK_NIBBLE: Final = 0x0A
"""Low nibble of payload byte 0 or 3 that marks a clock ack instead of times (§1.7)."""
TIME_HOURS_MASK: Final = 0x0F
TIME_FLAG_BLOCKED: Final = 0x10
"""D4 of an hours byte: flag fallen and clock blocked at zero (§1.7)."""
TIME_FLAG_SHOWN: Final = 0x40
"""D6 of an hours byte: flag fallen shown, clock may still run (§1.7)."""
MAX_CLOCK_HOURS: Final = 9

STATUS_RUNNING: Final = 0x01
STATUS_RIGHT_LEVER_HIGH: Final = 0x02
STATUS_BATTERY_LOW: Final = 0x04
STATUS_NO_CLOCK: Final = 0x20
"""D5 set: no clock connected, times invalid (§1.7; ARN reads it inverted)."""

ACK_ERROR: Final = 0x40
"""ack0 bit: the clock reports an error (ack0 is 0x10 when normal) (§1.7)."""
ACK_BUTTON: Final = 0x88
"""ack1 value of an unsolicited button press (§1.7)."""
CLOCK_BUTTONS: Final[Mapping[int, str]] = MappingProxyType(
    {0x31: "back", 0x32: "plus", 0x33: "run", 0x34: "minus", 0x35: "ok"}
)
"""ack3 of a button press → button name (§1.7)."""

# --- §1.5 BATTERY_STATUS ---------------------------------------------------------------------

BATTERY_CHARGING: Final = 0x01
"""Status bits (last payload byte): b0 charging, b1 discharging (§1.5)."""

# --- §1.11 EEPROM move store -----------------------------------------------------------------

EE_FIELD_FIRST: Final = 0x40
EE_FIELD_LAST: Final = 0x5F
"""Field-change tag: ``0 1 0 r nnnn`` then square (§1.11)."""
EE_CLOCK_LEFT: Final = 0x10
"""Bit ``f`` of a clock tag ``0 1 1 f hhhh``: set for the left display (§1.11)."""
EE_CLOCK_FIRSTS: Final = frozenset(range(0x60, 0x6A)) | frozenset(range(0x70, 0x7A))
"""First bytes of 3-byte clock tags (§1.11)."""
EE_POWERUP: Final = 0x6A
EE_EOF: Final = 0x6B
EE_FOURROWS: Final = 0x6C
EE_EMPTYBOARD: Final = 0x6D
EE_DOWNLOADED: Final = 0x6E
EE_BEGINPOS: Final = 0x6F
EE_BEGINPOS_ROT: Final = 0x7A
EE_START_TAG: Final = 0x7B
EE_WATCHDOG_ACTION: Final = 0x7C
EE_RESERVED: Final = frozenset({0x7D, 0x7E})
EE_NOPS: Final = frozenset({0x7F, 0x00})
"""EE_NOP and EE_NOP2 (§1.11)."""
