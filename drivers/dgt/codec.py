"""DGT serial codec: board bytes in, physical events out; commands as bytes.

Contract:

* ``DgtCodec.feed(data, at)`` accepts any bytes, in any chunking, and never raises. It returns the
  events of every message completed by ``data``, stamped ``at``. A message split over several
  calls is reported by the call that completes it, so for a valid stream the events do not depend
  on how it was chunked.
* Framing follows board-protocols.md §1.4: a message starts with the only byte that has its MSB
  set; a set MSB inside a payload aborts the message and starts the next one. Unknown ids,
  impossible lengths, stray bytes and undecodable contents are dropped, counted, and reported as
  ``FrameDropped``; drops that follow each other within one ``feed`` call share one event.
* The message buffer never holds more than ``MAX_MESSAGE_SIZE`` bytes.
* Squares are converted from DGT numbering (a8 = 0 … h1 = 63) to python-chess squares in the
  board's own frame. Single-board mode only (in bus mode the ids mean other messages, §1.12).
* The framing is shared by another dialect: the DGT Pegasus (``drivers.pegasus.codec``) sends
  other messages in the same frames; a :class:`Dialect` names a board's ids, sizes and decoders.

The module-level functions encode host commands (§1.3) and clock commands (§1.8). They raise
``ValueError`` only for arguments a caller could have checked (out-of-range numbers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container, Mapping
from types import MappingProxyType
from typing import Final

import chess
import msgspec

from drivers import identity
from drivers.dgt import protocol as p
from drivers.dgt.events import (
    ClockAck,
    DgtEvent,
    StoredChange,
    StoredClockTime,
    StoredEnd,
    StoredMarker,
    StoredTag,
)
from drivers.events import (
    BoardInfo,
    BoardSnapshot,
    ClockButton,
    ClockReading,
    ClockSide,
    SquareEmptied,
    SquareOccupied,
)
from drivers.framing import MAX_RAW_REPORTED, Batch

__all__ = [
    "DGT",
    "MAX_MESSAGE_SIZE",
    "MAX_RAW_REPORTED",
    "Decoder",
    "DgtCodec",
    "Dialect",
    "InvalidMessage",
    "battery_status",
    "board_square",
    "bus_address",
    "clock_ascii",
    "clock_beep",
    "clock_buttons",
    "clock_end",
    "clock_set_and_run",
    "clock_version",
    "decode_battery",
    "decode_long_serialnr",
    "decode_serialnr",
    "decode_trademark",
    "decode_version",
    "ee_moves",
    "long_serial_number",
    "reset",
    "send_board",
    "send_clock",
    "serial_number",
    "trademark",
    "update",
    "update_board",
    "update_nice",
    "version",
]

MAX_MESSAGE_SIZE: Final = p.MAX_MESSAGE_SIZE
"""Upper bound of ``DgtCodec.buffered``."""
MAX_CLOCK_SECONDS: Final = p.MAX_CLOCK_HOURS * 3600 + 59 * 60 + 59
"""Largest time a DGT clock displays (9:59:59)."""

_Out = Batch[DgtEvent]

_MSB_BYTE: Final = re.compile(rb"[\x80-\xff]")


Decoder = Callable[[bytes, float], list[DgtEvent]]
"""A message's payload and time → its events; raises :class:`InvalidMessage` on bad contents."""


class Dialect(msgspec.Struct, frozen=True):
    """The messages a board of the DGT framing sends (§1.4): their ids, sizes and decoders.

    The DGT e-board's is :data:`DGT`; the DGT Pegasus speaks another over the same framing.
    """

    names: Mapping[int, str]
    sizes: Mapping[int, Container[int]]
    decoders: Mapping[int, Decoder]
    """Every id of ``names`` but EE_MOVES (decoded by the codec itself)."""


