"""Certabo board protocol (RFID, USB serial): values only.

Restates board-protocols.md §5 (the vendor's own Arduino simulator of the board's stream, and the
host readers of PicoChess and certabo-lichess). This module holds data, no behaviour; the codec in
``drivers.certabo.codec`` interprets it.

The board sends, again and again, one text line with the RFID tag read on every square:
``:`` then 320 decimal numbers separated by spaces (64 squares × 5 numbers, a8 first, then b8 ...
h8, a7 ... h1), then `` \\r\\n``. ``0 0 0 0 0`` is an empty square. A tag names one physical piece,
not a kind of piece: which piece a tag is on must be learnt (calibration) from a position where
every piece's place is known, the start position. The host sends nothing but the LEDs: 8 raw
bytes, one per rank (rank 8 first), bit 0 for the a-file.
"""

from __future__ import annotations

from typing import Final

import chess

BAUD: Final = 38400
"""8N1 (pyserial's defaults, as both host readers open it)."""

LINE_START: Final = ord(":")
LINE_END: Final = ord("\n")
MARKERS: Final = b"LD*"
"""Characters some boards add to a line, ignored: ``L``/``D`` mark boards with RGB LEDs
(PicoChess strips them, and ``*``) [uncertain]."""

SQUARE_COUNT: Final = 64
TAG_SIZE: Final = 5
"""Numbers per square: one RFID tag id."""
NUMBERS_PER_LINE: Final = SQUARE_COUNT * TAG_SIZE
MAX_NUMBER_DIGITS: Final = 3
"""Tag bytes are 0..255; the vendor's simulator also sends 276, 345 (accepted, never 4 digits)."""
MAX_LINE: Final = 1 + NUMBERS_PER_LINE * (MAX_NUMBER_DIGITS + 1) + 16
"""Longest line kept; anything longer without a line end is noise."""

EMPTY_TAG: Final = (0, 0, 0, 0, 0)

LINE_PERIOD: Final = 1.0
"""Seconds between two lines from the vendor's simulator; real boards' rate is not published
[uncertain]."""

LED_BYTES: Final = 8
"""One byte per rank, rank 8 first; bit 0 = a-file ... bit 7 = h-file (board frame)."""

CALIBRATION_POSITION: Final = chess.STARTING_BOARD_FEN
"""Where calibration learns the tags (§5: "calibration wants the start position")."""
