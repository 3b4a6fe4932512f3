"""The clock beside the board: whose side is White's, the times, presses and flags.

A DGT clock reports which side's lever is up; that side's clock runs. A change of the high side
is a press by the player whose side went down. Which side is White's is set in the config or
inferred: before the first move, the clock that runs is White's (Art. 6.5); on a game resumed
after a restart, the running clock is the side to move's; a clock that was not running before
move 1 is White's at its first press. Pure: no I/O.
"""

from __future__ import annotations

import chess
import msgspec

from bridge.arbiter.facts import ClockTimes
from drivers.events import ClockReading, ClockSide


class Update(msgspec.Struct, frozen=True, kw_only=True):
    """What a clock reading changed."""

    quiet: bool = False
    """Only the times went on (the clock's message while a player thinks)."""
    disconnected: bool = False
    """The clock was connected and is not any more."""
    pressed: ClockSide | None = None
    """The side whose lever went down: a press."""
    state: str | None = None
    """``running`` or ``stopped``: the clock was connected, started or stopped."""
    flagged: chess.Color | None = None
    """Whose flag fell, when only one did (6.9; both at once: which fell first is unknown)."""


class Clock:
    """The last clock reading, and the colours of its sides."""

    __slots__ = ("_times", "reading", "white_side")

    def __init__(self, white_side: ClockSide | None) -> None:
        self.reading: ClockReading | None = None
        self.white_side = white_side
        """Which side is White's; ``None`` until configured or inferred."""
        self._times: tuple[ClockReading, ClockTimes] | None = None

    @property
    def running(self) -> bool:
        """A connected clock is running."""
        reading = self.reading
        return reading is not None and reading.connected and reading.running

    @property
    def connected(self) -> bool:
        """A clock is connected."""
        return self.reading is not None and self.reading.connected

    def color_of(self, side: ClockSide) -> chess.Color | None:
        """The colour of ``side``, once the sides are known."""
        if self.white_side is None:
            return None
        return chess.WHITE if side is self.white_side else chess.BLACK

    def times(self) -> ClockTimes | None:
        """Remaining times by colour, if a clock is connected and its sides are known."""
        reading = self.reading
        if self._times is not None and self._times[0] is reading:
            return self._times[1]
        white_side = self.white_side
        if reading is None or not reading.connected or white_side is None:
            return None
        running: chess.Color | None = None
        if reading.running:
            running = reading.lever_high is white_side
        if white_side is ClockSide.LEFT:
            times = ClockTimes(white=reading.left, black=reading.right, running=running)
        else:
            times = ClockTimes(white=reading.right, black=reading.left, running=running)
        self._times = (reading, times)
        return times

    def update(self, reading: ClockReading, turn: chess.Color, has_moves: bool) -> Update:
        """Take a reading; ``turn`` is the side to move in the game, ``has_moves`` whether a
        move was recorded."""
        prev, self.reading = self.reading, reading
        if (
            prev is not None
            and reading.lever_high is prev.lever_high
            and reading.running == prev.running
            and reading.connected
            and prev.connected
            and reading.left_flag == prev.left_flag
            and reading.right_flag == prev.right_flag
            and self.white_side is not None
        ):
            return Update(quiet=True)
        was_connected = prev is not None and prev.connected
        if not reading.connected:
            return Update(disconnected=was_connected)
        if self.white_side is None and reading.running:
            # The running clock is the player's having the move: White's before move 1 (6.5),
            # and on a game resumed after a restart, whoever is to move.
            side = reading.lever_high
            other = ClockSide.LEFT if side is ClockSide.RIGHT else ClockSide.RIGHT
            self._set_white(side if turn == chess.WHITE else other)
        pressed: ClockSide | None = None
        state: str | None = None
        if was_connected and prev is not None and reading.lever_high != prev.lever_high:
            pressed = prev.lever_high
            if self.white_side is None and has_moves:
                self._set_white(pressed)  # not running before move 1: the first press is White's
        elif not was_connected or (prev is not None and prev.running != reading.running):
            state = "running" if reading.running else "stopped"
        return Update(pressed=pressed, state=state, flagged=self._flag(prev, reading))

    def _flag(self, prev: ClockReading | None, reading: ClockReading) -> chess.Color | None:
        left = reading.left_flag and not (prev is not None and prev.left_flag)
        right = reading.right_flag and not (prev is not None and prev.right_flag)
        if left == right:
            return None
        return self.color_of(ClockSide.LEFT if left else ClockSide.RIGHT)

    def _set_white(self, side: ClockSide) -> None:
        self.white_side = side
        self._times = None