class DgtCodec:
    """Sans-I/O decoder for the DGT board → host byte stream (single-board mode)."""

    def __init__(self, dialect: Dialect | None = None) -> None:
        """Start with an empty buffer and zeroed counters; ``dialect`` defaults to :data:`DGT`."""
        self._dialect = dialect or DGT
        self._msg = bytearray()
        self._size = 0  # total size of the message in ``_msg``, known once the header is complete
        self._dropped_bytes = 0
        self._dropped_frames = 0

    @property
    def dropped_bytes(self) -> int:
        """Bytes discarded so far: stray, in rejected messages, or in malformed EEPROM tags."""
        return self._dropped_bytes

    @property
    def dropped_frames(self) -> int:
        """Rejected units so far: bad or interrupted messages and malformed EEPROM tags.

        Stray bytes outside any message count only in ``dropped_bytes``.
        """
        return self._dropped_frames

    @property
    def receiving(self) -> int | None:
        """The id of the message being received (some of its bytes are in), or ``None``."""
        return self._msg[0] if self._msg else None

    @property
    def buffered(self) -> int:
        """Bytes held for a message not yet complete (at most ``MAX_MESSAGE_SIZE``)."""
        return len(self._msg)

    def feed(self, data: bytes, at: float) -> list[DgtEvent]:
        """Consume ``data`` received at time ``at``; return the events it completes, in order."""
        out: _Out = Batch(at)
        end = len(data)
        i = 0
        while i < end:
            i = self._fill(data, i, out) if self._msg else self._skip_to_header(data, i, out)
        out.flush()
        return out.events

    def _skip_to_header(self, data: bytes, i: int, out: _Out) -> int:
        """Drop stray bytes up to the next id byte and open a message there."""
        match = _MSB_BYTE.search(data, i)
        start = len(data) if match is None else match.start()
        if start > i:
            self._dropped_bytes += start - i
            out.drop("stray bytes outside a message", data[i:start])
        if match is None:
            return start
        msg_id = data[start]
        if msg_id not in self._dialect.names:
            self._reject(out, f"unknown message id 0x{msg_id:02x}", data[start : start + 1])
        else:
            self._msg.append(msg_id)
        return start + 1

    def _fill(self, data: bytes, i: int, out: _Out) -> int:
        """Append payload bytes to the open message; finish or abort it as the bytes say."""
        target = self._size if self._size else p.HEADER_SIZE
        stop = min(len(data), i + target - len(self._msg))
        match = _MSB_BYTE.search(data, i, stop)
        if match is not None:
            self._msg += data[i : match.start()]
            name = self._dialect.names[self._msg[0]]
            self._abort(out, f"{name} interrupted by 0x{data[match.start()]:02x}")
            return match.start()
        self._msg += data[i:stop]
        if not self._size and len(self._msg) == p.HEADER_SIZE:
            size = (self._msg[1] << 7) | self._msg[2]
            if size not in self._dialect.sizes[self._msg[0]]:
                name = self._dialect.names[self._msg[0]]
                self._abort(out, f"{name} with impossible size {size}")
                return stop
            self._size = size
        if self._size and len(self._msg) == self._size:
            msg = bytes(self._msg)
            self._msg.clear()
            self._size = 0
            self._decode(msg, out)
        return stop

    def _abort(self, out: _Out, reason: str) -> None:
        """Reject the open message."""
        self._reject(out, reason, bytes(self._msg))
        self._msg.clear()
        self._size = 0

    def _reject(self, out: _Out, reason: str, raw: bytes) -> None:
        """Count and report one rejected unit."""
        self._dropped_frames += 1
        self._dropped_bytes += len(raw)
        out.drop(reason, raw)

    def _decode(self, msg: bytes, out: _Out) -> None:
        """Turn one complete, well-framed message into events or a rejection."""
        msg_id = msg[0]
        payload = msg[p.HEADER_SIZE :]
        if msg_id == p.MSG_EE_MOVES:
            self._decode_ee_moves(payload, out)
            return
        try:
            events = self._dialect.decoders[msg_id](payload, out.at)
        except InvalidMessage as exc:
            self._reject(out, f"{self._dialect.names[msg_id]}: {exc}", msg)
            return
        for event in events:
            out.emit(event)

    def _decode_ee_moves(self, payload: bytes, out: _Out) -> None:
        """Decode the EEPROM tag stream (§1.11) up to EE_EOF; malformed tags are dropped.

        Ends with ``StoredEnd`` whatever the payload held (nothing, or no EE_EOF), so that
        whoever asked for the memory knows the answer is complete.
        """
        self._decode_ee_tags(payload, out)
        out.emit(StoredEnd(at=out.at))

    def _decode_ee_tags(self, payload: bytes, out: _Out) -> None:
        i = 0
        while i < len(payload):
            first = payload[i]
            if first == p.EE_EOF:
                return
            size = _ee_tag_size(first)
            tag = payload[i : i + size]
            i += size
            if len(tag) < size:
                self._reject(out, f"EE_MOVES: tag 0x{first:02x} cut short", tag)
                continue
            try:
                event = _decode_ee_tag(tag, out.at)
            except InvalidMessage as exc:
                self._reject(out, f"EE_MOVES: {exc}", tag)
                continue
            if event is not None:
                out.emit(event)


