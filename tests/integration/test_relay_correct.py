"""An arbiter's ``correct_move`` from the relay, end to end: a real table daemon on an emulated
DGT board, a real Mosquitto, the relay's PGN read back by python-chess and pgn-extract."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import aiomqtt
import chess
import pytest

from bridge.wire import payloads, requests
from bridge.wire.config import Config, RelaySection
from tests.conftest import Mosquitto
from tests.integration.test_relay import play, table_moves
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_harness import Relay, eventually, running_relay, running_table

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]


async def retained_game(broker: Mosquitto, table: str) -> dict[str, object]:
    """The table's retained ``game`` payload's data, as a new subscriber gets it."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe(payloads.topic(table, "game"), qos=1)
        async with asyncio.timeout(20):
            message = await anext(aiter(client.messages))
    data: dict[str, object] = json.loads(bytes(message.payload))["data"]
    return data


def replays_to_fen(game: dict[str, object]) -> list[str]:
    """The retained game's SAN, checked: ``start_fen`` + ``moves`` replays to ``fen``."""
    moves = game["moves"]
    assert isinstance(moves, dict)
    board = chess.Board(str(game.get("start_fen", chess.STARTING_FEN)))
    out = []
    for uci, san in zip(moves["uci"], moves["san"], strict=True):
        move = chess.Move.from_uci(uci)
        assert board.san(move) == san
        out.append(san)
        board.push(move)
    assert board.fen().split()[:4] == str(game["fen"]).split()[:4]
    return out


async def console(
    broker: Mosquitto, table: str, command: str, fields: dict[str, object]
) -> dict[str, object]:
    """An arbiter's request sent over MQTT as a console would; the table's response's data."""
    transaction = f"console-{command}"
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.subscribe(payloads.topic(table, f"response/{command}"), qos=1)
        request = requests.build(
            command, fields, transaction=transaction, expires_at=time.time() + 60
        )
        await client.publish(payloads.topic(table, f"request/{command}"), request, qos=1)
        async with asyncio.timeout(20):
            async for message in client.messages:
                data: dict[str, object] = json.loads(bytes(message.payload))["data"]
                if data.get("transaction") == transaction:
                    return data
    raise AssertionError("no response")  # pragma: no cover


async def signed_in(relay: Relay) -> dict[str, str]:
    async with relay.http.post("/login", json={"name": "Anna", "password": "pw"}) as response:
        assert response.status == 200
        session = await response.json()
    return {"X-CSRF-Token": session["csrf"]}


async def test_an_arbiter_s_correction_reaches_the_broadcast_as_the_corrected_move(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(5)
    config = Config(relay=RelaySection(password="pw"))
    async with (
        running_table(mosquitto, table_id, tmp_path / "table", speed=6.0) as (emu, _),
        running_relay(mosquitto, tmp_path / "relay", config=config) as relay,
    ):
        emu.set_clock(900, 900, running="right")
        board = chess.Board()
        await play(emu, board, "e4 e5 Nf3", rng)
        await table_moves(relay, table_id, 3)
        headers = await signed_in(relay)

        # The scoresheet says Black played 1... e6: the arbiter corrects ply 2.
        async with relay.http.post(
            f"/api/table/{table_id}/correct_move", json={"ply": 2, "uci": "e7e6"}, headers=headers
        ) as response:
            assert response.status == 200
            answer = await response.json()
        assert answer["status"] == "ok", answer
        assert answer["data"]["changed"] is True
        assert answer["data"]["later_moves"] == "replayed"

        async def corrected() -> list[str] | None:
            moves = replays_to_fen(await retained_game(mosquitto, table_id))
            return moves if "e6" in moves else None

        assert await eventually(corrected) == ["e4", "e6", "Nf3"]

        async def broadcast() -> str | None:
            text = await relay.text(f"/table/{table_id}.pgn")
            return text if any("e6" in sans(g) for g in read_games(text)) else None

        text = await eventually(broadcast)
        (game,) = read_games(text)  # one game: no part 2
        assert sans(game) == ["e4", "e6", "Nf3"]
        black = list(game.mainline())[1]
        assert "The arbiter corrected move 1... e6" in " ".join(black.comment.split())
        assert "stood" not in text
        assert "Part" not in text
        assert "FEN" not in text
        pgn_extract_accepts(text)

        # The players put the pawn right (e5 back to e6) and the game goes on.
        await emu.lift("e5")
        await asyncio.sleep(0.1)
        await emu.place("e6", "p")
        board = chess.Board()
        for san in ("e4", "e6", "Nf3"):
            board.push_san(san)
        await asyncio.sleep(0.5)
        await play(emu, board, "Nc6 Bb5", rng)
        text = await table_moves(relay, table_id, 5)
        (game,) = read_games(text)
        assert sans(game) == ["e4", "e6", "Nf3", "Nc6", "Bb5"]
        assert all(node.clock() is not None for node in game.mainline())
        pgn_extract_accepts(text)

        async def snapshot_caught_up() -> list[str] | None:
            moves = replays_to_fen(await retained_game(mosquitto, table_id))
            return moves if len(moves) == 5 else None

        assert await eventually(snapshot_caught_up) == sans(game)

        # A takeback through the same paths: the snapshot and the broadcast lose Bb5.
        # (The page does not send takebacks; an arbiter's console does, over MQTT.)
        answer = await console(mosquitto, table_id, "takeback", {"plies": 1})
        assert answer["status"] == "ok", answer

        async def taken_back() -> list[str] | None:
            moves = replays_to_fen(await retained_game(mosquitto, table_id))
            return moves if len(moves) == 4 else None

        assert await eventually(taken_back) == ["e4", "e6", "Nf3", "Nc6"]

        async def shortened() -> str | None:
            text = await relay.text(f"/table/{table_id}.pgn")
            return text if [len(sans(g)) for g in read_games(text)] == [4] else None

        text = await eventually(shortened)
        (game,) = read_games(text)
        assert "The arbiter took back 1 ply" in " ".join(list(game.mainline())[-1].comment.split())
        pgn_extract_accepts(text)
