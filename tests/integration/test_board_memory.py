"""Moves made while the board was unplugged come back from its memory (EE_MOVES) on reconnect;
the link's recall says when the memory cannot tell (nothing stored, the listing overwritten, an
answer cut short or none)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import chess
import pytest

from bridge.demo.game import perform
from drivers.choreography import Style
from drivers.dgt import link as dgt_link
from drivers.dgt.emulator import DgtEmulator, Memory
from drivers.dgt.link import DgtSerialLink
from drivers.errors import LinkError
from drivers.events import BoardEvent, SquareEmptied
from drivers.link import StoredPress
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.emulated import DEADLINE, until
from tests.integration.test_end_to_end import daemon

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]


def moves_of(sub: Subscription) -> list[Any]:
    return [json.loads(bytes(m.payload))["data"] for m in sub.on("event/move")]


def board_states(sub: Subscription) -> list[str]:
    return [json.loads(bytes(m.payload))["data"]["state"] for m in sub.on("board")]


async def test_four_plies_made_while_unplugged_are_recovered(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(3)
    board = chess.Board()

    async def play(*sans: str) -> None:
        for san in sans:
            move = board.parse_san(san)
            await perform(emu, board, move, Style.PLAIN, rng, 20.0)
            board.push(move)

    async with (
        DgtEmulator(speed=20.0, clock=False) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await sub.wait_for(lambda _: "connected" in board_states(sub), within=15)
        await play("e4", "c5")
        await sub.wait_for(lambda _: len(moves_of(sub)) == 2, within=10)
        await emu.unplug()
        await sub.wait_for(lambda _: "disconnected" in board_states(sub), within=15)
        await play("Nf3", "d6", "d4", "cxd4")  # four plies: more than the full board can tell
        await emu.plug()
        await sub.wait_for(lambda _: len(moves_of(sub)) == 6, within=30)
        await play("Nxd4")
        await sub.wait_for(lambda _: len(moves_of(sub)) == 7, within=10)

    moves = moves_of(sub)
    assert [m["uci"] for m in moves] == [mv.uci() for mv in board.move_stack]
    assert [m["completed_by"] for m in moves[2:6]] == ["reconstructed"] * 4
    assert moves[6]["completed_by"] == "release"
    states = board_states(sub)
    assert states.index("disconnected") < len(states) - 1 - states[::-1].index("connected")


# --- the link's recall, whatever the board's memory holds -------------------------------------

START: Final = [chess.Board().piece_at(square) for square in chess.SQUARES]
D2: Final = chess.D2
E2: Final = chess.E2


@contextlib.asynccontextmanager
async def reading(emu: DgtEmulator, events: list[BoardEvent]) -> AsyncIterator[DgtSerialLink]:
    """A DGT link open on ``emu`` and read, its events in ``events``."""
    link = DgtSerialLink(emu.path, events.append)
    await link.open()
    reader = asyncio.create_task(link.run())
    try:
        yield link
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, LinkError):
            await reader
        await link.close()


async def test_the_memory_gives_the_changes_and_presses_made_since_the_board_was_last_seen() -> (
    None
):
    events: list[BoardEvent] = []
    async with DgtEmulator() as emu, reading(emu, events) as link:
        await emu.lift("e2")
        await emu.place("e4", "P")
        await emu.press("left")
        steps = await link.recall(START)
    assert steps is not None
    assert [s for s in steps if not isinstance(s, StoredPress)] == [
        (chess.E2, None),
        (chess.E4, chess.Piece.from_symbol("P")),
    ]
    assert any(isinstance(s, StoredPress) for s in steps)


@pytest.mark.parametrize("memory", ["empty", "partial", "cut", "silent"])
async def test_a_memory_with_nothing_to_read_forward_from_gives_none(memory: Memory) -> None:
    """Nothing stored, the power-up listing overwritten, an answer cut short half-way, or no
    answer: the link says it cannot tell (the full board alone then tells what happened)."""
    events: list[BoardEvent] = []
    async with DgtEmulator(memory=memory) as emu, reading(emu, events) as link:
        await emu.lift("e2")
        await emu.place("e4", "P")
        assert await link.recall(START) is None
        await emu.lift("d2")  # the board is read as before
        await until(lambda: any(isinstance(e, SquareEmptied) and e.square == D2 for e in events))


ANSWER_LIMIT: Final = 10.0
"""Seconds a recall that should end at once, or after ``MEMORY_ANSWER`` (2 s) of silence, may
take here: generous on shared cores, and still short of the 15 s of ``MEMORY_TIMEOUT``."""


async def test_a_board_that_never_answers_costs_the_answer_wait_not_the_memory_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No byte of the memory comes: the recall gives up after ``MEMORY_ANSWER``, however long
    a memory that has begun to arrive may take, and the board is read as before."""
    monkeypatch.setattr(dgt_link, "MEMORY_TIMEOUT", 3600.0)
    events: list[BoardEvent] = []
    async with DgtEmulator(memory="silent") as emu, reading(emu, events) as link:
        await emu.lift("e2")
        await emu.place("e4", "P")
        assert await asyncio.wait_for(link.recall(START), ANSWER_LIMIT) is None
        await emu.lift("d2")
        await until(lambda: any(isinstance(e, SquareEmptied) and e.square == D2 for e in events))


@pytest.mark.parametrize("memory", ["empty", "partial", "log"])
async def test_a_memory_ends_at_its_end_mark_whatever_it_holds(
    monkeypatch: pytest.MonkeyPatch, memory: Memory
) -> None:
    """Nothing stored, a listing overwritten, or changes to read: the memory's end mark ends
    the wait, though the link would wait an hour for a first byte or for the rest."""
    monkeypatch.setattr(dgt_link, "MEMORY_ANSWER", 3600.0)
    monkeypatch.setattr(dgt_link, "MEMORY_TIMEOUT", 3600.0)
    events: list[BoardEvent] = []
    async with DgtEmulator(memory=memory) as emu, reading(emu, events) as link:
        await emu.lift("e2")
        await emu.place("e4", "P")
        steps = await asyncio.wait_for(link.recall(START), ANSWER_LIMIT)
    if memory == "log":
        assert steps is not None
        assert [s for s in steps if not isinstance(s, StoredPress)] == [
            (chess.E2, None),
            (chess.E4, chess.Piece.from_symbol("P")),
        ]
    else:
        assert steps is None


async def test_a_memory_answer_cut_by_another_message_ends_the_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The memory's message interrupted by a field change is the memory's end: the recall gives
    up then, however long the link would wait for a silent answer, and the change is read."""
    monkeypatch.setattr(dgt_link, "MEMORY_ANSWER", 3600.0)
    monkeypatch.setattr(dgt_link, "MEMORY_TIMEOUT", 3600.0)
    events: list[BoardEvent] = []
    async with DgtEmulator(memory="cut") as emu, reading(emu, events) as link:
        recall = asyncio.create_task(link.recall(START))
        await until(lambda: link.codec.receiving is not None)  # half the memory is in
        await emu.lift("e2")
        assert await asyncio.wait_for(recall, DEADLINE) is None
        await until(lambda: any(isinstance(e, SquareEmptied) and e.square == E2 for e in events))