# --- Host → board commands (§1.3) ------------------------------------------------------------


def reset() -> bytes:
    """DGT_SEND_RESET: back to IDLE mode."""
    return bytes([p.CMD_SEND_RESET])


def send_clock() -> bytes:
    """DGT_SEND_CLK: ask for one BWTIME."""
    return bytes([p.CMD_SEND_CLK])


def send_board() -> bytes:
    """DGT_SEND_BRD: ask for a BOARD_DUMP."""
    return bytes([p.CMD_SEND_BRD])


def update() -> bytes:
    """DGT_SEND_UPDATE: field updates plus BWTIME at least every second."""
    return bytes([p.CMD_SEND_UPDATE])


def update_board() -> bytes:
    """DGT_SEND_UPDATE_BRD: field updates only."""
    return bytes([p.CMD_SEND_UPDATE_BRD])


def update_nice() -> bytes:
    """DGT_SEND_UPDATE_NICE: field updates plus BWTIME when the clock changes."""
    return bytes([p.CMD_SEND_UPDATE_NICE])


def serial_number() -> bytes:
    """DGT_RETURN_SERIALNR."""
    return bytes([p.CMD_RETURN_SERIALNR])


def long_serial_number() -> bytes:
    """DGT_RETURN_LONG_SERIALNR."""
    return bytes([p.CMD_RETURN_LONG_SERIALNR])


def version() -> bytes:
    """DGT_SEND_VERSION."""
    return bytes([p.CMD_SEND_VERSION])


def trademark() -> bytes:
    """DGT_SEND_TRADEMARK."""
    return bytes([p.CMD_SEND_TRADEMARK])


def battery_status() -> bytes:
    """DGT_SEND_BATTERY_STATUS (Bluetooth boards)."""
    return bytes([p.CMD_SEND_BATTERY_STATUS])


def ee_moves() -> bytes:
    """DGT_SEND_EE_MOVES: the whole EEPROM store (~8 s at 9600 baud)."""
    return bytes([p.CMD_SEND_EE_MOVES])


def bus_address() -> bytes:
    """DGT_RETURN_BUSADRES."""
    return bytes([p.CMD_RETURN_BUSADRES])


# --- Clock commands through the board (§1.8) -------------------------------------------------


def clock_ascii(text: str, beep: int = 0) -> bytes:
    """DGT 3000 text: 8 characters (padded or cut; non-printable or non-ASCII become ``?``).

    ``beep`` is sent as is (0 = none); it must fit in a byte.
    """
    _check_byte("beep", beep)
    chars = "".join(c if " " <= c <= "~" else "?" for c in text[: p.CLOCK_ASCII_CHARS])
    return _clock(p.CLOCK_ASCII, chars.ljust(p.CLOCK_ASCII_CHARS).encode("ascii") + bytes([beep]))


