"""What a board stored while nobody listened: the changes since the host last saw it.

A DGT board keeps a cyclic log of every square change in its EEPROM while it is powered
(board-protocols.md §1.11). Each change says what a square holds *now*, not what it held, so
the log can only be read forward from a point where the whole board is known: the power-up
marker, after which the board lists every piece. Replaying forward from there gives the board
after every change; the last time it equals the board the host last saw is where the host lost
track, and every change after it is new. The clock presses the board stored in between are
recovered with the changes. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from drivers.dgt.events import DgtEvent, StoredChange, StoredClockTime, StoredMarker, StoredTag
from drivers.events import Occupant
from drivers.link import RecoveredStep, StoredPress

_FULL_LISTING = frozenset({StoredTag.POWER_UP, StoredTag.START_GAME})


def steps_since(
    stored: Sequence[DgtEvent], last_seen: Sequence[Occupant | None]
) -> list[RecoveredStep] | None:
    """The stored changes and clock presses made after the board last looked like
    ``last_seen`` (board frame), oldest first.

    ``stored`` is the board's log as the codec reports it, oldest first. ``None`` when the log
    has no full listing to start from, or never shows ``last_seen`` after it (nor, with a
    piece or two of it in hands, the board as it stood as the last move seen landed): the
    caller then falls back on the full board alone.

    A clock tag (§1.11: the time shown on a side at a lever press) becomes a press of that
    side: the emulator stores the pressed side's display, as the tag's ``f`` bit reads.
    """
    start = None
    for i, event in enumerate(stored):
        if isinstance(event, StoredMarker) and event.tag in _FULL_LISTING:
            start = i
    if start is None:
        return None
    board: list[Occupant | None] = [None] * 64
    steps: list[RecoveredStep] = []
    target = list(last_seen)
    synced: int | None = None
    near: tuple[int, tuple[int, ...]] | None = None
    for event in stored[start + 1 :]:
        if isinstance(event, StoredMarker) and event.tag in _FULL_LISTING:
            board = [None] * 64  # a new power-up: the board lists its pieces again
            steps.clear()
            synced = near = None
            continue
        if isinstance(event, StoredClockTime):
            steps.append(StoredPress(event.side))
            continue
        if not isinstance(event, StoredChange) or board[event.square] == event.piece:
            continue
        board[event.square] = event.piece
        steps.append((event.square, event.piece))
        if board == target:
            synced = len(steps)
        elif (held := _held(board, target)) is not None:
            near = (len(steps), held)
    if synced is not None:
        return steps[synced:]
    if near is None:
        return None
    # The board never looked exactly so: the other player's hand was at work as the last move
    # seen landed (two hands on the board). From when it looked so but for the pieces in hand,
    # lifted first.
    at, held = near
    lifts: list[RecoveredStep] = [(square, None) for square in held]
    return lifts + steps[at:]


def _held(
    board: Sequence[Occupant | None], target: Sequence[Occupant | None]
) -> tuple[int, ...] | None:
    """The squares whose pieces ``board`` lacks, ``target`` being ``board`` with one or two
    pieces put back (one in each hand); ``None`` when it is not so."""
    held: list[int] = []
    for square, (piece, wanted) in enumerate(zip(board, target, strict=True)):
        if piece != wanted:
            if piece is not None or len(held) == 2:
                return None
            held.append(square)
    return tuple(held)
