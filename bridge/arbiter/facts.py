"""Game facts: what the arbiter engine concludes from physical events.

The engine emits these; the publisher turns each into one MQTT event in the envelope of
docs/product.md §2 (``payloads.py``). They are plain frozen values with python-chess types;
names and JSON shapes are chosen in ``payloads.py`` only.
"""

from __future__ import annotations

import enum

import chess
import msgspec


class CompletedBy(enum.Enum):
    """What completed a move: its last piece released and settled, or the clock press (6.7)."""

    RELEASE = "release"
    CLOCK = "clock"
    RECONSTRUCTED = "reconstructed"


class ClockTimes(msgspec.Struct, frozen=True, kw_only=True):
    """Remaining time in seconds by colour, and the colour whose clock runs (``None``: stopped)."""

    white: int
    black: int
    running: chess.Color | None


class MovePlayed(msgspec.Struct, frozen=True, kw_only=True):
    """A legal move on the board. ``supersedes`` marks a correction of an already published ply."""

    ply: int
    move: chess.Move
    san: str
    fen: str
    color: chess.Color
    touched: tuple[chess.Square, ...]
    completed_by: CompletedBy
    clock: ClockTimes | None
    supersedes: bool
    at: float
    promotion_assumed: bool = False
    """A promotion on a board that cannot sense the new piece: a queen, assumed."""


class TouchAction(enum.Enum):
    """A piece lifted off a square, or put on one."""

    LIFT = "lift"
    PLACE = "place"


class TouchReported(msgspec.Struct, frozen=True, kw_only=True):
    """One lift or place with its chess meaning, for arbiters (``event/touch``)."""

    action: TouchAction
    square: chess.Square
    piece: chess.Piece | None
    meaning: str
    ply: int
    at: float
    hand: chess.Color | None = None
    """Whose hand the engine takes it to be: the player having the move for his own pieces, the
    other player for his own pieces that the player having the move cannot capture (his reply
    begun early: two hands on the board); ``None`` when either may be (a piece the player having
    the move can capture: the move that follows tells), or nobody's (a piece knocked off)."""


class ClockPressed(msgspec.Struct, frozen=True, kw_only=True):
    """The clock lever changed sides: ``by`` pressed it (``None`` if colours are not known yet)."""

    by: chess.Color | None
    clock: ClockTimes
    completes_ply: int | None
    at: float


class ClockChanged(msgspec.Struct, frozen=True, kw_only=True):
    """The clock started, stopped, showed a fallen flag, or was connected or disconnected."""

    state: str
    clock: ClockTimes | None
    at: float


class AlertRaised(msgspec.Struct, frozen=True, kw_only=True):
    """A breach of the Laws or an irregularity; the arbiter decides (``event/alert``)."""

    kind: str
    article: str
    ply: int
    color: chess.Color | None
    message: str
    details: dict[str, str | int | list[str] | None] = msgspec.field(default_factory=dict)
    at: float
    id: int = 0
    """Per game, for ``ack_alert``; 0 when not numbered."""


class GameEnded(msgspec.Struct, frozen=True, kw_only=True):
    """The game is over: ``result`` is ``1-0``, ``0-1`` or ``1/2-1/2``."""

    result: str
    reason: str
    article: str
    at: float


Fact = MovePlayed | TouchReported | ClockPressed | ClockChanged | AlertRaised | GameEnded
"""Everything the engine can emit."""
