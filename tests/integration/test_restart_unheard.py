"""A daemon killed mid-game while the players go on: the board read whole at the restart.

A DGT board whose memory holds nothing (EE_MOVES answers with its end mark only), or its whole
log, the daemon
SIGKILLed after ply 5 and started again while plies are made unheard (1, 3, 6; with a piece in
the hand at the restart; a Pi's minute-long reboot). What reaches MQTT is exactly the moves
played, as ``reconstructed``, or one ``board_mismatch`` and nothing recorded until an arbiter
sends ``reconstruct`` with the moves: never a move the board contradicts.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any, Final

import aiomqtt
import chess
import pytest

from bridge.demo.game import press_side
from bridge.wire import requests
from drivers.dgt.emulator import DgtEmulator, Memory
from tests.conftest import Mosquitto, Subscribe
from tests.integration.test_faults import (
    GAME,
    RECONNECT_WAIT,
    SPEED,
    WAIT,
    assert_whole_game,
    daemon,
    has_moves,
    in_state,
    moves,
    online_and_connected,
    payloads,
    play_until,
    start_clock,
    unique,
)

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

BEFORE: Final = 5
"""Plies published before the kill (1. e4 e5 2. Nf3 d6 3. d4)."""


def alerts(messages: list[aiomqtt.Message]) -> list[dict[str, Any]]:
    return [p["data"] for p in unique(payloads(messages, "event/alert"))]


async def reconstruct(sub: Any, table: str, ucis: list[str]) -> dict[str, Any]:
    """The arbiter's ``reconstruct``, over MQTT; the response's data."""
    transaction = f"arbiter-{time.monotonic_ns()}"
    raw = requests.build(
        "reconstruct", {"moves": ucis}, transaction=transaction, expires_at=time.time() + 60
    )
    await sub.client.publish(f"chessbridge/1/table/{table}/request/reconstruct", raw, qos=1)

    def answered(_: object) -> bool:
        return any(
            p["data"].get("transaction") == transaction
            for p in payloads(sub.messages, "response/reconstruct")
        )

    await sub.wait_for(answered, within=WAIT)
    (data,) = [
        p["data"]
        for p in payloads(sub.messages, "response/reconstruct")
        if p["data"].get("transaction") == transaction
    ]
    assert isinstance(data, dict)
    return data


def ucis(first: int, last: int) -> list[str]:
    board = chess.Board()
    out = [board.push_san(san).uci() for san in GAME[:last]]
    return out[first:]


@pytest.mark.parametrize(
    ("memory", "unheard", "in_hand", "outage"),
    [
        ("empty", 1, False, 0.0),
        ("empty", 3, False, 0.0),
        ("empty", 6, False, 0.0),
        ("empty", 2, True, 0.0),
        ("empty", 2, False, 60.0),
        ("log", 1, False, 0.0),
        ("log", 3, True, 0.0),
        ("log", 6, False, 0.0),
    ],
    ids=[
        "one-ply",
        "three-plies",
        "six-plies",
        "a-piece-in-the-hand",
        "a-minute-down",
        "memory-one-ply",
        "memory-three-plies-a-piece-in-the-hand",
        "memory-six-plies",
    ],
)
async def test_what_was_played_unheard_is_published_or_one_alert_says_it_cannot_be(
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    tmp_path: Path,
    memory: Memory,
    unheard: int,
    in_hand: bool,
    outage: float,
) -> None:
    rng = random.Random(f"unheard-{memory}-{unheard}-{in_hand}")
    board = chess.Board()
    async with (
        DgtEmulator(speed=SPEED, memory=memory) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state") as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, BEFORE, sub)
        await asyncio.sleep(0.1)  # the press after the last move reaches the daemon
        await table.kill()
        await sub.wait_for(in_state("status", "lost"), within=RECONNECT_WAIT)
        started = time.monotonic()
        await play_until(emu, board, rng, BEFORE + unheard)
        held: chess.Move | None = None
        if in_hand:
            # The next mover lifts his piece (and the victim, if any), and holds it.
            held = board.parse_san(GAME[board.ply()])
            if board.is_capture(held):
                await emu.lift(chess.square_name(held.to_square))
            await emu.lift(chess.square_name(held.from_square))
        await asyncio.sleep(max(0.0, outage - (time.monotonic() - started)))
        published = len(moves(sub.messages))
        boards = len(sub.on("board"))
        await table.start()
        if held is not None:
            # The restarted daemon reads the board with the piece in the air; a moment later
            # it is put down.
            await sub.wait_for(lambda _: len(sub.on("board")) > boards, within=RECONNECT_WAIT)
            await asyncio.sleep(2.0)
        else:
            await sub.wait_for(
                lambda m: len(moves(m)) >= BEFORE + unheard or bool(alerts(m)),
                within=RECONNECT_WAIT,
            )
            await asyncio.sleep(1.0)  # anything else it would publish
        if held is not None:
            piece = board.piece_at(held.from_square)
            assert piece is not None
            await emu.place(chess.square_name(held.to_square), piece.symbol())
            mover = board.turn
            board.push(held)
            await emu.press(press_side(mover))
            await sub.wait_for(has_moves(board.ply()), within=WAIT)
        settled = alerts(sub.messages)
        if settled:
            # One alert, with the squares, and nothing recorded on the game it contradicts.
            assert [a["kind"] for a in settled] == ["board_mismatch"]
            details = settled[0]["details"]
            if details["search"] == "complete":  # several lines of that length
                assert details["plies"] == unheard
                assert len(details["lines"]) == 2
            else:  # the search gave up before it could tell (its time is bounded)
                assert details["search"] == "gave up"
                assert details["plies"] <= unheard
            assert len(moves(sub.messages)) == published == BEFORE
            data = await reconstruct(sub, table_id, ucis(BEFORE, BEFORE + unheard))
            assert data["status"] == "ok", data
            await sub.wait_for(has_moves(BEFORE + unheard), within=WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    received = assert_whole_game(sub.messages)
    made_unheard = received[BEFORE : BEFORE + unheard]
    assert {m["data"]["completed_by"] for m in made_unheard} == {"reconstructed"}
    if memory == "log" or unheard < 3 or in_hand:
        # The board's memory tells every change; or a line the board shows alone.
        assert alerts(sub.messages) == [], "no arbiter is needed"
    result = [p["data"]["reason"] for p in unique(payloads(sub.messages, "event/result"))]
    assert result == ["checkmate"]
    retained = [json.loads(bytes(m.payload))["data"] for m in sub.on("game") if m.payload]
    assert retained[-1]["moves"]["uci"] == ucis(0, len(GAME))


async def test_a_chessnut_has_no_memory_the_board_read_whole_tells(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """A Chessnut Air keeps no record: at the restart its full board is all there is."""
    from bridge.demo.game import perform
    from drivers.chessnut.emulator import ChessnutEmulator
    from drivers.choreography import Style
    from tests.integration.test_ble_end_to_end import radio_daemon

    rng = random.Random(5)
    board = chess.Board()

    async def play_to(plies: int) -> None:
        while board.ply() < plies:
            move = board.parse_san(GAME[board.ply()])
            await perform(emu, board, move, Style.PLAIN, rng, 4.0)
            board.push(move)

    async with (
        ChessnutEmulator() as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
    ):
        running = radio_daemon(
            "chessnut", emu.address, emu.radio.path, table_id, mosquitto, tmp_path
        )
        async with running as proc:
            await sub.wait_for(in_state("board", "connected"), within=20)
            for ply in range(1, BEFORE + 1):
                await play_to(ply)
                await sub.wait_for(has_moves(ply), within=WAIT)
            proc.kill()
            await proc.wait()
        await play_to(BEFORE + 3)  # 3... Bg4 4. dxe5 Bxf3, nobody listening
        again = radio_daemon("chessnut", emu.address, emu.radio.path, table_id, mosquitto, tmp_path)
        async with again:
            await sub.wait_for(has_moves(BEFORE + 3), within=RECONNECT_WAIT)
            await play_to(BEFORE + 4)
            await sub.wait_for(has_moves(BEFORE + 4), within=WAIT)

    received = assert_whole_game(sub.messages, BEFORE + 4)
    assert [m["data"]["completed_by"] for m in received[BEFORE:]] == [
        "reconstructed", "reconstructed", "reconstructed", "release",
    ]  # fmt: skip
    assert alerts(sub.messages) == []
