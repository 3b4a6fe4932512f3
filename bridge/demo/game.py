"""The demo's game and the hands that play it on an emulated board.

Morphy's Opera Game, with the two irregularities docs/product.md promises of the demo staged in
it, and :func:`perform`: a move made by hand-like lifts and places (:mod:`drivers.choreography`)
on an emulator. The tests and benchmarks play games with these too.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import chess

from drivers.choreography import Lift, Step, Style, steps
from drivers.emulation import EmulatedBoard


@dataclass(frozen=True, slots=True)
class DemoGame:
    """A game to play: headers and the moves in SAN."""

    white: str
    black: str
    event: str
    result: str
    moves: str
    """Space-separated SAN."""


OPERA_GAME = DemoGame(
    white="Paul Morphy",
    black="Duke Karl of Brunswick and Count Isouard",
    event="Paris Opera 1858",
    result="1-0",
    moves=(
        "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5 "
        "Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#"
    ),
)
"""Morphy's Opera Game: captures both ways, castling long, checks, and a mate to end it."""

WHITE_SIDE = "right"
"""The clock stands with White's side on the right (the demo's choice; the daemon infers it)."""


TOUCH_MOVE_BEFORE: Final = "Bg4"
"""Before this move Black lifts his knight on b8, puts it back, and moves the bishop (4.3)."""
ILLEGAL_BEFORE: Final = "Bc4"
"""Before this move White puts the bishop on c5, an illegal move, and presses the clock (7.5)."""

STAGED: Final = {
    TOUCH_MOVE_BEFORE: (
        "staged next, on purpose: Black lifts his knight on b8, puts it back and moves his "
        "bishop instead - a touch-move breach (Art. 4.3.1): expect a touch_move alert"
    ),
    ILLEGAL_BEFORE: (
        "staged next, on purpose: White puts his bishop on c5, an illegal move, and presses "
        "the clock (Art. 7.5.1): expect an illegal_move alert; then the bishop goes back and "
        "White plays Bc4"
    ),
}
"""What the demo announces on screen before each staged irregularity, so nobody takes it for
the engine misjudging Morphy's game."""


async def hand(emu: EmulatedBoard, speed: float, *actions: tuple[str, ...]) -> None:
    """Lifts (``("lift", sq)``) and places (``("place", sq, piece)``) at a human pace.

    Never faster than 0.3 s apart whatever the speed: quicker than that the engine rightly takes
    a lift and put-back for sensor flicker.
    """
    for action in actions:
        if action[0] == "lift":
            await emu.lift(action[1])
        else:
            await emu.place(action[1], action[2])
        await asyncio.sleep(max(0.3, 0.5 / speed))


async def perform(
    emu: EmulatedBoard,
    board: chess.Board,
    move: chess.Move,
    style: Style,
    rng: random.Random,
    speed: float = 1.0,
) -> None:
    """Make ``move`` on the emulated board with the hands, in ``style`` (no clock press)."""
    await make(emu, steps(board, move, style), lambda: rng.uniform(0.12, 0.3) / speed)


async def make(emu: EmulatedBoard, seq: Sequence[Step], pause: Callable[[], float]) -> None:
    """Carry out the lifts and places of ``seq`` on ``emu``, ``pause()`` seconds after each."""
    for step in seq:
        square = chess.square_name(step.square)
        if isinstance(step, Lift):
            await emu.lift(square)
        else:
            await emu.place(square, step.piece.symbol())
        await asyncio.sleep(pause())


def press_side(color: chess.Color) -> str:
    """The clock side a player of ``color`` presses."""
    return WHITE_SIDE if color == chess.WHITE else _other(WHITE_SIDE)


def _other(side: str) -> str:
    return "left" if side == "right" else "right"
