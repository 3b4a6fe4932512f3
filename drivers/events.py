"""Physical events: what a board and its clock report, with no chess meaning.

Codecs turn bytes into these; the arbiter engine turns them into game facts. Every event carries
``at``, the time (seconds, the daemon's monotonic clock) at which the link received the bytes, so
that replaying a recording is deterministic. Squares and pieces are python-chess values
(``chess.A1 == 0`` ... ``chess.H8 == 63``) in the board's own frame; the engine handles
orientation.
"""

from __future__ import annotations

import enum
from typing import Final

import chess
import msgspec


class UnknownPiece(msgspec.Struct, frozen=True):
    """A piece stands on the square, but the board cannot tell which (occupancy-only sensors)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Final = UnknownPiece()
"""The one unknown occupant."""

Occupant = chess.Piece | UnknownPiece
"""What a board can say stands on an occupied square."""


class SquareEmptied(msgspec.Struct, frozen=True, kw_only=True):
    """A piece was lifted off ``square`` (the square reads empty now)."""

    square: chess.Square
    at: float


class SquareOccupied(msgspec.Struct, frozen=True, kw_only=True):
    """``square`` now holds ``piece``: a known piece, or :data:`UNKNOWN` on boards that sense
    only occupancy (DGT Pegasus) or cannot identify this piece (an uncalibrated Certabo tag)."""

    square: chess.Square
    piece: Occupant
    at: float


class BoardSnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """A full reading of the board: ``squares[sq]`` for every square 0..63 (a1 first).

    ``None`` is an empty square; an occupied one holds a piece or :data:`UNKNOWN`."""

    squares: tuple[Occupant | None, ...]
    at: float


class ClockSide(enum.Enum):
    """A physical side of the clock, as the board reports it (not a colour)."""

    LEFT = "left"
    RIGHT = "right"


class ClockReading(msgspec.Struct, frozen=True, kw_only=True):
    """The clock's displays and lever.

    ``left``/``right`` are the remaining times in seconds. ``running`` tells whether a clock is
    running; ``lever_high`` is the side whose lever is up (that side's clock is the one that runs
    when the clock runs). ``connected`` is false when the board says no clock is attached, in which
    case the other fields are meaningless. ``left_flag``/``right_flag`` are the fallen-flag
    indicators.
    """

    left: int
    right: int
    running: bool
    lever_high: ClockSide
    connected: bool
    left_flag: bool
    right_flag: bool
    battery_low: bool
    at: float


class ClockButton(msgspec.Struct, frozen=True, kw_only=True):
    """A button on the clock face was pressed (DGT 3000: back, plus, run, minus, ok)."""

    button: str
    at: float


class BoardInfo(msgspec.Struct, frozen=True, kw_only=True):
    """Identity or health reported by the board; fields not carried by a message are ``None``."""

    at: float
    serial: str | None = None
    version: str | None = None
    trademark: str | None = None
    battery_percent: int | None = None
    charging: bool | None = None
    rssi: int | None = None
    """Signal strength in dBm, for wireless boards (as last advertised)."""


class FrameDropped(msgspec.Struct, frozen=True, kw_only=True):
    """Bytes that formed no valid message; dropped and counted, never raised."""

    reason: str
    raw: bytes
    at: float


BoardEvent = (
    SquareEmptied
    | SquareOccupied
    | BoardSnapshot
    | ClockReading
    | ClockButton
    | BoardInfo
    | FrameDropped
)
"""Every physical event that means the same for every board family.

A family's codec may report more (the DGT codec: clock acknowledgements, the board's stored
log); its link consumes those and hands only these to the daemon."""


def merge_info(old: BoardInfo, new: BoardInfo) -> BoardInfo:
    """``old`` updated with every field ``new`` carries (boards report one field at a time)."""
    return BoardInfo(
        at=new.at,
        serial=new.serial if new.serial is not None else old.serial,
        version=new.version if new.version is not None else old.version,
        trademark=new.trademark if new.trademark is not None else old.trademark,
        battery_percent=(
            new.battery_percent if new.battery_percent is not None else old.battery_percent
        ),
        charging=new.charging if new.charging is not None else old.charging,
        rssi=new.rssi if new.rssi is not None else old.rssi,
    )
