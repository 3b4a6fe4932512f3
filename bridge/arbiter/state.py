"""The arbiter's states and the one table of its transitions.

Theory of operation
-------------------
The engine (``engine.Arbiter``) holds two boards: the *game*, a python-chess ``Board`` of the
moves recorded so far, and the *physical* board, what the sensors say stands on each square now
(``sensed.Sensed``). It keeps the set of squares where the two differ, updated on each sensor
event. A legal move changes two to four squares, so only then is there a question to ask, and
``positions.find_move`` answers it from those squares, python-chess deciding legality.

Between two moves the game is in one of seven states. Four make the *ply cycle*:

* ``AT_REST`` - the board is the game, and the last move is final (pressed, or there is none).
* ``HAND_AT_WORK`` - the board differs from the game: a piece in the hand, a capture half done,
  a king on g1 with the rook still on h1, or a legal move shown that may not be finished (a
  piece that may slide on waits for the *dwell*; ``moves``). Nothing is emitted but touches.
* ``REVISABLE`` - a move was recorded on its release (Art. 4.7) and no press is awaited (no
  clock, or it is stopped): until the opponent's move is recorded, the board may still turn into
  another legal move from the position before it (the king of a rook-first castling, a piece
  released and moved on), which is recorded for the same ply instead, with its alert.
* ``AWAITING_PRESS`` - a move was recorded on its release while the clock runs: the mover's
  press completes it (1997 6.7 a, 2018 6.2.1); until then it is revisable as above. A press
  returns to ``AT_REST`` or ``HAND_AT_WORK``; the opponent's move recorded first raises
  ``clock_not_pressed``.

Three stand above the cycle, which they leave as it was, in this order of precedence:

* ``IRREGULAR`` - an illegal move, a press without a move (2018 7.5.3), or a released move
  changed before the press: the engine waits for the position before the irregularity (or a
  legal move from it), or, where the edition lets an unclaimed illegal move stand, for the
  opponent's reply (``irregular``).
* ``MISMATCH`` - the board, read whole (a restart, a reconnect), is explained by no move or line
  of moves (``recovery``); it is judged when it stays so.
* ``OVER`` - a result was reached; lifts and places are touches, not moves.

Every change of state goes through ``Turn``, which allows only the transitions of
``TRANSITIONS``: the table is the state machine. The collaborators that judge are the press
(``press``: what a clock press completes, 6.7), Article 4 (``touch``: touches, releases,
castling, promotion), the irregularities (``irregular``: Article 7), the recovery of moves made
while nobody listened (``recovery``), the end of the game (``judge``: 5, 6.9, 9.6), the clock
(``clock``) and the rules editions as data (``rules``). Pure: no I/O, no clock reads; time
comes in as ``now`` and ``Arbiter.next_deadline`` says when it next needs a timer.
"""

from __future__ import annotations

import enum
from typing import Final

import chess
import msgspec

from bridge.arbiter.facts import GameEnded


class State(enum.Enum):
    """Where the game stands between two moves (see the module docstring)."""

    AT_REST = "at rest"
    HAND_AT_WORK = "a hand at work"
    REVISABLE = "a move recorded, still revisable"
    AWAITING_PRESS = "waiting for the press"
    IRREGULAR = "irregular"
    MISMATCH = "mismatch"
    OVER = "game over"


class Trigger(enum.Enum):
    """What moves the game from one state to another."""

    BOARD_CHANGED = "a square changed, or the board was read whole"
    RELEASED = "a move recorded on its release, no press awaited"
    RELEASED_CLOCK_RUNNING = "a move recorded on its release while the clock runs"
    COMPLETED = "a move recorded by the press that completed it"
    PRESSED = "the awaited press"
    TAKEN_BACK = "the recorded move taken back: it was part of an illegal one"
    IRREGULARITY = "an illegal move, a press without one, a released move changed"
    RESTORED = "the position before the irregularity is back, or a move recorded"
    UNEXPLAINED = "a full reading of the board that nothing explains"
    EXPLAINED = "the reading explained by moves, restored, or reported"
    ENDED = "a result"
    NEW_GAME = "a game set (a new game, a correction, an illegal move that stood)"


_CYCLE: Final = frozenset(
    {State.AT_REST, State.HAND_AT_WORK, State.REVISABLE, State.AWAITING_PRESS}
)
_OPEN: Final = frozenset({State.AT_REST, State.HAND_AT_WORK})
_ANY: Final = frozenset(State)

TRANSITIONS: Final[dict[Trigger, tuple[frozenset[State], frozenset[State]]]] = {
    # trigger: (the states it may fire in, the states it may lead to)
    Trigger.BOARD_CHANGED: (_ANY, _ANY),  # the cycle's open states follow the board
    Trigger.RELEASED: (_CYCLE, frozenset({State.REVISABLE})),
    Trigger.RELEASED_CLOCK_RUNNING: (_CYCLE, frozenset({State.AWAITING_PRESS})),
    Trigger.COMPLETED: (_CYCLE, _OPEN),
    Trigger.PRESSED: (frozenset({State.AWAITING_PRESS}), _OPEN),
    Trigger.TAKEN_BACK: (_CYCLE, _OPEN),
    Trigger.IRREGULARITY: (_CYCLE | {State.IRREGULAR}, frozenset({State.IRREGULAR})),
    Trigger.RESTORED: (frozenset({State.IRREGULAR}), _CYCLE),
    Trigger.UNEXPLAINED: (_ANY - {State.OVER}, frozenset({State.MISMATCH})),
    Trigger.EXPLAINED: (frozenset({State.MISMATCH}), _ANY - {State.MISMATCH}),
    Trigger.ENDED: (_ANY, frozenset({State.OVER})),
    Trigger.NEW_GAME: (_ANY, _OPEN),
}
"""Every transition of the arbiter: which states a trigger fires in, and where it may lead."""


