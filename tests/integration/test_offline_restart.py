"""A daemon killed during a broker outage and started again while the broker is still down.

The moves it reads off the board at the restart (``reconstructed``) are recorded while nobody
can hear them: like every other outbox row they must reach a consumer with a persistent session
once the broker is back, exactly once after dropping copies by ``(epoch, seq)``, in order, and
agree with the retained ``game``. Played on an emulated DGT board (its memory answers with an
empty log, so the moves are read off the board whole) against ``chessbridge run`` and a real
Mosquitto with persistence, stopped the normal way (it saves its sessions).

A consumer whose session does not outlive its connection (MQTT 5 with a clean start off but no
Session Expiry Interval: the session ends with the connection, whatever the broker keeps) misses
what was published before it subscribed again; the retained ``game`` still shows those moves.
That loss is the consumer's, not the daemon's: the last test shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Final, Literal

import aiomqtt
import chess
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bridge.mqtt.state_dir import DB_NAME
from drivers.dgt.emulator import DgtEmulator
from tests.conftest import (
    SUBSCRIBER_LOGGER,
    Mosquitto,
    MosquittoFactory,
    Received,
    subscribed_in_background,
)
from tests.emulated import until
from tests.integration.test_faults import (
    GAME,
    RECONNECT_WAIT,
    SPEED,
    WAIT,
    Daemon,
    Payload,
    assert_whole_game,
    daemon,
    has_moves,
    moves,
    online_and_connected,
    payloads,
    play_until,
    start_clock,
    unique,
)

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

BEFORE: Final = 10
"""Plies published before the broker stops (1. e4 ... 5. Qxf3)."""

Session = Literal["mqtt311", "mqtt5-expiry", "mqtt5-no-expiry"]
"""How the consumer asks for a session that outlives its connection: MQTT 3.1.1 with clean
session off; MQTT 5 with clean start off and a Session Expiry Interval; MQTT 5 with clean start
off and no Session Expiry Interval (0: the session ends with the connection)."""


class Consumer(Received):
    """A consumer that reconnects on its own while the broker is away (with the same client id
    and without a clean session), subscribing on every connection, as a careful one does.

    Clear :attr:`present` to keep it away from the broker until it is set again (it leaves at
    its next message, or when the connection drops, and does not come back before).
    """

    def __init__(
        self, broker: Mosquitto, topic_filter: str, identifier: str, session: Session
    ) -> None:
        super().__init__()
        self.broker = broker
        self.topic_filter = topic_filter
        self.identifier = identifier
        self.session = session
        self.connections = 0
        self.present = asyncio.Event()
        self.present.set()
        self._subscribed = asyncio.Event()

    def _client(self) -> aiomqtt.Client:
        if self.session == "mqtt311":
            return aiomqtt.Client(
                self.broker.host,
                self.broker.port,
                identifier=self.identifier,
                clean_session=False,
                logger=SUBSCRIBER_LOGGER,
            )
        properties = None
        if self.session == "mqtt5-expiry":
            properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            properties.SessionExpiryInterval = 3600
        return aiomqtt.Client(
            self.broker.host,
            self.broker.port,
            identifier=self.identifier,
            protocol=aiomqtt.ProtocolVersion.V5,
            clean_start=False,
            properties=properties,
            logger=SUBSCRIBER_LOGGER,
        )

    async def _run(self) -> None:
        while True:
            await self.present.wait()
            try:
                async with self._client() as client:
                    self.connections += 1
                    await client.subscribe(self.topic_filter, qos=1)
                    self._subscribed.set()
                    gone = asyncio.create_task(self._wait_absent())
                    try:
                        async for message in client.messages:
                            self.received(message)
                            if gone.done():
                                break
                    finally:
                        gone.cancel()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    async def _wait_absent(self) -> None:
        while self.present.is_set():  # noqa: ASYNC110  # an Event cannot be awaited cleared
            await asyncio.sleep(0.05)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Consumer]:
        """Connected and subscribed within the context."""
        async with subscribed_in_background(self._run(), self._subscribed, WAIT):
            yield self


def logged_ply(table: Daemon, ply: int) -> bool:
    """Whether the daemon's log says it recorded ``ply``."""
    return f"ply {ply}: " in table.log()


