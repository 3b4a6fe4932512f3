"""``chessbridge relay`` against a real Mosquitto: a table's game becomes live PGN over HTTP.

Tables are the real daemon reading an emulated board (``running_table``) or, where a test needs
payloads no board makes (a gap, garbage), a client publishing daemon-shaped payloads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from email.utils import formatdate
from pathlib import Path

import aiomqtt
import chess
import pytest

from bridge.demo.game import perform, press_side
from bridge.wire import payloads
from bridge.wire.config import BrokerConfig, Config, RelaySection
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.cli import chessbridge
from tests.conftest import Mosquitto, MosquittoFactory
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_feed import Item, TableFeed
from tests.relay_harness import Relay, eventually, running_relay, running_table

pytestmark = [pytest.mark.mosquitto]

ACL = Path(__file__).resolve().parents[2] / "docs" / "mosquitto" / "acl.example"

SPEED = 6.0


async def play(emu: DgtEmulator, board: chess.Board, sans_: str, rng: random.Random) -> None:
    """Moves by hand on the emulated board, each followed by the mover's clock press."""
    for san in sans_.split():
        move = board.parse_san(san)
        await perform(emu, board, move, rng.choice(list(Style)), rng, SPEED)
        mover = board.turn
        board.push(move)
        await asyncio.sleep(0.05)
        await emu.press(press_side(mover))


async def table_moves(relay: Relay, table: str, count: int) -> str:
    """The table's PGN once it shows ``count`` moves."""

    async def check() -> str | None:
        async with relay.http.get(f"/table/{table}.pgn") as response:
            if response.status != 200:
                return None
            text = await response.text()
        games = read_games(text)
        return text if sum(len(sans(g)) for g in games) >= count else None

    return await eventually(check)


async def publish(
    broker: Mosquitto, feed: TableFeed, *items: Item, password: str | None = None
) -> None:
    """Publish daemon-shaped payloads in order at QoS 1 (retained state retained).

    With ``password``, as the table's own account (username: the table id).
    """
    user = None if password is None else feed.table
    async with aiomqtt.Client(broker.host, broker.port, username=user, password=password) as client:
        for suffix, envelope in items:
            retain = suffix in ("status", "board", "game")
            await client.publish(
                payloads.topic(feed.table, suffix), feed.raw[envelope.seq], qos=1, retain=retain
            )


