"""A venue grows past one broker: the venue's Mosquitto bridges chessbridge/1/# to a central one.

Two real Mosquitto processes: the table's daemon on the venue broker, the relay on the central
broker. The bridge carries the tables' payloads to the relay and the relay's requests (a
replay, an arbiter's command) back to the tables: the configuration is docs/mosquitto's
bridge example.
"""

from __future__ import annotations

import asyncio
import io
import json
import random
from pathlib import Path

import aiomqtt
import chess
import pytest

from bridge.views.send import send
from bridge.wire.config import broker_settings
from tests.conftest import Mosquitto, MosquittoFactory
from tests.integration.test_relay import play, table_moves
from tests.pgn_check import read_games, sans
from tests.relay_harness import eventually, running_relay, running_table

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]

BRIDGE_EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "mosquitto" / "bridge.example.conf"


def bridge_config(central: Mosquitto) -> str:
    """The documented bridge, pointed at the central broker of the test."""
    text = BRIDGE_EXAMPLE.read_text()
    text = text.replace("central.example.org:8883", f"{central.host}:{central.port}")
    # The test's central broker has no TLS listener: drop the TLS lines of the example.
    kept = [line for line in text.splitlines() if not line.startswith("bridge_cafile")]
    return "\n".join(kept)


async def bridged(venue: Mosquitto, central: Mosquitto) -> None:
    """Wait until a message published at the venue arrives at the central broker."""
    async with aiomqtt.Client(central.host, central.port) as listener:
        await listener.subscribe("chessbridge/1/table/probe/#", qos=1)
        async with aiomqtt.Client(venue.host, venue.port) as speaker:
            async with asyncio.timeout(20):
                while True:
                    await speaker.publish("chessbridge/1/table/probe/status", b"{}", qos=1)
                    try:
                        async with asyncio.timeout(0.5):
                            await anext(aiter(listener.messages))
                            return
                    except TimeoutError:
                        continue


async def test_a_table_on_the_venue_broker_reaches_the_relay_on_the_central_one(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path
) -> None:
    central = mosquitto_factory()
    venue = mosquitto_factory(extra_config=bridge_config(central))
    await bridged(venue, central)
    rng = random.Random(2)
    async with (
        running_table(venue, table_id, tmp_path / "table", speed=6.0) as (emu, daemon),
        running_relay(central, tmp_path / "relay") as relay,
    ):
        emu.set_clock(600, 600, running="right")
        board = chess.Board()
        await play(emu, board, "c4 e5 Nc3", rng)
        text = await table_moves(relay, table_id, 3)
        (game,) = read_games(text)
        assert sans(game) == ["c4", "e5", "Nc3"]

        # An arbiter's command sent on the central broker reaches the table and comes back.
        out = io.StringIO()
        code = await send(
            table_id,
            "assign",
            ["white=Ding Liren", "black=Gukesh D"],
            broker=broker_settings(central.url),
            out=out,
        )
        assert code == 0, out.getvalue()
        assert json.loads(out.getvalue())["status"] == "ok"
        assert daemon.assignment.white == "Ding Liren"

        async def named() -> str | None:
            text = await relay.text(f"/table/{table_id}.pgn")
            return text if '[White "Ding Liren"]' in text else None

        await eventually(named)