def outbox_rows(state_dir: Path) -> int:
    """How many rows wait in the table's outbox for the broker's acknowledgement."""
    db = sqlite3.connect(f"file:{state_dir / DB_NAME}?mode=ro", uri=True)
    try:
        (count,) = db.execute("SELECT count(*) FROM outbox").fetchone()
    finally:
        db.close()
    return int(count)


def retained_moves(messages: list[aiomqtt.Message]) -> list[str]:
    """The moves of the last retained ``game`` received."""
    games = [
        json.loads(bytes(m.payload))["data"] for m in messages if m.topic.value.endswith("/game")
    ]
    moves_list: list[str] = games[-1]["moves"]["uci"]
    return moves_list


def game_ucis(plies: int) -> list[str]:
    board = chess.Board()
    return [board.push_san(san).uci() for san in GAME[:plies]]


async def kill_and_restart_during_an_outage(
    broker: Mosquitto,
    emu: DgtEmulator,
    table: Daemon,
    board: chess.Board,
    rng: random.Random,
    *,
    offline: int,
    unheard: int,
) -> None:
    """Stop the broker; ``offline`` plies the daemon records and cannot send; SIGKILL;
    ``unheard`` plies made while no daemon reads the board; start the daemon again, the broker
    still down, and wait until it has read them off the board."""
    await broker.astop()  # SIGTERM: the broker saves the consumer's session
    await play_until(emu, board, rng, BEFORE + offline)
    await until(lambda: logged_ply(table, BEFORE + offline), within=WAIT)
    await asyncio.sleep(0.1)  # the press after the last move reaches the daemon
    await table.kill()
    await play_until(emu, board, rng, BEFORE + offline + unheard)
    await table.start()
    await until(lambda: logged_ply(table, BEFORE + offline + unheard), within=RECONNECT_WAIT)
    await asyncio.sleep(0.5)  # whatever else it stores while the broker is down
    assert table.alive, "the daemon must ride out the outage it started in"


def assert_delivered(received: list[Payload], offline: int, unheard: int) -> None:
    """The moves read off the board at the restart arrived, as reconstructed, from the new run."""
    made_unheard = received[BEFORE + offline : BEFORE + offline + unheard]
    assert [m["data"]["completed_by"] for m in made_unheard] == ["reconstructed"] * unheard
    assert {m["epoch"] for m in received[BEFORE + offline :]} == {received[0]["epoch"] + 1}


