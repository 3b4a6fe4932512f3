"""The square lights: the last move, and after a mismatch the squares to put right."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import chess
import pytest

from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import AlertRaised
from bridge.table.lights import SquareLights
from drivers.choreography import Lift, Place, steps
from drivers.events import BoardSnapshot, SquareEmptied, SquareOccupied
from tests.table import HandFed

PAWN = chess.Piece(chess.PAWN, chess.WHITE)


class Lights:
    """A board's lights as the link would set them (a LedDisplay)."""

    def __init__(self) -> None:
        self.shown: list[set[chess.Square]] = []

    async def show(self, squares: Collection[chess.Square]) -> None:
        self.shown.append(set(squares))


def play(table: HandFed, san: str) -> None:
    board = table.arbiter.board.copy()
    move = board.parse_san(san)
    table.do(steps(board, move))
    table.wait(1.0)


def alert(kind: str) -> AlertRaised:
    return AlertRaised(kind=kind, article="", ply=1, color=None, message="", at=0.0)


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_the_last_move_is_lit_and_sent_only_when_it_changes() -> None:
    table, lights, leds = HandFed(Arbiter()), SquareLights(), Lights()
    lights.update(table.arbiter, (), leds)
    play(table, "e4")
    lights.update(table.arbiter, (), leds)
    lights.update(table.arbiter, (), leds)  # nothing new: nothing sent
    play(table, "Nf6")
    lights.update(table.arbiter, (), leds)
    await settle()
    assert leds.shown == [set(), {chess.E2, chess.E4}, {chess.G8, chess.F6}]
    lights.forget()  # the board was unplugged: a board back shows nothing until told again
    lights.update(table.arbiter, (), leds)
    await settle()
    assert leds.shown[-1] == {chess.G8, chess.F6}
    assert len(leds.shown) == 4


@pytest.mark.parametrize("kind", ["board_mismatch", "displaced_pieces", "illegal_move"])
async def test_after_a_mismatch_the_squares_to_put_right_until_they_are(kind: str) -> None:
    table, lights, leds = HandFed(Arbiter()), SquareLights(), Lights()
    play(table, "e4")
    table.do([Lift(chess.D2), Lift(chess.C2)])  # two pawns knocked off their squares
    lights.update(table.arbiter, [alert("touch_move")], leds)
    assert lights.wanted(table.arbiter) == {chess.E2, chess.E4}, "not every alert is a mismatch"
    lights.update(table.arbiter, [alert(kind)], leds)
    assert lights.wanted(table.arbiter) == {chess.D2, chess.C2}
    table.do([Place(chess.D2, PAWN)])
    assert lights.wanted(table.arbiter) == {chess.C2}, "each square goes out as it is fixed"
    table.do([Place(chess.C2, PAWN)])
    assert lights.wanted(table.arbiter) == {chess.E2, chess.E4}, "then the last move again"
    table.do([Lift(chess.D7)])
    assert lights.wanted(table.arbiter) == {chess.E2, chess.E4}, "a piece in hand is no mismatch"


async def test_the_lights_are_in_the_boards_own_frame() -> None:
    arbiter = Arbiter()
    turned = tuple(chess.BaseBoard().piece_at(63 - sq) for sq in chess.SQUARES)
    arbiter.feed(BoardSnapshot(squares=turned, at=1.0), 1.0)
    assert arbiter.rotated
    # e2e4 by the players, which the board set up from Black's side reports as d7 to d5.
    arbiter.feed(SquareEmptied(square=chess.D7, at=2.0), 2.0)
    arbiter.feed(SquareOccupied(square=chess.D5, piece=PAWN, at=2.2), 2.2)
    assert [m.uci() for m in arbiter.board.move_stack] == ["e2e4"]
    assert SquareLights().wanted(arbiter) == {chess.D7, chess.D5}
