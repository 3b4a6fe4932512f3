"""DGT Pegasus codec: notifications in, physical events out; commands as bytes.

Contract:

* ``PegasusCodec.feed(source, data, at)`` accepts any bytes, in any chunking, and never raises:
  the framing is the DGT board's (§1.4: an id byte with its MSB set, a 14-bit total length, then
  7-bit bytes), read by the DGT codec with the Pegasus's own :class:`~drivers.dgt.codec.Dialect`.
  What it cannot use is dropped and reported as ``FrameDropped``.
* The Pegasus senses occupancy only (board-protocols.md §2): an occupied square is
  :data:`~drivers.events.UNKNOWN`; the engine infers which piece it is from the game. The board
  dump becomes a ``BoardSnapshot``, a field update a ``SquareEmptied`` or ``SquareOccupied``.
  Squares are DGT's (a8 = 0), in the board's own frame.
* The trademark is four lines of text (§2: ``Digital Game Technology`` / copyright / software
  version / ``hardware version: x, serial no: z``): it becomes a ``BoardInfo`` with the model
  :data:`~drivers.pegasus.protocol.MODEL` and the serial number read from its last line
  (``None`` if it has none that :func:`drivers.identity.serial` finds plausible). A trademark
  that is not plausible text is dropped.
* An occupancy board looks the same turned round: the start position cannot tell its
  orientation, so a board set up from Black's side is seen as it stands.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import chess

from drivers import identity
from drivers.dgt import codec as dgt
from drivers.dgt.events import DgtEvent
from drivers.events import (
    UNKNOWN,
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    ClockButton,
    ClockReading,
    FrameDropped,
    Occupant,
    SquareEmptied,
    SquareOccupied,
)
from drivers.pegasus import protocol as p

_GENERIC: Final = (
    SquareEmptied,
    SquareOccupied,
    BoardSnapshot,
    ClockReading,
    ClockButton,
    BoardInfo,
    FrameDropped,
)


def _occupant(code: int) -> Occupant | None:
    return None if code in p.EMPTY_CODES else UNKNOWN


def _board_dump(payload: bytes, at: float) -> list[DgtEvent]:
    squares: list[Occupant | None] = [None] * 64
    for index, code in enumerate(payload):
        squares[dgt.board_square(index)] = _occupant(code)
    return [BoardSnapshot(squares=tuple(squares), at=at)]


def _field_update(payload: bytes, at: float) -> list[DgtEvent]:
    square = dgt.board_square(payload[0])
    if _occupant(payload[1]) is None:
        return [SquareEmptied(square=square, at=at)]
    return [SquareOccupied(square=square, piece=UNKNOWN, at=at)]


def decode_trademark(payload: bytes, at: float) -> list[DgtEvent]:
    """The trademark text → the model and the serial number it carries (§2)."""
    raw = payload.decode("ascii")  # the framing keeps every byte below 0x80
    if identity.text(raw) is None:
        raise dgt.InvalidMessage(f"implausible trademark {payload[:16]!r}")
    return [BoardInfo(trademark=p.MODEL, serial=identity.serial_after(raw, p.SERIAL_LABEL), at=at)]


PEGASUS: Final = dgt.Dialect(
    names=p.MESSAGE_NAMES,
    sizes=p.MESSAGE_SIZES,
    decoders={
        p.MSG_BOARD_DUMP: _board_dump,
        p.MSG_FIELD_UPDATE: _field_update,
        p.MSG_SERIALNR: dgt.decode_serialnr,
        p.MSG_TRADEMARK: decode_trademark,
        p.MSG_VERSION: dgt.decode_version,
        p.MSG_BATTERY_STATUS: dgt.decode_battery,
        p.MSG_LONG_SERIALNR: dgt.decode_long_serialnr,
    },
)
"""The Pegasus's messages in the DGT framing (§2)."""


class PegasusCodec:
    """Sans-I/O decoder of the Pegasus's notifications (one characteristic, a byte stream)."""

    def __init__(self) -> None:
        self._framing = dgt.DgtCodec(PEGASUS)

    @property
    def buffered(self) -> int:
        """Bytes held for a message not yet complete."""
        return self._framing.buffered

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        """Consume ``data`` notified at ``at``; return the events it completes, in order."""
        if source != p.NOTIFY:
            return []
        return [e for e in self._framing.feed(data, at) if isinstance(e, _GENERIC)]


# --- Host → board commands (§1.3, §2) --------------------------------------------------------


def reset() -> bytes:
    """Back to idle (no reply)."""
    return bytes([p.CMD_RESET])


def send_board() -> bytes:
    """Ask for the board dump (occupancy)."""
    return bytes([p.CMD_SEND_BRD])


def update_board() -> bytes:
    """Report every square change by itself."""
    return bytes([p.CMD_SEND_UPDATE_BRD])


def version() -> bytes:
    """Ask for the firmware version."""
    return bytes([p.CMD_SEND_VERSION])


def trademark() -> bytes:
    """Ask for the trademark text (with the software, hardware and serial numbers)."""
    return bytes([p.CMD_SEND_TRADEMARK])


def battery() -> bytes:
    """Ask for the battery status."""
    return bytes([p.CMD_SEND_BATTERY_STATUS])


def leds(squares: Collection[chess.Square]) -> bytes:
    """Light exactly ``squares`` (board frame), steadily; none turns every light off."""
    if not squares:
        return bytes([p.CMD_LEDS, 0x02, 0x00, 0x00])
    indices = sorted((7 - chess.square_rank(sq)) * 8 + chess.square_file(sq) for sq in squares)
    body = bytes([p.LEDS_ON, p.LED_SPEED, p.LED_MODE_STEADY, p.LED_BRIGHTEST, *indices, 0x00])
    return bytes([p.CMD_LEDS, len(body)]) + body
