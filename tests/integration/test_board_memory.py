"""Moves made while the board was unplugged come back from its memory (EE_MOVES) on reconnect."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import chess
import pytest

from bridge.demo.game import perform
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.conftest import Mosquitto, Subscribe, Subscription
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
