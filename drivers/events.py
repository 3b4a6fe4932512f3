"""Physical events: what a board and its clock report, with no chess meaning.

Codecs turn bytes into these; the arbiter engine turns them into game facts. Every event carries
``at``, the time (seconds, the daemon's monotonic clock) at which the link received the bytes, so
that replaying a recording is deterministic. Squares and pieces are python-chess values
(``chess.A1 == 0`` ... ``chess.H8 == 63``) in the board's own frame; the engine handles
orientation.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import chess


@dataclass(frozen=True, slots=True, kw_only=True)
class SquareEmptied:
    """A piece was lifted off ``square`` (the square reads empty now)."""

    square: chess.Square
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SquareOccupied:
    """``square`` now holds ``piece``; ``None`` means a piece the board cannot identify."""

    square: chess.Square
    piece: chess.Piece | None
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardSnapshot:
    """A full reading of the board: ``squares[sq]`` for every square 0..63 (a1 first)."""

    squares: tuple[chess.Piece | None, ...]
    at: float


class ClockSide(enum.Enum):
    """A physical side of the clock, as the board reports it (not a colour)."""

    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockReading:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockButton:
    """A button on the clock face was pressed (DGT 3000: back, plus, run, minus, ok)."""

    button: str
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class ClockAck:
    """The clock acknowledged a command (``command`` is the echoed command code)."""

    command: int
    error: bool
    data: tuple[int, int, int, int]
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class BoardInfo:
    """Identity or health reported by the board; fields not carried by a message are ``None``."""

    at: float
    serial: str | None = None
    version: str | None = None
    trademark: str | None = None
    battery_percent: int | None = None
    charging: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredChange:
    """A change read back from the board's own memory (DGT EEPROM), oldest first."""

    square: chess.Square
    piece: chess.Piece | None
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameDropped:
    """Bytes that formed no valid message; dropped and counted, never raised."""

    reason: str
    raw: bytes
    at: float


class StoredTag(enum.Enum):
    """A one-byte marker in the DGT EEPROM move store (board-protocols.md §1.11)."""

    POWER_UP = "power_up"
    FOUR_ROWS = "four_rows"
    EMPTY_BOARD = "empty_board"
    DOWNLOADED = "downloaded"
    BEGIN_POSITION = "begin_position"
    BEGIN_POSITION_ROTATED = "begin_position_rotated"
    START_GAME = "start_game"
    WATCHDOG = "watchdog"


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredMarker:
    """A marker read back from the board's memory, in order with ``StoredChange`` events.

    ``POWER_UP`` and ``START_GAME`` are followed by one ``StoredChange`` per piece on the board;
    ``BEGIN_POSITION``/``BEGIN_POSITION_ROTATED`` say the start position stood on the board.
    """

    tag: StoredTag
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredClockTime:
    """A clock time the board stored at a lever press: ``side`` showed ``seconds`` remaining."""

    side: ClockSide
    seconds: int
    at: float


BoardEvent = (
    SquareEmptied
    | SquareOccupied
    | BoardSnapshot
    | ClockReading
    | ClockButton
    | ClockAck
    | BoardInfo
    | StoredChange
    | FrameDropped
    | StoredMarker
    | StoredClockTime
)
"""Everything a codec can report."""


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
    )
