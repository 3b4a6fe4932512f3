"""Millennium ChessLink codec: board bytes in, physical events out; commands as bytes.

Transport-neutral: the serial link (``drivers.millennium.link``) and a Bluetooth LE link feed it
the same bytes, each with the odd-parity bit in bit 7 (board-protocols.md §4).

Contract:

* ``MillenniumCodec.feed(data, at)`` accepts any bytes, in any chunking, and never raises. It
  returns the events of every reply completed by ``data``, stamped ``at``; a reply split over
  several calls is reported by the call that completes it.
* Framing: a reply starts with its lower-case letter (``s``, ``v``, ``l``, ``x``, ``w``, ``r``)
  and has the fixed length of that letter. It is taken only if every byte has odd parity, its
  body has the right form and its block check is right; otherwise only the letter is dropped and
  the search goes on from the next byte, so a reply hidden behind a false start is still found.
  The form is checked as bytes arrive: a false start is given up at its first impossible byte,
  not held until its full length. Bytes before a letter are dropped. Drops are counted and
  reported as ``FrameDropped`` (consecutive ones merged); the buffer never holds more than one
  reply's length.
* Status replies (the ``S`` reply and the board's automatic reports alike) are full readings:
  the first becomes a ``BoardSnapshot``, each later one the squares that changed
  (:mod:`drivers.readings`). The version reply becomes ``BoardInfo``; the acknowledgements of
  LEDs and E2ROM commands become :class:`Acknowledged`.
* Squares: the vendor text says the status starts at A8 in the board's own frame; python-mchess
  and DCMA both read the first character as h1 (h1..a1, h2..a2, ..., a8) on a board set up the
  usual way (§4 [conflict]). The codec follows the observation, and the LED grid is numbered in
  the same frame; a board the engine sees turned round is rotated there, from the start position.

The module-level functions encode host commands; they raise ``ValueError`` only for arguments
a caller could have checked.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

import chess

from drivers import identity
from drivers.events import BoardEvent, BoardInfo
from drivers.framing import MAX_RAW_REPORTED, Batch
from drivers.millennium import protocol as p
from drivers.readings import Reading, Readings

__all__ = [
    "MAX_RAW_REPORTED",
    "Acknowledged",
    "MillenniumCodec",
    "MillenniumEvent",
    "encode",
    "led_indices",
    "leds",
    "leds_off",
    "read_e2rom",
    "reset",
    "setup",
    "square_at",
    "status",
    "version",
    "write_e2rom",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Acknowledged:
    """The board acknowledged a command: ``reply`` is its letter (``l``, ``x``, ``w``, ``r``),
    ``data`` what followed it (the E2ROM address and value, as hex digits)."""

    reply: str
    data: str
    at: float


MillenniumEvent = BoardEvent | Acknowledged

_WITH_PARITY: Final = bytes(c | (p.PARITY_BIT if c.bit_count() % 2 == 0 else 0) for c in range(128))
"""7-bit character → the byte on the wire, bit 7 making the count of ones odd."""
_ODD: Final = tuple(b.bit_count() % 2 == 1 for b in range(256))
_LETTERS: Final = frozenset(_WITH_PARITY[ord(letter)] for letter in p.REPLY_LENGTHS)
_STATUS_CHARS: Final = frozenset(p.PIECES + p.EMPTY)
_HEX: Final = frozenset(p.HEX_DIGITS)
_STATUS_LETTER: Final = _WITH_PARITY[ord(p.REPLY_STATUS)]


class MillenniumCodec:
    """Sans-I/O decoder for the board → host byte stream; see the module docstring."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._readings = Readings()
        self._dropped_bytes = 0
        self._dropped_frames = 0

    @property
    def dropped_bytes(self) -> int:
        """Bytes discarded so far (stray bytes, and the letters of rejected replies)."""
        return self._dropped_bytes

    @property
    def dropped_frames(self) -> int:
        """Replies rejected so far (bad parity, form or block check)."""
        return self._dropped_frames

    @property
    def buffered(self) -> int:
        """Bytes held for a reply not yet complete (less than the longest reply)."""
        return len(self._buffer)

    @property
    def position(self) -> Reading | None:
        """The last status read, board frame, ``chess.A1`` first (``None`` before the first)."""
        return self._readings.last

    def feed(self, data: bytes, at: float) -> list[MillenniumEvent]:
        """Consume ``data`` received at time ``at``; return the events it completes, in order."""
        out: Batch[MillenniumEvent] = Batch(at)
        buffer = self._buffer
        buffer += data
        i = 0
        while i < len(buffer):
            start = next((j for j in range(i, len(buffer)) if buffer[j] in _LETTERS), None)
            if start is None:
                self._stray(out, buffer[i:])
                i = len(buffer)
                break
            if start > i:
                self._stray(out, buffer[i:start])
            letter = chr(buffer[start] & p.CHAR_MASK)
            end = min(start + p.REPLY_LENGTHS[letter], len(buffer))
            frame = bytes(buffer[start:end])
            problem = _form_problem(frame)
            if problem is None and len(frame) < p.REPLY_LENGTHS[letter]:
                i = start  # so far so good: wait for the rest of this reply
                break
            if problem is None:
                problem = self._decode(frame, out)
            if problem is None:
                i = end
            else:
                self._dropped_frames += 1
                self._dropped_bytes += 1
                out.drop(f"{letter} reply {problem}", frame)
                i = start + 1
        del buffer[:i]
        out.flush()
        return out.events

    def _stray(self, out: Batch[MillenniumEvent], raw: bytearray) -> None:
        self._dropped_bytes += len(raw)
        out.drop("stray bytes outside a reply", bytes(raw))

    def _decode(self, frame: bytes, out: Batch[MillenniumEvent]) -> str | None:
        """Emit the events of one well-formed reply; or say what is wrong with it."""
        text = bytes(b & p.CHAR_MASK for b in frame).decode("ascii")
        body, check = text[1 : -p.CHECK_DIGITS], text[-p.CHECK_DIGITS :]
        if int(check, 16) != _block_check(text[: -p.CHECK_DIGITS]):
            return f"with a bad block check {check!r}"
        letter = text[0]
        if letter == p.REPLY_STATUS:
            for event in self._readings.feed(_reading(body), out.at):
                out.emit(event)
        elif letter == p.REPLY_VERSION:
            version = identity.firmware(int(body[:2], 16), int(body[2:], 16))
            if version is None:
                return f"with an implausible firmware version {body!r}"
            out.emit(BoardInfo(version=version, at=out.at))
        else:
            out.emit(Acknowledged(reply=letter, data=body, at=out.at))
        return None


