"""Arbiter commands end to end: emulated DGT board → ``chessbridge run`` (a subprocess) → mosquitto,
with requests sent and responses read over MQTT by an outside client."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import chess
import pytest

from drivers.dgt.emulator import DgtEmulator
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_end_to_end import daemon

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]


def body(**fields: Any) -> dict[str, Any]:
    """A request body with a fresh transaction and an expiry a minute ahead."""
    return {"transaction": uuid.uuid4().hex, "expires_at": time.time() + 60, **fields}


def payloads(sub: Subscription, suffix: str) -> list[dict[str, Any]]:
    return [json.loads(bytes(m.payload)) for m in sub.on(suffix)]


def game(sub: Subscription) -> dict[str, Any]:
    """The last retained ``game`` data seen."""
    data: dict[str, Any] = payloads(sub, "game")[-1]["data"]
    return data


async def ask(
    sub: Subscription, table: str, command: str, request: dict[str, Any] | bytes
) -> dict[str, Any]:
    """Publish ``request/{command}`` and return the ``data`` of the next ``response/{command}``."""
    suffix = f"response/{command}"
    before = len(sub.on(suffix))
    raw = request if isinstance(request, bytes) else json.dumps(request).encode()
    await sub.client.publish(f"chessbridge/1/table/{table}/request/{command}", raw, qos=1)
    await sub.wait_for(lambda _: len(sub.on(suffix)) > before, within=5)
    envelope = payloads(sub, suffix)[before]
    assert envelope["type"] == "response"
    assert envelope["table"] == table
    response: dict[str, Any] = envelope["data"]
    return response


def moves_of(data: dict[str, Any]) -> list[str]:
    uci: list[str] = data["moves"]["uci"]
    return uci


async def started(sub: Subscription) -> None:
    def up(_: object) -> bool:
        boards = payloads(sub, "board")
        online = any(p["data"]["state"] == "online" for p in payloads(sub, "status"))
        return online and any(p["data"]["state"] == "connected" for p in boards)

    await sub.wait_for(up, within=15)
    await sub.wait_for(lambda _: bool(sub.on("game")), within=5)


async def test_commands_change_the_retained_game_and_bad_requests_change_nothing(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        DgtEmulator(clock=False) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await started(sub)
        first_id = game(sub)["id"]
        for ply, (start, end, piece) in enumerate([("e2", "e4", "P"), ("e7", "e5", "p")], 1):
            await emu.lift(start)
            await emu.place(end, piece)
            await sub.wait_for(lambda _, n=ply: len(sub.on("event/move")) >= n)  # type: ignore[misc]
        await sub.wait_for(lambda _: moves_of(game(sub)) == ["e2e4", "e7e5"])

        # takeback: the response echoes the transaction; the retained game loses the move.
        request = body()
        response = await ask(sub, table_id, "takeback", request)
        assert response == {
            "transaction": request["transaction"],
            "status": "ok",
            "data": {"plies": 1, "removed": ["e7e5"], "fen": game(sub)["fen"]},
            "error": None,
        }
        assert moves_of(game(sub)) == ["e2e4"]
        await emu.lift("e5")  # the players put the pawn back
        await emu.place("e7", "p")

        # assign: shown in the retained game.
        request = body(white="Anand", black="Topalov", white_fide_id=5000017, round="7", board=3)
        response = await ask(sub, table_id, "assign", request)
        assert (response["status"], response["transaction"]) == ("ok", request["transaction"])
        shown = game(sub)
        assert shown["players"] == {
            "white": "Anand",
            "black": "Topalov",
            "white_fide_id": "5000017",
        }
        assert (shown["round"], shown["board"], shown.get("event")) == ("7", "3", None)
        assert shown["id"] == first_id

        # replay: the original payloads again, with their original seq, before the response.
        moves = sub.on("event/move")
        first_seq = json.loads(bytes(moves[0].payload))["seq"]
        response = await ask(sub, table_id, "replay", body(from_seq=first_seq))
        assert response["status"] == "ok"
        data = response["data"]
        assert data["from_seq"] == first_seq
        assert data["first_seq"] == first_seq
        assert data["count"] >= 2
        assert data["truncated"] is False
        again = sub.on("event/move")
        assert len(again) == 4
        assert [bytes(m.payload) for m in again[2:]] == [bytes(m.payload) for m in moves[:2]]

        # refused requests: answered, and nothing changes.
        before = [bytes(m.payload) for m in sub.on("game")]
        refused: list[tuple[str, dict[str, Any] | bytes, str, bool]] = [
            ("takeback", b'{"transaction": "x", ', "not valid JSON", False),
            ("takeback", b"[]", "one JSON object", False),
            ("takeback", json.dumps(body(pad="x" * 5000)).encode(), "too large", False),
            ("takeback", body(expires_at=time.time() - 5), "expired", True),
            ("takeback", body(expires_at=time.time() + 86400), "ahead", True),
            ("takeback", body(plies=2), "cannot take back 2 plies", True),
            ("takeback", body(plies=1, colour="white"), "unknown field `colour`", True),
            ("set_position", body(fen="8/8/8/8/8/8/8/8 w - - 0 1"), "impossible position", True),
            ("correct_move", body(ply=1, uci="e2e5"), "not a legal move", True),
            ("ack_alert", body(id=99), "no open alert has id 99", True),
            ("resign", body(), "unknown command 'resign'", True),
        ]
        for command, request_or_raw, error, echoed in refused:
            response = await ask(sub, table_id, command, request_or_raw)
            assert response["status"] == "error", command
            assert error in response["error"]
            assert response["data"] == {}
            if echoed:
                assert isinstance(request_or_raw, dict)
                assert response["transaction"] == request_or_raw["transaction"]
            else:
                assert response["transaction"] is None
        assert [bytes(m.payload) for m in sub.on("game")] == before

        # new_game: a new id, the position asked for, the assignment kept and amended.
        fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
        request = body(fen=fen, event="Club Open")
        response = await ask(sub, table_id, "new_game", request)
        assert response["status"] == "ok"
        assert response["data"]["fen"] == fen
        new_id = response["data"]["game"]
        assert new_id != first_id
        assert new_id.startswith(table_id)
        shown = game(sub)
        assert (shown["id"], shown["start_fen"]) == (new_id, fen)
        assert shown["moves"] == {"first_ply": 1, "uci": [], "san": []}
        assert shown["event"] == "Club Open"
        assert shown["players"]["white"] == "Anand"
        assert payloads(sub, "response/new_game")[-1]["game"] == new_id


async def test_adjust_clock_sets_the_dgt_clock(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        DgtEmulator() as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await started(sub)
        response = await ask(sub, table_id, "adjust_clock", body(white=300, black=200))
        assert response["status"] == "error"
        assert "which clock side is White's is not known" in response["error"]

        emu.set_clock(600, 600, running="right")  # running before move 1: right is White's
        await sub.wait_for(lambda _: game(sub)["clocks"] is not None)

        response = await ask(sub, table_id, "adjust_clock", body(white=300, black=200))
        assert response["status"] == "ok"
        assert response["data"] == {"white": 300, "black": 200, "running": None}
        # The clock reports its new setting through the board: the retained game shows it.
        paused = {"white": 300, "black": 200, "running": None}
        await sub.wait_for(lambda _: game(sub)["clocks"] == paused)
        assert (emu.clock_times, emu.clock_running) == ((200, 300), None)  # Black on the left

        request = body(white=90, black=80, running="white")
        response = await ask(sub, table_id, "adjust_clock", request)
        assert response["status"] == "ok"
        await sub.wait_for(lambda _: (game(sub)["clocks"] or {}).get("running") == "white")
        assert emu.clock_running == "right"

        # White's lever is up: Black's time cannot be the one running.
        request = body(white=90, black=80, running="black")
        response = await ask(sub, table_id, "adjust_clock", request)
        assert response["status"] == "error"
        assert "lever is up on white's side" in response["error"]
        assert emu.clock_running == "right"
        assert game(sub)["fen"] == chess.STARTING_FEN


async def test_a_repeated_request_is_carried_out_once_even_after_a_restart(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """The same takeback twice (a QoS 1 redelivery, a client retrying) takes back one ply;
    the same incorrect draw claim twice gives one penalty; a repeat after a restart too."""
    topic = f"chessbridge/1/table/{table_id}/#"
    takeback = json.dumps(body(plies=1)).encode()
    claim = json.dumps(body()).encode()
    async with DgtEmulator(clock=False) as emu, mqtt_subscribe(mosquitto, topic) as sub:
        async with daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"):
            await started(sub)
            for ply, (start, end, piece) in enumerate([("e2", "e4", "P"), ("e7", "e5", "p")], 1):
                await emu.lift(start)
                await emu.place(end, piece)
                await sub.wait_for(lambda _, n=ply: len(sub.on("event/move")) >= n)  # type: ignore[misc]
            first = await ask(sub, table_id, "takeback", takeback)
            again = await ask(sub, table_id, "takeback", takeback)
            assert first["status"] == "ok"
            assert again == first
            await sub.wait_for(lambda _: moves_of(game(sub)) == ["e2e4"])
            await emu.lift("e5")  # the players put the pawn back
            await emu.place("e7", "p")

            first_claim = await ask(sub, table_id, "claim_draw", claim)
            assert (first_claim["status"], first_claim["data"]["valid"]) == ("ok", False)
            assert await ask(sub, table_id, "claim_draw", claim) == first_claim
            # A different request under a used transaction is refused, and changes nothing.
            reused = json.loads(takeback)
            reused["plies"] = 2
            refused = await ask(sub, table_id, "takeback", reused)
            assert refused["status"] == "error"
            assert "already answered a different takeback request" in refused["error"]

        async with daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"):
            await sub.wait_for(lambda _: len(payloads(sub, "status")) >= 3, within=15)
            assert await ask(sub, table_id, "takeback", takeback) == first
            assert await ask(sub, table_id, "claim_draw", claim) == first_claim
            # One more move, so that the retained game is published by this daemon too.
            await emu.lift("e7")
            await emu.place("e5", "p")
            await sub.wait_for(lambda _: moves_of(game(sub)) == ["e2e4", "e7e5"])

    alerts = [p["data"]["kind"] for p in payloads(sub, "event/alert")]
    assert alerts == ["incorrect_claim"]
    assert [p["data"]["san"] for p in payloads(sub, "event/move")] == ["e4", "e5", "e5"]


async def test_a_retained_request_is_never_acted_on(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """A request published with the retain flag would run again on every reconnect: it is
    ignored when it arrives live, and when it is delivered at subscription."""
    topic = f"chessbridge/1/table/{table_id}/request/takeback"
    async with (
        DgtEmulator(clock=False) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
    ):
        async with daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"):
            await started(sub)
            await emu.lift("e2")
            await emu.place("e4", "P")
            await sub.wait_for(lambda _: moves_of(game(sub)) == ["e2e4"])
            retained = json.dumps(body(plies=1)).encode()
            await sub.client.publish(topic, retained, qos=1, retain=True)  # arrives live
            response = await ask(sub, table_id, "assign", body(white="A", black="B"))
            assert response["status"] == "ok"  # handled after the retained one, in order
        async with daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"):
            # Delivered again at subscription, as retained messages are.
            await sub.wait_for(
                lambda _: any(
                    p["epoch"] == 2 and p["data"]["state"] == "online"
                    for p in payloads(sub, "status")
                ),
                within=15,
            )
            response = await ask(sub, table_id, "assign", body(white="C", black="D"))
            assert response["status"] == "ok"
        await sub.client.publish(topic, b"", qos=1, retain=True)  # clear it

    assert payloads(sub, "response/takeback") == []
    assert moves_of(game(sub)) == ["e2e4"]