class StateError(RuntimeError):
    """A transition the table does not allow: a bug of the engine, never a board's doing."""


class Stood(msgspec.Struct):
    """The position an illegal move left: it stands if the opponent replies to it."""

    board: chess.Board
    squares: list[chess.Piece | None]
    diff: set[chess.Square]
    """Where the physical board differs from ``squares``."""
    move: chess.Move | None


class Irregular(msgspec.Struct):
    """An illegal move (or a press without one) by ``offender``: the engine waits (above)."""

    offender: chess.Color
    judged: tuple[chess.Piece | None, ...]
    """The board when it was judged: the same board pressed again is the same irregularity."""
    stood: Stood | None
    completes: chess.Move | None = None
    """2018 7.5.2: the pawn left unpromoted on this move's square, replaced by a new piece,
    makes the move the offender's press already completed (no press of his is awaited)."""


class Turn:
    """The state of the game between two moves, changed only through ``TRANSITIONS``.

    It holds the ply cycle (``cycle``, and whose press is ``awaiting``) and what stands above
    it: the ``irregular`` move waited on, since when the board is ``unexplained``, the
    ``result``. ``state`` is the highest of them.
    """

    __slots__ = ("awaiting", "cycle", "irregular", "result", "unexplained")

    def __init__(self) -> None:
        self.cycle = State.AT_REST
        self.awaiting: chess.Color | None = None
        """``AWAITING_PRESS``: whose press is awaited."""
        self.irregular: Irregular | None = None
        self.unexplained: float | None = None
        """``MISMATCH``: since when a reading of the whole board is explained by nothing."""
        self.result: GameEnded | None = None

    @property
    def state(self) -> State:
        """The state the game is in now."""
        if self.result is not None:
            return State.OVER
        if self.unexplained is not None:
            return State.MISMATCH
        if self.irregular is not None:
            return State.IRREGULAR
        return self.cycle

    @property
    def revisable(self) -> bool:
        """The last move was recorded on its release and nothing has made it final yet."""
        return self.cycle in (State.REVISABLE, State.AWAITING_PRESS)

    def board_changed(self, differs: bool) -> None:
        """The board differs from the game, or not, after a sensor event or a correction."""
        if self.cycle in _OPEN:
            self._go(Trigger.BOARD_CHANGED, _open(differs))

    def recorded(
        self, color: chess.Color, *, differs: bool, completed: bool, clock_running: bool
    ) -> None:
        """A move of ``color`` was recorded (``completed``: by its press, or pressed before)."""
        self.restored()
        if completed:
            self._go(Trigger.COMPLETED, _open(differs))
        elif clock_running:
            self._go(Trigger.RELEASED_CLOCK_RUNNING, State.AWAITING_PRESS)
            self.awaiting = color
        else:
            self._go(Trigger.RELEASED, State.REVISABLE)

    def pressed(self, differs: bool) -> None:
        """The awaited press came: the move is final."""
        self._go(Trigger.PRESSED, _open(differs))

    def taken_back(self, differs: bool) -> None:
        """The recorded move was taken back: it was part of an illegal one."""
        self._go(Trigger.TAKEN_BACK, _open(differs))

    def irregularity(self, irregular: Irregular) -> None:
        """An irregularity: the engine now waits for the position before it."""
        source = State.IRREGULAR if self.irregular is not None else self.cycle
        self._check(Trigger.IRREGULARITY, source, State.IRREGULAR)
        self.irregular = irregular

    def restored(self) -> None:
        """The position before the irregularity is back, or a move was recorded from it."""
        if self.irregular is not None:
            self._check(Trigger.RESTORED, State.IRREGULAR, self.cycle)
            self.irregular = None

    def stood(self, differs: bool) -> None:
        """The illegal move stood: the game goes on from the position it left, a new ply."""
        self._check(Trigger.RESTORED, State.IRREGULAR, _open(differs))
        self.irregular = None
        self.cycle = _open(differs)
        self.awaiting = None

    def mismatch(self, since: float) -> None:
        """A reading of the whole board that nothing explains, from ``since``."""
        self._check(Trigger.UNEXPLAINED, self.state, State.MISMATCH)
        self.unexplained = since

    def explained(self) -> None:
        """The reading is explained, restored, or reported."""
        if self.unexplained is not None:
            self.unexplained = None
            self._check(Trigger.EXPLAINED, State.MISMATCH, self.state)

    def ended(self, result: GameEnded) -> None:
        """A result."""
        self._check(Trigger.ENDED, self.state, State.OVER)
        self.result = result

    def new_game(self, differs: bool) -> None:
        """A game was set: its first ply is open."""
        self._check(Trigger.NEW_GAME, self.state, _open(differs))
        self.irregular = self.unexplained = self.result = None
        self.cycle = _open(differs)
        self.awaiting = None

    def _go(self, trigger: Trigger, target: State) -> None:
        self._check(trigger, self.cycle, target)
        self.cycle = target
        if target is not State.AWAITING_PRESS:
            self.awaiting = None

    @staticmethod
    def _check(trigger: Trigger, source: State, target: State) -> None:
        sources, targets = TRANSITIONS[trigger]
        if source not in sources or target not in targets:
            raise StateError(f"{trigger.name} from {source.name} to {target.name}")


def _open(differs: bool) -> State:
    return State.HAND_AT_WORK if differs else State.AT_REST