@pytest.mark.parametrize(
    ("offline", "unheard"),
    [(0, 1), (0, 2), (2, 2)],
    ids=["one-ply", "two-plies", "two-plies-after-two-recorded-offline"],
)
async def test_moves_read_off_the_board_at_a_restart_while_the_broker_is_down_are_delivered(
    mosquitto_factory: MosquittoFactory,
    table_id: str,
    tmp_path: Path,
    offline: int,
    unheard: int,
) -> None:
    broker = mosquitto_factory(persistence=True)
    rng = random.Random(f"offline-restart-{offline}-{unheard}")
    board = chess.Board()
    consumer = Consumer(
        broker, f"chessbridge/1/table/{table_id}/#", f"{table_id}-consumer", "mqtt311"
    )
    async with (
        DgtEmulator(speed=SPEED, memory="empty") as emu,
        consumer.running() as sub,
        daemon(f"dgt:{emu.path}", table_id, broker.url, tmp_path / "state") as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, BEFORE, sub)
        await asyncio.sleep(0.1)
        await kill_and_restart_during_an_outage(
            broker, emu, table, board, rng, offline=offline, unheard=unheard
        )
        await broker.astart()
        await sub.wait_for(has_moves(BEFORE + offline + unheard), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    assert consumer.connections >= 2, "the consumer should have lost the broker too"
    received = assert_whole_game(sub.messages)
    assert_delivered(received, offline, unheard)
    assert payloads(sub.messages, "event/alert") == []
    assert retained_moves(sub.messages) == game_ucis(len(GAME))
    result = [r["data"]["reason"] for r in unique(payloads(sub.messages, "event/result"))]
    assert result == ["checkmate"]


@pytest.mark.parametrize("session", ["mqtt311", "mqtt5-expiry"])
async def test_they_reach_a_persistent_session_that_comes_back_after_they_were_sent(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path, session: Session
) -> None:
    """The consumer is back only once the restarted daemon's outbox is empty (every row
    acknowledged): the broker queued them in its session."""
    broker = mosquitto_factory(persistence=True)
    rng = random.Random(f"away-{session}")
    board = chess.Board()
    state = tmp_path / "state"
    consumer = Consumer(broker, f"chessbridge/1/table/{table_id}/#", f"{table_id}-c", session)
    async with (
        DgtEmulator(speed=SPEED, memory="empty") as emu,
        consumer.running() as sub,
        daemon(f"dgt:{emu.path}", table_id, broker.url, state) as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, BEFORE, sub)
        await asyncio.sleep(0.1)
        consumer.present.clear()
        await kill_and_restart_during_an_outage(
            broker, emu, table, board, rng, offline=1, unheard=2
        )
        await broker.astart()
        await until(lambda: outbox_rows(state) == 0, within=RECONNECT_WAIT)
        consumer.present.set()
        await sub.wait_for(has_moves(BEFORE + 3), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, BEFORE + 5, sub)
        assert await table.stop() == 0

    received = assert_whole_game(sub.messages, BEFORE + 5)
    assert_delivered(received, 1, 2)
    assert retained_moves(sub.messages) == game_ucis(BEFORE + 5)


async def test_a_session_that_ends_with_its_connection_misses_them_the_retained_game_has_them(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path
) -> None:
    """Outside the daemon: an MQTT 5 consumer with clean start off and no Session Expiry
    Interval has no session once its connection is gone (MQTT 5 §3.1.2.11.2). What the daemon
    sent before it subscribed again never reaches it, though the broker acknowledged every row;
    the retained ``game`` has those moves; the moves after them arrive. The daemon's ``replay``
    sends them again (docs/mqtt.md)."""
    broker = mosquitto_factory(persistence=True)
    rng = random.Random("no-expiry")
    board = chess.Board()
    state = tmp_path / "state"
    consumer = Consumer(
        broker, f"chessbridge/1/table/{table_id}/#", f"{table_id}-c", "mqtt5-no-expiry"
    )
    async with (
        DgtEmulator(speed=SPEED, memory="empty") as emu,
        consumer.running() as sub,
        daemon(f"dgt:{emu.path}", table_id, broker.url, state) as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, BEFORE, sub)
        await asyncio.sleep(0.1)
        consumer.present.clear()
        await kill_and_restart_during_an_outage(
            broker, emu, table, board, rng, offline=1, unheard=2
        )
        await broker.astart()
        await until(lambda: outbox_rows(state) == 0, within=RECONNECT_WAIT)
        consumer.present.set()
        await sub.wait_for(lambda m: len(retained_moves(m)) == BEFORE + 3, within=RECONNECT_WAIT)
        await play_until(emu, board, rng, BEFORE + 5)
        await sub.wait_for(
            lambda m: any(p["data"]["ply"] == BEFORE + 5 for p in moves(m)), within=WAIT
        )
        assert await table.stop() == 0

    plies = [m["data"]["ply"] for m in moves(sub.messages)]
    missed = list(range(BEFORE + 1, BEFORE + 4))
    assert plies == [*range(1, BEFORE + 1), BEFORE + 4, BEFORE + 5], "the session was kept"
    assert retained_moves(sub.messages)[: BEFORE + 3] == game_ucis(BEFORE + 3)
    assert not [p for p in moves(sub.messages) if p["data"]["ply"] in missed]