def _form_problem(frame: bytes) -> str | None:
    """What in ``frame`` (a reply, or the start of one) cannot belong to its kind of reply.

    Checked as bytes arrive, so that a false start (a letter in noise, the rest of a reply cut
    short) is given up at its first impossible byte instead of hiding the replies behind it.
    """
    length = p.REPLY_LENGTHS[chr(frame[0] & p.CHAR_MASK)]
    body = _STATUS_CHARS if frame[0] == _STATUS_LETTER else _HEX
    for position, byte in enumerate(frame):
        if not _ODD[byte]:
            return "with a parity error"
        char = chr(byte & p.CHAR_MASK)
        allowed = _HEX if position >= length - p.CHECK_DIGITS else body
        if position and char not in allowed:
            what = "a hex digit" if allowed is _HEX else "a piece or '.'"
            return f"with {char!r} at position {position}, not {what}"
    return None


# --- Squares and LEDs ---------------------------------------------------------------------------


def square_at(index: int) -> chess.Square:
    """The square of status character ``index`` (0 = h1, 7 = a1, 8 = h2, ..., 63 = a8)."""
    if not 0 <= index < p.SQUARE_COUNT:
        raise ValueError(f"status index {index} out of range 0..63")
    return chess.square(7 - index % 8, index // 8)


def led_indices(square: chess.Square) -> tuple[int, int, int, int]:
    """The four corner LEDs of ``square`` (0-based, in the order of the ``L`` command).

    The grid follows the status frame: LED 0 is the outer corner of h1, LED 8 of h8, LED 72 of
    a1, LED 80 of a8 (the vendor's LED 1 "A8 corner" ... LED 81 "H1 corner", turned round).
    """
    row, col = 7 - chess.square_file(square), chess.square_rank(square)
    return (
        row * p.LED_GRID + col,
        row * p.LED_GRID + col + 1,
        (row + 1) * p.LED_GRID + col,
        (row + 1) * p.LED_GRID + col + 1,
    )


def _reading(body: str) -> Reading:
    squares: list[chess.Piece | None] = [None] * p.SQUARE_COUNT
    for index, char in enumerate(body):
        if char != p.EMPTY:
            squares[square_at(index)] = chess.Piece.from_symbol(char)
    return tuple(squares)


# --- Host → board commands ----------------------------------------------------------------------


def encode(message: str) -> bytes:
    """``message`` (command letter and data) with its block check, odd parity in bit 7."""
    if not message.isascii() or not message.isprintable():
        raise ValueError(f"ChessLink messages are printable ASCII: {message!r}")
    text = message + f"{_block_check(message):02X}"
    return bytes(_WITH_PARITY[ord(char)] for char in text)


def status() -> bytes:
    """``S``: the board answers with its 64 squares."""
    return encode(p.CMD_STATUS)


def version() -> bytes:
    """``V``: the board answers with its firmware version."""
    return encode(p.CMD_VERSION)


def reset() -> bytes:
    """``T``: hardware reset (about 3 s; LEDs and reports cleared; no reply)."""
    return encode(p.CMD_RESET)


def write_e2rom(address: int, value: int) -> bytes:
    """``W``: store ``value`` at E2ROM ``address`` (the board echoes both)."""
    return encode(f"{p.CMD_WRITE_E2ROM}{_byte(address)}{_byte(value)}")


def read_e2rom(address: int) -> bytes:
    """``R``: ask for the value at E2ROM ``address``."""
    return encode(f"{p.CMD_READ_E2ROM}{_byte(address)}")


def leds(
    squares: Collection[chess.Square], *, pattern: int = p.LED_ON, slot_time: int = p.LED_SLOT_TIME
) -> bytes:
    """``L``: light ``squares`` (their four corners) with ``pattern``, every other LED off."""
    codes = [p.LED_OFF] * p.LED_COUNT
    for square in squares:
        if square not in chess.SQUARES:
            raise ValueError(f"not a square: {square!r}")
        for index in led_indices(square):
            codes[index] = pattern
    return encode(p.CMD_LEDS + _byte(slot_time) + "".join(_byte(code) for code in codes))


def leds_off() -> bytes:
    """``X``: every LED off."""
    return encode(p.CMD_LEDS_OFF)


def setup(scan_time: int = p.DEFAULT_SCAN_TIME) -> tuple[bytes, ...]:
    """What a host sends after connecting: identify, scan at ``scan_time`` (2.048 ms units),
    report every change by itself, and send the whole board once now.

    Reports on change, not on every scan (the board's default): 24 status lines a second would
    say nothing new; debouncing is the engine's (the vendor advises the host to do it).
    """
    if not p.MIN_SCAN_TIME <= scan_time <= 0xFF:
        raise ValueError(f"scan time {scan_time} out of range {p.MIN_SCAN_TIME}..255")
    return (
        version(),
        write_e2rom(p.E2ROM_SCAN_TIME, scan_time),
        write_e2rom(p.E2ROM_AUTO_REPORTS, p.REPORT_ON_CHANGE),
        status(),
    )


def _block_check(text: str) -> int:
    check = 0
    for char in text:
        check ^= ord(char) & p.CHAR_MASK
    return check


def _byte(value: int) -> str:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"a byte is 0..255: {value!r}")
    return f"{value:02X}"