@pytest.mark.pty
async def test_a_game_on_a_board_becomes_live_pgn_with_clocks_and_http_caching(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(7)
    async with (
        running_table(mosquitto, table_id, tmp_path / "table", speed=SPEED) as (emu, _),
        running_relay(mosquitto, tmp_path / "relay") as relay,
    ):
        emu.set_clock(900, 900, running="right")
        board = chess.Board()
        await play(emu, board, "e4 e5 Nf3 Nc6", rng)
        text = await table_moves(relay, table_id, 4)
        (game,) = read_games(text)
        assert sans(game) == ["e4", "e5", "Nf3", "Nc6"]
        clocks = [node.clock() for node in game.mainline()]
        assert all(c is not None and 0 < c <= 900 for c in clocks), clocks
        assert game.headers["Table"] == table_id
        pgn_extract_accepts(text)

        async with relay.http.get(f"/table/{table_id}.pgn") as response:
            etag = response.headers["ETag"]
            modified = response.headers["Last-Modified"]
            assert response.content_type == "application/x-chess-pgn"
        async with relay.http.get(
            f"/table/{table_id}.pgn", headers={"If-None-Match": etag}
        ) as response:
            assert response.status == 304
            assert await response.read() == b""
        async with relay.http.get(
            f"/table/{table_id}.pgn", headers={"If-Modified-Since": modified}
        ) as response:
            assert response.status == 304
        round_text = await relay.text("/round.pgn")
        mine = [g for g in read_games(round_text) if g.headers["Table"] == table_id]
        assert [sans(g) for g in mine] == [["e4", "e5", "Nf3", "Nc6"]]

        await play(emu, board, "Bb5", rng)
        await table_moves(relay, table_id, 5)
        async with relay.http.get(
            f"/table/{table_id}.pgn", headers={"If-None-Match": etag}
        ) as response:
            assert response.status == 200
            assert response.headers["ETag"] != etag
        old = formatdate(0, usegmt=True)
        async with relay.http.get(
            f"/table/{table_id}.pgn", headers={"If-Modified-Since": old}
        ) as response:
            assert response.status == 200


@pytest.mark.pty
async def test_the_relay_restarted_fills_what_it_missed_by_a_replay(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    """Moves made while the relay was down come back with their clocks (replay of the gap)."""
    rng = random.Random(11)
    async with running_table(mosquitto, table_id, tmp_path / "table", speed=SPEED) as (emu, _):
        emu.set_clock(900, 900, running="right")
        board = chess.Board()
        async with running_relay(mosquitto, tmp_path / "relay") as relay:
            await play(emu, board, "d4 d5", rng)
            await table_moves(relay, table_id, 2)
            assert await relay.finish() == 0
        await play(emu, board, "c4 e6", rng)  # nobody relays these
        async with running_relay(mosquitto, tmp_path / "relay") as relay:
            await play(emu, board, "Nc3", rng)  # a live payload: the relay sees the gap
            text = await table_moves(relay, table_id, 5)

            async def all_clocked() -> str | None:
                text = await relay.text(f"/table/{table_id}.pgn")
                (game,) = read_games(text)
                clocks = [node.clock() for node in game.mainline()]
                return text if len(clocks) == 5 and None not in clocks else None

            text = await eventually(all_clocked)
    (game,) = read_games(text)
    assert sans(game) == ["d4", "d5", "c4", "e6", "Nc3"]


async def test_a_gap_in_seq_is_asked_for_again_under_the_documented_acl(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path
) -> None:
    """docs/mosquitto/acl.example: the table writes its own topics and reads its requests; the
    relay reads everything and may send requests."""
    users = {table_id: "table-pw", "relay": "relay-pw"}
    broker = mosquitto_factory(users=users, acl=ACL.read_text())
    config = Config(broker=BrokerConfig(username="relay", password="relay-pw"))
    feed = TableFeed(table_id, f"{table_id}-20260501T140000Z")
    items = [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3")]
    # The table's payloads after e5's snapshot go missing: Nf3's move, press and snapshot.
    missing = items[8:11]
    assert [s for s, _ in missing] == ["event/move", "event/clock", "game"]
    async with (
        aiomqtt.Client(broker.host, broker.port, username=table_id, password="table-pw") as me,
        running_relay(broker, tmp_path / "relay", config=config) as relay,
    ):
        await me.subscribe(payloads.topic(table_id, "request/#"), qos=1)
        await publish(broker, feed, *items[:8], password="table-pw")
        await table_moves(relay, table_id, 2)
        later = [feed.move("Nc6"), feed.snapshot()]
        await publish(broker, feed, *later, password="table-pw")
        async with asyncio.timeout(20):
            request = await anext(aiter(me.messages))
        assert request.topic.value.endswith("/request/replay")
        asked = json.loads(bytes(request.payload))
        assert asked["from_seq"] == missing[0][1].seq
        # The table's answer: its journal from that seq, then the game goes on.
        await publish(broker, feed, *missing[:2], password="table-pw")
        await publish(broker, feed, feed.press("black"), feed.snapshot(), password="table-pw")
        text = await table_moves(relay, table_id, 4)
        (game,) = read_games(text)
        assert [node.clock() for node in game.mainline()][2] is not None  # Nf3's, replayed


async def test_a_broker_restart_is_survived(mosquitto_private: Mosquitto, tmp_path: Path) -> None:
    feed = TableFeed("t1", "t1-20260501T140000Z")
    async with running_relay(mosquitto_private, tmp_path / "relay") as relay:
        await publish(mosquitto_private, feed, feed.status(), feed.snapshot(), *feed.play("e4"))
        await table_moves(relay, "t1", 1)
        await mosquitto_private.arestart()  # no persistence: retained state is gone too
        await asyncio.sleep(0.5)

        async def published() -> bool:
            try:
                await publish(mosquitto_private, feed, *feed.play("e5"))
            except aiomqtt.MqttError:
                return False
            return True

        await eventually(published)
        await table_moves(relay, "t1", 2)
        assert await relay.finish() == 0


async def test_foreign_and_malformed_payloads_are_logged_once_and_skipped(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    feed = TableFeed(table_id, f"{table_id}-20260501T140000Z")
    async with running_relay(mosquitto, tmp_path / "relay") as relay:
        caplog.set_level(logging.WARNING, logger="chessbridge.relay")
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            topic = payloads.topic(table_id, "event/move")
            for _ in range(3):
                await client.publish(topic, b"\x00\xffnot json{", qos=1)
            wrong = json.dumps(
                {
                    "v": 1,
                    "type": "game",
                    "table": table_id,
                    "game": "g",
                    "epoch": 1,
                    "seq": 1,
                    "ts": "x",
                    "data": {"fen": 5},
                }
            )
            await client.publish(payloads.topic(table_id, "game"), wrong.encode(), qos=1)
            await client.publish(payloads.topic(table_id, "request/ack_alert"), b"{}", qos=1)
        await publish(mosquitto, feed, feed.snapshot(), *feed.play("e4"))
        await table_moves(relay, table_id, 1)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        about_move = [w for w in warnings if "'event/move'" in w]
        assert len(about_move) == 1, warnings
        assert "\\x00\\xff" in about_move[0]  # escaped, not raw bytes in the log
        assert any("'game'" in w and "malformed game payload" in w for w in warnings)
        assert not any("request" in w for w in warnings)

        async with relay.http.get("/table/nobody-here.pgn") as response:
            assert response.status == 404
        async with relay.http.get("/table/a+b.pgn") as response:
            assert response.status == 400
        async with relay.http.get(f"/table/{table_id}.txt") as response:
            assert response.status == 404
        async with relay.http.get("/api/table/nobody-here") as response:
            assert response.status == 404


def _credentials_config(tmp_path: Path, password: str) -> Path:
    path = tmp_path / "relay.toml"
    path.write_text(f'[broker]\nusername = "relay"\npassword = "{password}"\n')
    return path


async def test_a_refused_login_is_one_line_and_exit_2(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(users={"relay": "right"})
    proc = await chessbridge(
        "relay",
        "--broker",
        broker.url,
        "--http",
        "127.0.0.1:0",
        "--config",
        str(_credentials_config(tmp_path, "wrong")),
        "--state-dir",
        str(tmp_path / "state"),
    )
    _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 2
    lines = [line for line in stderr.decode().splitlines() if "refused" in line]
    assert len(lines) == 1, stderr.decode()
    assert "check [broker] username/password" in lines[0]
    assert "wrong" not in stderr.decode()  # the password is never shown


async def test_the_page_is_read_only_without_sign_in_and_sign_in_resists_guessing(
    mosquitto_factory: MosquittoFactory, tmp_path: Path
) -> None:
    broker = mosquitto_factory(users={"relay": "mqtt-secret-7f3a", "t1": "pw"})
    config = Config(
        broker=BrokerConfig(username="relay", password="mqtt-secret-7f3a"),
        relay=RelaySection(password="arbiters-only"),
    )
    feed = TableFeed("t1", "t1-20260501T140000Z")
    async with running_relay(broker, tmp_path / "relay", config=config) as relay:
        async with aiomqtt.Client(broker.host, broker.port, username="t1", password="pw") as c:
            for suffix, envelope in [feed.snapshot(), *feed.play("e4")]:
                raw = feed.raw[envelope.seq]
                await c.publish(payloads.topic("t1", suffix), raw, qos=1, retain=suffix == "game")
        await table_moves(relay, "t1", 1)
        paths = ("/", "/static/app.js", "/api/state", "/api/table/t1", "/round.pgn")
        bodies = [await relay.text(path) for path in paths]

        async with relay.http.post("/api/table/t1/ack_alert", json={"id": 1}) as response:
            assert response.status == 401
        for attempt in range(5):
            async with relay.http.post(
                "/login", json={"name": "Eve", "password": f"guess{attempt}"}
            ) as response:
                assert response.status == 401
        async with relay.http.post(
            "/login", json={"name": "Eve", "password": "arbiters-only"}
        ) as response:
            assert response.status == 429  # even the right password waits now
            assert int(response.headers["Retry-After"]) > 0

    async with running_relay(broker, tmp_path / "relay2", config=config) as relay:
        await table_moves(relay, "t1", 0)  # the retained game has come
        async with relay.http.post(
            "/login", json={"name": "Anna", "password": "arbiters-only"}
        ) as response:
            assert response.status == 200
            session = await response.json()
            bodies.append(json.dumps(session))
            cookie = response.cookies["chessbridge_session"]
            assert cookie["httponly"]
            assert cookie["samesite"] == "Strict"
        async with relay.http.post("/api/table/t1/ack_alert", json={"id": 1}) as response:
            assert response.status == 403  # no CSRF token
        headers = {"X-CSRF-Token": session["csrf"]}
        async with relay.http.post(
            "/api/table/t1/ack_alert",
            json={"id": 1},
            headers={**headers, "Origin": "http://evil.example"},
        ) as response:
            assert response.status == 403
        async with relay.http.post("/api/table/t1/new_game", json={}, headers=headers) as response:
            assert response.status == 400
        async with relay.http.post(
            "/api/table/nobody/ack_alert", json={"id": 1}, headers=headers
        ) as response:
            assert response.status == 404
        async with relay.http.post(
            "/api/table/t1/ack_alert", data=b"[1, 2", headers=headers
        ) as response:
            assert response.status == 400
        async with relay.http.post(
            "/api/table/t1/ack_alert", json={"id": "three"}, headers=headers
        ) as response:
            assert response.status == 400
            assert "invalid ack_alert request" in (await response.json())["error"]
        bodies.append(await relay.text("/api/state"))
    for body in bodies:
        assert "mqtt-secret-7f3a" not in body
        assert "arbiters-only" not in body
