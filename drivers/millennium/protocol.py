"""Millennium ChessLink protocol: values only.

Restates board-protocols.md §4 (the vendor's "Magic Chessboard Communications Protocol", D.
Woodfield, 2017, and what host programs observed). This module holds data, no behaviour; the
codec in ``drivers.millennium.codec`` interprets it.

The link is 38400 baud, 7 data bits, odd parity, 1 stop bit, all printable ASCII. The parity is
done here in software: bit 7 of every byte carries the odd-parity bit of the 7 below it, which
on the wire is exactly 7O1 while the port itself is opened as 8N1 (so it also works over
transports that carry 8-bit bytes: Bluetooth LE, pseudo-terminals). Every message, in both
directions, ends with a block check: the XOR of all its characters, as two upper-case hex
digits. Replies are named by the lower-case letter of their command and have fixed lengths.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

BAUD: Final = 38400
PARITY_BIT: Final = 0x80
"""Bit 7 carries the odd-parity bit of the 7-bit character below it."""
CHAR_MASK: Final = 0x7F
CHECK_DIGITS: Final = 2
"""The block check: XOR of the message's characters as 2 upper-case hex digits."""
HEX_DIGITS: Final = "0123456789ABCDEF"

# --- Host → board commands (§4 table) ---------------------------------------------------------

CMD_STATUS: Final = "S"
"""Reply ``s``: the 64 squares."""
CMD_LEDS: Final = "L"
"""``L`` + slot time (2 hex) + 81 LED codes (2 hex each); reply ``l``."""
CMD_LEDS_OFF: Final = "X"
"""All LEDs off; reply ``x``."""
CMD_RESET: Final = "T"
"""Hardware reset, ~3 s start-up, no reply."""
CMD_VERSION: Final = "V"
"""Reply ``v`` + major (2 hex) + minor (2 hex)."""
CMD_WRITE_E2ROM: Final = "W"
"""``W`` + address (2 hex) + value (2 hex); reply ``w`` + address + value."""
CMD_READ_E2ROM: Final = "R"
"""``R`` + address (2 hex); reply ``r`` + address + value."""

# --- Board → host replies: letter → total length, check digits included (§4) ------------------

REPLY_STATUS: Final = "s"
REPLY_LEDS: Final = "l"
REPLY_LEDS_OFF: Final = "x"
REPLY_VERSION: Final = "v"
REPLY_WRITE_E2ROM: Final = "w"
REPLY_READ_E2ROM: Final = "r"
REPLY_LENGTHS: Final[Mapping[str, int]] = MappingProxyType(
    {
        REPLY_STATUS: 67,
        REPLY_LEDS: 3,
        REPLY_LEDS_OFF: 3,
        REPLY_VERSION: 7,
        REPLY_WRITE_E2ROM: 7,
        REPLY_READ_E2ROM: 7,
    }
)
"""Every reply the host may meet. Automatic status reports are ``s`` replies too."""
MAX_REPLY_LENGTH: Final = max(REPLY_LENGTHS.values())

# --- Status: 64 piece characters ----------------------------------------------------------------

SQUARE_COUNT: Final = 64
EMPTY: Final = "."
PIECES: Final = "KQRBNPkqrbnp"
"""White pieces in upper case, Black's in lower case; FEN letters."""

# --- LEDs: a 9 × 9 grid on the square corners (§4) -------------------------------------------

LED_GRID: Final = 9
LED_COUNT: Final = LED_GRID * LED_GRID
LED_ON: Final = 0xFF
"""An LED code is an 8-slot on/off pattern, b7 first: 0xFF is steadily on."""
LED_OFF: Final = 0x00
LED_SLOT_TIME: Final = 0x20
"""Slot time in 4.096 ms units (only matters for blinking patterns)."""

# --- E2ROM settings (§4) -----------------------------------------------------------------------

E2ROM_SERIAL_SETUP: Final = 0x00
"""b0 = 1 disables the block check."""
E2ROM_SCAN_TIME: Final = 0x01
"""Full-board scan time in 2.048 ms units; minimum 15 (less sets 20)."""
E2ROM_AUTO_REPORTS: Final = 0x02
E2ROM_REPORT_TIME: Final = 0x03
E2ROM_LED_BRIGHTNESS: Final = 0x04

SCAN_TIME_UNIT: Final = 0.002048
"""Seconds per unit of the scan time setting."""
DEFAULT_SCAN_TIME: Final = 20
"""The vendor's default and its "safe value": 40.96 ms, 24.4 scans per second."""
MIN_SCAN_TIME: Final = 15

REPORT_EVERY_SCAN: Final = 0
"""The board's default: a status line on every scan."""
REPORT_OFF: Final = 1
REPORT_TIMED: Final = 2
REPORT_ON_CHANGE: Final = 3
REPORT_DEBOUNCED: Final = range(4, 8)
"""On any change, debounced over 2 (4) to 5 (7) scans."""
