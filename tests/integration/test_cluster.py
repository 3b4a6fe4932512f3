"""Tables and relays on a clustered MQTT broker: three NATS Server nodes (tests/nats_cluster.py),
one of them SIGKILLed mid-game and started again.

Each table is given the whole list of nodes, starting with its own (``--broker`` with commas),
so the tables are spread over the nodes. NATS speaks MQTT 3.1.1 only: the daemons fall back
from MQTT 5 on every node. A killed node sends no Will for its clients: a table on it goes on
through the next node, its outbox resending what was not acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import json
import random
import shutil
from pathlib import Path

import chess
import pytest

from bridge.views.send import send
from bridge.wire import payloads
from bridge.wire.config import broker_settings
from bridge.wire.payloads import GameData, StatusData
from tests.integration.test_relay import play
from tests.nats_cluster import NatsCluster, NatsNode, retained_messages
from tests.pgn_check import read_games, sans
from tests.relay_harness import Relay, eventually, running_relay, running_table

pytestmark = [pytest.mark.nats, pytest.mark.pty]

OPENING = "e4 e5 Nf3 Nc6"
LATER = "Bb5 a6 Ba4 Nf6"


async def retained(node: NatsNode, table: str) -> tuple[GameData | None, StatusData | None]:
    """The retained ``game`` and ``status`` of ``table`` as ``node`` hands them to a new
    subscriber (``None`` for one it does not hold)."""
    game_topic = payloads.topic(table, payloads.GAME)
    status_topic = payloads.topic(table, payloads.STATUS)
    found = await retained_messages(node, [game_topic, status_topic])
    game: GameData | None = None
    status: StatusData | None = None
    if game_topic in found:
        game = payloads.data_as(payloads.decode_envelope(found[game_topic]), GameData)
    if status_topic in found:
        status = payloads.data_as(payloads.decode_envelope(found[status_topic]), StatusData)
    return game, status


async def holds(node: NatsNode, on: dict[str, str], want: list[str]) -> list[str] | None:
    """``None`` unless ``node`` holds every table's retained game (moves ``want``) and status
    (``online`` through the node in ``on``); then the tables."""
    for table, broker in on.items():
        game, status = await retained(node, table)
        if ucis(game) != want or status is None:
            return None
        if (status.state, status.broker) != ("online", broker):
            return None
    return list(on)


def ucis(game: GameData | None) -> list[str]:
    return [] if game is None else [record.uci for record in game.moves.records()]


def expected_ucis(sans_: str) -> list[str]:
    board = chess.Board()
    return [board.push_san(san).uci() for san in sans_.split()]


async def round_games(relay: Relay, count: int, plies: int) -> list[list[str]]:
    """The games of ``/round.pgn`` (SANs each) once it holds ``count`` games of ``plies``
    moves."""

    async def check() -> list[list[str]] | None:
        games = [sans(game) for game in read_games(await relay.text("/round.pgn"))]
        if len(games) == count and all(len(moves) == plies for moves in games):
            return games
        return None

    return await eventually(check, within=150)


@pytest.mark.timeout(300)
async def test_a_node_killed_mid_game_loses_nothing(
    cluster: NatsCluster, tmp_path: Path, table_id: str
) -> None:
    rng = random.Random(11)
    tables = [f"{table_id}-{i}" for i in range(3)]
    killed = cluster.nodes[0]
    async with contextlib.AsyncExitStack() as stack:
        # The relay follows the cluster through the node that will be killed.
        relay = await stack.enter_async_context(
            running_relay(cluster.starting_at(0), tmp_path / "relay")
        )
        running = [
            await stack.enter_async_context(
                running_table(cluster.starting_at(i), table, tmp_path / table, speed=6.0)
            )
            for i, table in enumerate(tables)
        ]
        for i, (_, daemon) in enumerate(running):
            assert daemon.publisher.broker == cluster.nodes[i].address
        boards = [chess.Board() for _ in tables]
        for emu, _ in running:
            emu.set_clock(600, 600, running="right")
        hands = list(zip([emu for emu, _ in running], boards, strict=True))
        await asyncio.gather(*(play(emu, board, OPENING, rng) for emu, board in hands))
        await round_games(relay, 3, 4)

        # Mid-game: the node of table 0 and of the relay is killed; the games go on.
        await asyncio.to_thread(killed.kill)
        await asyncio.gather(*(play(emu, board, LATER, rng) for emu, board in hands))
        games = await round_games(relay, 3, 8)
        assert games == [(OPENING + " " + LATER).split()] * 3
        for _, daemon in running:
            await asyncio.wait_for(daemon.publisher.flushed(), 60)
            assert daemon.publisher.broker != killed.address

        # The retained game and status as each remaining node hands them to a new subscriber
        # (the nodes learn retained messages from a replicated stream: eventually).
        want = expected_ucis(OPENING + " " + LATER)
        on = {table: running[i][1].publisher.broker for i, table in enumerate(tables)}
        for node in cluster.nodes[1:]:
            await eventually(functools.partial(holds, node, on, want), within=120)

        # Started again later: it holds the same retained state as the others.
        await killed.start()
        await eventually(functools.partial(holds, killed, on, want), within=120)

        # A request sent through one node reaches a table connected to another.
        through = next(n for n in cluster.nodes if n.address != running[1][1].publisher.broker)
        out = io.StringIO()
        code = await send(
            tables[1],
            "assign",
            ["white=Hou Yifan", "black=Ju Wenjun"],
            broker=broker_settings(through.url),
            out=out,
        )
        assert code == 0, out.getvalue()
        assert json.loads(out.getvalue())["status"] == "ok"
        assert running[1][1].assignment.white == "Hou Yifan"


async def round_with_etag(relay: Relay) -> tuple[str, str]:
    async with relay.http.get("/round.pgn") as response:
        assert response.status == 200
        return await response.text(), response.headers["ETag"]


async def test_two_relays_on_two_nodes_serve_one_round_and_a_table_started_afresh(
    cluster: NatsCluster, tmp_path: Path, table_id: str
) -> None:
    rng = random.Random(5)
    async with contextlib.AsyncExitStack() as stack:
        first = await stack.enter_async_context(
            running_relay(cluster.starting_at(0), tmp_path / "relay-a")
        )
        second = await stack.enter_async_context(
            running_relay(cluster.starting_at(1), tmp_path / "relay-b")
        )
        state = tmp_path / "table"
        async with running_table(cluster.starting_at(2), table_id, state, speed=6.0) as (
            emu,
            daemon,
        ):
            old_game = daemon.game_id
            emu.set_clock(600, 600, running="right")
            await play(emu, chess.Board(), "d4 Nf6 c4", rng)
            await round_games(first, 1, 3)
            await round_games(second, 1, 3)
            await asyncio.wait_for(daemon.publisher.flushed(), 30)

        # Both relays hold the same game: the same text, the same ETag.
        a, b = await round_with_etag(first), await round_with_etag(second)
        assert a == b

        # One relay is killed (its task cancelled: no goodbye); the other goes on.
        first.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await first.task

        # The table starts again from an empty state directory: a new game id, epoch and seq
        # from 1. The relay that followed it shows the new game at once.
        shutil.rmtree(state)
        async with running_table(cluster.starting_at(2), table_id, state, speed=6.0) as (
            emu,
            daemon,
        ):
            assert daemon.game_id != old_game
            assert daemon.publisher.epoch == 1
            emu.set_clock(600, 600, running="right")
            await play(emu, chess.Board(), "e4", rng)
            assert await round_games(second, 1, 1) == [["e4"]]