def clock_set_and_run(
    left: int,
    right: int,
    *,
    left_runs: bool,
    right_runs: bool,
    pause: bool = False,
    toggle_on_lever: bool = True,
) -> bytes:
    """SETNRUN: set both times (seconds, 0..9:59:59) and which sides count down."""
    flags = (
        (p.SETNRUN_LEFT_COUNTS_DOWN if left_runs else 0)
        | (p.SETNRUN_RIGHT_COUNTS_DOWN if right_runs else 0)
        | (p.SETNRUN_PAUSE if pause else 0)
        | (p.SETNRUN_TOGGLE_ON_LEVER if toggle_on_lever else 0)
    )
    return _clock(p.CLOCK_SETNRUN, _hms("left", left) + _hms("right", right) + bytes([flags]))


def clock_end() -> bytes:
    """END: the clock shows its times again."""
    return _clock(p.CLOCK_END, b"")


def clock_beep(units: int) -> bytes:
    """BEEP for ``units`` × 64 ms."""
    _check_byte("units", units)
    return _clock(p.CLOCK_BEEP, bytes([units]))


def clock_version() -> bytes:
    """VERSION query; the ack tells that a clock is present."""
    return _clock(p.CLOCK_VERSION, b"")


def clock_buttons() -> bytes:
    """BUTTON query."""
    return _clock(p.CLOCK_BUTTON, b"")


def _clock(cmd: int, payload: bytes) -> bytes:
    """Wrap a clock command: ``0x2B, size, 0x03, cmd, payload..., 0x00``."""
    body = bytes([p.CLOCK_START, cmd]) + payload + bytes([p.CLOCK_END_MARK])
    return bytes([p.CMD_CLOCK_MESSAGE, len(body)]) + body


