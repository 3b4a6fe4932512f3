"""Events only the DGT codec reports: clock acknowledgements and the board's stored log.

The DGT link consumes them (the log is how it recovers moves made while nobody listened); the
daemon sees only the events of :mod:`drivers.events`.
"""

from __future__ import annotations

import enum

import chess
import msgspec

from drivers.events import BoardEvent, ClockSide


class ClockAck(msgspec.Struct, frozen=True, kw_only=True):
    """The clock acknowledged a command (``command`` is the echoed command code)."""

    command: int
    error: bool
    data: tuple[int, int, int, int]
    at: float


class StoredChange(msgspec.Struct, frozen=True, kw_only=True):
    """A change read back from the board's own memory (DGT EEPROM), oldest first."""

    square: chess.Square
    piece: chess.Piece | None
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


class StoredMarker(msgspec.Struct, frozen=True, kw_only=True):
    """A marker read back from the board's memory, in order with ``StoredChange`` events.

    ``POWER_UP`` and ``START_GAME`` are followed by one ``StoredChange`` per piece on the board;
    ``BEGIN_POSITION``/``BEGIN_POSITION_ROTATED`` say the start position stood on the board.
    """

    tag: StoredTag
    at: float


class StoredClockTime(msgspec.Struct, frozen=True, kw_only=True):
    """A clock time the board stored at a lever press: ``side`` showed ``seconds`` remaining."""

    side: ClockSide
    seconds: int
    at: float


class StoredEnd(msgspec.Struct, frozen=True, kw_only=True):
    """The end of the board's memory (EE_EOF, or the end of the EE_MOVES message): reported
    after its last entry, also when the memory holds nothing at all."""

    at: float


StoredEntry = StoredChange | StoredMarker | StoredClockTime | StoredEnd
"""What the board's memory (EE_MOVES) reports, in order."""

DgtEvent = BoardEvent | ClockAck | StoredEntry
"""Everything the DGT codec can report."""
