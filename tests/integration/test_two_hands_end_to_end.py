"""Two hands on the board, end to end: boards without a clock → ``chessbridge run`` → Mosquitto.

The recorded game of ``tests.unit.test_two_hands`` (36 plies ending in mate, replies begun
before the mover's piece lands: 7. e4 Bg4 with the bishop lifted before the pawn is down, whole
replies put down first) is played in real time, lift by lift, on emulated boards that give the
daemon no clock: a DGT board without one (field updates), a Millennium board (whole readings
every 41 ms) and a Chessnut Air on the virtual radio. Only what reaches MQTT is judged: every
move in order, nobody accused, and Black's bishop lifted before e4 lands said to be his hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

import chess
import pytest

from drivers.choreography import Lift
from drivers.dgt.emulator import DgtEmulator
from drivers.millennium.emulator import MillenniumEmulator
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.hands import Timed, timeline
from tests.integration.test_ble_end_to_end import radio_daemon
from tests.integration.test_end_to_end import daemon, payloads_on, state_is
from tests.unit.test_two_hands import recorded_game

pytestmark = [pytest.mark.mosquitto]

THINK: Final = 0.8
"""Seconds a player thinks before a reply that does not overlap the move."""
WAIT: Final = 20.0


class Hands(Protocol):
    """An emulated board played by hand: squares by name, pieces by FEN letter."""

    async def lift(self, square: str) -> str | None: ...

    async def place(self, square: str, piece: str) -> None: ...


async def play(board: Hands, timed: Sequence[Timed]) -> None:
    """Every step of ``timed`` at its time from now (no clock: there is nothing to press)."""
    start = time.monotonic()
    for item in timed:
        await asyncio.sleep(max(0.0, start + item.at - time.monotonic()))
        step = item.step
        if step is None:
            continue
        name = chess.square_name(step.square)
        if isinstance(step, Lift):
            await board.lift(name)
        else:
            await board.place(name, step.piece.symbol())


def moves(sub: Subscription) -> list[dict[str, Any]]:
    unique: dict[tuple[int, int], dict[str, Any]] = {}
    for payload in payloads_on(sub, "event/move"):
        unique.setdefault((payload["epoch"], payload["seq"]), payload)
    return [p["data"] for p in unique.values()]


async def judge(board: Hands, sub: Subscription, plies: int) -> None:
    """Plays the first ``plies`` of the recorded game on ``board`` and checks what the table
    published: each move once, in order, released by the hand, and no alert."""
    game = recorded_game()[:plies]
    await play(board, timeline(chess.Board(), game, think=THINK))
    await sub.wait_for(lambda _: len(moves(sub)) >= plies, within=WAIT)
    await asyncio.sleep(1.0)  # nothing more may come

    received = moves(sub)
    assert [m["uci"] for m in received] == [ply.move.uci() for ply in game]
    assert [m["ply"] for m in received] == list(range(1, plies + 1))
    assert {m["completed_by"] for m in received} == {"release"}
    assert payloads_on(sub, "event/alert") == []
    bishop = [p["data"] for p in payloads_on(sub, "event/touch") if p["data"]["square"] == "c8"]
    assert bishop, "the lift of Black's bishop for 7... Bg4 was not published"
    assert bishop[0]["action"] == "lift"
    assert bishop[0]["hand"] == "black"
    assert bishop[0]["ply"] == 13  # lifted while 7. e4 (ply 13) was still being made


@contextlib.asynccontextmanager
async def listening(
    broker: Mosquitto, subscribe: Subscribe, table_id: str
) -> AsyncIterator[Subscription]:
    async with subscribe(broker, f"chessbridge/1/table/{table_id}/#") as sub:
        yield sub


@pytest.mark.pty
async def test_a_dgt_board_without_a_clock_records_the_whole_game(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        DgtEmulator(clock=False) as emu,
        listening(mosquitto, mqtt_subscribe, table_id) as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=WAIT)
        await judge(emu, sub, 36)
        assert payloads_on(sub, "event/result")[-1]["data"]["result"] == "0-1"


@pytest.mark.pty
async def test_a_millennium_board_records_the_game_from_its_readings(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        MillenniumEmulator() as emu,
        listening(mosquitto, mqtt_subscribe, table_id) as sub,
        daemon(f"millennium:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=WAIT)
        await judge(emu, sub, 22)


async def test_a_chessnut_on_the_radio_records_the_game(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    from drivers.chessnut.emulator import ChessnutEmulator

    async with (
        ChessnutEmulator() as emu,
        listening(mosquitto, mqtt_subscribe, table_id) as sub,
        radio_daemon("chessnut", emu.address, emu.radio.path, table_id, mosquitto, tmp_path),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=WAIT)
        await judge(emu, sub, 22)