def _hms(name: str, seconds: int) -> bytes:
    """Binary hours, minutes, seconds (SETNRUN is not BCD, §1.8)."""
    if not 0 <= seconds <= MAX_CLOCK_SECONDS:
        raise ValueError(f"{name} must be within 0..{MAX_CLOCK_SECONDS} seconds, got {seconds!r}")
    return bytes([seconds // 3600, seconds // 60 % 60, seconds % 60])


def _check_byte(name: str, value: int) -> None:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"{name} must be within 0..255, got {value!r}")


# --- Private decoding helpers ----------------------------------------------------------------


class InvalidMessage(Exception):  # noqa: N818  # a verdict on a message, not a program error
    """A well-framed message or tag whose contents make no sense; never leaves this module."""


def board_square(index: int) -> chess.Square:
    """DGT index (a8 = 0, b8 = 1 … h1 = 63) → python-chess square."""
    if not 0 <= index < p.SQUARE_COUNT:
        raise InvalidMessage(f"square {index} out of range")
    return chess.square(index % 8, 7 - index // 8)


def _piece(code: int) -> chess.Piece | None:
    """DGT piece code → piece, ``None`` for empty (§1.6)."""
    if code == p.EMPTY:
        return None
    known = p.PIECE_CODES.get(code)
    if known is not None:
        return chess.Piece(*known)
    if code in p.MAGIC_PIECE_CODES:
        raise InvalidMessage(f"magic piece code 0x{code:02x} ({p.MAGIC_PIECE_CODES[code]})")
    raise InvalidMessage(f"invalid piece code 0x{code:02x}")


def _bcd(value: int) -> int:
    """Two-digit BCD 00..59 → int."""
    tens, units = value >> 4, value & 0x0F
    if units > 9 or tens > 5:
        raise InvalidMessage(f"bad BCD time byte 0x{value:02x}")
    return tens * 10 + units


def _hms_time(hours_byte: int, minutes: int, seconds: int) -> int:
    """Hours (low nibble, binary), BCD minutes and seconds → seconds."""
    hours = hours_byte & p.TIME_HOURS_MASK
    if hours > p.MAX_CLOCK_HOURS:
        raise InvalidMessage(f"hours {hours} out of range")
    return hours * 3600 + _bcd(minutes) * 60 + _bcd(seconds)


def _board_dump(payload: bytes, at: float) -> list[DgtEvent]:
    squares: list[chess.Piece | None] = [None] * p.SQUARE_COUNT
    for index, code in enumerate(payload):
        squares[board_square(index)] = _piece(code)
    return [BoardSnapshot(squares=tuple(squares), at=at)]


def _field_update(payload: bytes, at: float) -> list[DgtEvent]:
    square = board_square(payload[0])
    piece = _piece(payload[1])
    if piece is None:
        return [SquareEmptied(square=square, at=at)]
    return [SquareOccupied(square=square, piece=piece, at=at)]


def _bwtime(payload: bytes, at: float) -> list[DgtEvent]:
    if not any(payload):
        return []  # null message seen after clock commands on BT firmware 2.10 (§1.7)
    b3, b4, b5, b6, b7, b8, status = payload
    if (b3 & 0x0F) == p.BWTIME_ACK_NIBBLE or (b6 & 0x0F) == p.BWTIME_ACK_NIBBLE:
        return [_clock_ack(b3, b4, b5, b6, b7, b8, at)]
    connected = not status & p.STATUS_NO_CLOCK
    try:
        right = _hms_time(b3, b4, b5)
        left = _hms_time(b6, b7, b8)
    except InvalidMessage:
        if connected:
            raise
        right = left = 0  # no clock: the times are meaningless anyway (§1.7)
    flags = p.TIME_FLAG_BLOCKED | p.TIME_FLAG_SHOWN
    reading = ClockReading(
        left=left,
        right=right,
        running=bool(status & p.STATUS_RUNNING),
        lever_high=ClockSide.RIGHT if status & p.STATUS_RIGHT_LEVER_HIGH else ClockSide.LEFT,
        connected=connected,
        left_flag=bool(b6 & flags),
        right_flag=bool(b3 & flags),
        battery_low=bool(status & p.STATUS_BATTERY_LOW),
        at=at,
    )
    return [reading]


def _clock_ack(b3: int, b4: int, b5: int, b6: int, b7: int, b8: int, at: float) -> DgtEvent:
    """Reassemble the four ack bytes spread over the BWTIME payload (§1.7)."""
    ack0 = (b4 & 0x7F) | ((b6 << 3) & 0x80)
    ack1 = (b5 & 0x7F) | ((b6 << 2) & 0x80)
    ack2 = (b7 & 0x7F) | ((b3 << 3) & 0x80)
    ack3 = (b8 & 0x7F) | ((b3 << 2) & 0x80)
    if ack1 == p.ACK_BUTTON:
        button = p.CLOCK_BUTTONS.get(ack3, f"unknown:0x{ack3:02x}")
        return ClockButton(button=button, at=at)
    return ClockAck(
        command=ack1, error=bool(ack0 & p.ACK_ERROR), data=(ack0, ack1, ack2, ack3), at=at
    )


def _ascii(payload: bytes) -> str:
    """Payload bytes (all < 0x80) as text."""
    return payload.decode("ascii")


def decode_serialnr(payload: bytes, at: float) -> list[DgtEvent]:
    return [BoardInfo(serial=_serial(payload[: p.SERIAL_DIGITS]), at=at)]


def decode_long_serialnr(payload: bytes, at: float) -> list[DgtEvent]:
    return [BoardInfo(serial=_serial(payload), at=at)]


def _serial(payload: bytes) -> str:
    serial = identity.serial(_ascii(payload))
    if serial is None:
        raise InvalidMessage(f"implausible serial number {payload!r}")
    return serial


def decode_version(payload: bytes, at: float) -> list[DgtEvent]:
    major, minor = payload
    version = identity.firmware(major, minor)
    if version is None:
        raise InvalidMessage(f"implausible firmware version {major}.{minor}")
    return [BoardInfo(version=version, at=at)]


def decode_trademark(payload: bytes, at: float) -> list[DgtEvent]:
    trademark = identity.text(_ascii(payload))
    if trademark is None:
        raise InvalidMessage(f"implausible trademark {payload[:16]!r}")
    return [BoardInfo(trademark=trademark, at=at)]


def decode_battery(payload: bytes, at: float) -> list[DgtEvent]:
    percent: int | None = payload[0]
    if percent is not None and percent > 100:
        percent = None  # not a level; 0x7F marks "n/a" in this message's other fields (§1.5)
    charging = bool(payload[-1] & p.BATTERY_CHARGING)
    return [BoardInfo(battery_percent=percent, charging=charging, at=at)]


def _busadres(payload: bytes, at: float) -> list[DgtEvent]:
    address = (payload[0] << 7) | payload[1]
    return [BoardInfo(serial=f"{address:05d}", at=at)]


_DECODERS: Final[Mapping[int, Decoder]] = MappingProxyType(
    {
        p.MSG_BOARD_DUMP: _board_dump,
        p.MSG_BWTIME: _bwtime,
        p.MSG_FIELD_UPDATE: _field_update,
        p.MSG_BUSADRES: _busadres,
        p.MSG_SERIALNR: decode_serialnr,
        p.MSG_TRADEMARK: decode_trademark,
        p.MSG_VERSION: decode_version,
        p.MSG_BATTERY_STATUS: decode_battery,
        p.MSG_LONG_SERIALNR: decode_long_serialnr,
    }
)

DGT: Final = Dialect(names=p.MESSAGE_NAMES, sizes=p.MESSAGE_SIZES, decoders=_DECODERS)
"""The DGT e-board's messages (§1.5)."""

_EE_MARKERS: Final[Mapping[int, StoredTag]] = MappingProxyType(
    {
        p.EE_POWERUP: StoredTag.POWER_UP,
        p.EE_FOURROWS: StoredTag.FOUR_ROWS,
        p.EE_EMPTYBOARD: StoredTag.EMPTY_BOARD,
        p.EE_DOWNLOADED: StoredTag.DOWNLOADED,
        p.EE_BEGINPOS: StoredTag.BEGIN_POSITION,
        p.EE_BEGINPOS_ROT: StoredTag.BEGIN_POSITION_ROTATED,
        p.EE_START_TAG: StoredTag.START_GAME,
        p.EE_WATCHDOG_ACTION: StoredTag.WATCHDOG,
    }
)


def _ee_tag_size(first: int) -> int:
    """Length of the EEPROM tag starting with ``first`` (§1.11)."""
    if p.EE_FIELD_FIRST <= first <= p.EE_FIELD_LAST:
        return 2
    if first in p.EE_CLOCK_FIRSTS:
        return 3
    return 1


def _decode_ee_tag(tag: bytes, at: float) -> DgtEvent | None:
    """One complete EEPROM tag → event, or ``None`` for NOP and reserved bytes."""
    first = tag[0]
    if p.EE_FIELD_FIRST <= first <= p.EE_FIELD_LAST:
        return StoredChange(square=board_square(tag[1]), piece=_piece(first & 0x0F), at=at)
    if first in p.EE_CLOCK_FIRSTS:
        side = ClockSide.LEFT if first & p.EE_CLOCK_LEFT else ClockSide.RIGHT
        return StoredClockTime(side=side, seconds=_hms_time(first, tag[1], tag[2]), at=at)
    marker = _EE_MARKERS.get(first)
    if marker is not None:
        return StoredMarker(tag=marker, at=at)
    if first in p.EE_NOPS or first in p.EE_RESERVED:
        return None
    raise InvalidMessage(f"unknown tag 0x{first:02x}")
