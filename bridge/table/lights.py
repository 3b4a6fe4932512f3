"""The board's square lights, for any link that has them (:class:`drivers.link.LedDisplay`).

They show the last move's two squares (the king's for a castling); after a ``board_mismatch``,
``displaced_pieces`` or ``illegal_move`` alert, the squares where the board differs from the
game instead, put out one by one as the pieces go back, until the board agrees with the game
again. Lights are sent
only when what they should show changes, and again to a board that has just (re)connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Final

import chess

from bridge.arbiter.engine import Arbiter
from bridge.arbiter.facts import AlertRaised, Fact
from drivers.errors import LinkError
from drivers.link import LedDisplay

log = logging.getLogger("chessbridge")

FIX_KINDS: Final = frozenset({"board_mismatch", "displaced_pieces", "illegal_move"})
"""Alerts after which the lights show the squares to put right."""


class SquareLights:
    """What the lights show, and sending it; see the module docstring."""

    def __init__(self) -> None:
        self._shown: frozenset[chess.Square] | None = None
        self._fixing = False
        self._sending: set[asyncio.Task[None]] = set()

    def forget(self) -> None:
        """The board went away: whatever comes back shows nothing yet."""
        self._shown = None

    def update(self, arbiter: Arbiter, facts: Sequence[Fact], leds: LedDisplay | None) -> None:
        """After ``facts``: light what the game now calls for, if ``leds`` and if it changed."""
        if any(isinstance(fact, AlertRaised) and fact.kind in FIX_KINDS for fact in facts):
            self._fixing = True
        wanted = self.wanted(arbiter)
        if leds is None or wanted == self._shown:
            return
        self._shown = wanted
        task = asyncio.get_running_loop().create_task(_show(leds, wanted))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def wanted(self, arbiter: Arbiter) -> frozenset[chess.Square]:
        """The squares to light, in the board's own frame."""
        squares = arbiter.differing() if self._fixing else frozenset()
        if not squares:
            self._fixing = False
            stack = arbiter.board.move_stack
            squares = frozenset((stack[-1].from_square, stack[-1].to_square) if stack else ())
        return frozenset(63 - sq if arbiter.rotated else sq for sq in squares)


async def _show(leds: LedDisplay, squares: frozenset[chess.Square]) -> None:
    with contextlib.suppress(LinkError, OSError):
        await leds.show(squares)
