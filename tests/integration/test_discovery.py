"""``[discovery]``: the daemon publishes its index entry and Home Assistant discovery, retained,
only when asked to, and again after the broker lost them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from drivers.dgt.emulator import DgtEmulator
from tests.conftest import Mosquitto, Subscribe
from tests.integration.test_end_to_end import daemon, state_is

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]


async def test_descriptions_are_published_retained_when_asked(
    mosquitto_private: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    config = tmp_path / "table.toml"
    config.write_text("[discovery]\nindex = true\nhome_assistant = true\n")
    index = f"chessbridge/1/index/{table_id}"
    home = f"homeassistant/device/chessbridge/{table_id}/config"
    async with (
        DgtEmulator() as emu,
        daemon(
            f"dgt:{emu.path}",
            table_id,
            mosquitto_private.url,
            tmp_path / "s",
            "--config",
            str(config),
        ),
        mqtt_subscribe(mosquitto_private, f"homeassistant/device/chessbridge/{table_id}/#") as b,
        mqtt_subscribe(mosquitto_private, index) as a,
    ):
        await a.wait_for(lambda msgs: bool(msgs), within=20)
        await b.wait_for(lambda msgs: bool(msgs), within=20)
        assert [m.topic.value for m in b.messages] == [home]
        # A subscriber arriving later gets it from the broker: it is retained.
        async with mqtt_subscribe(mosquitto_private, index) as late:
            await late.wait_for(lambda msgs: bool(msgs), within=10)
        assert late.messages[0].retain
        entry = json.loads(bytes(a.messages[0].payload))
        assert entry["type"] == "index"
        assert entry["data"]["topics"] == f"chessbridge/1/table/{table_id}/"
        assert entry["data"]["driver"] == "dgt"
        assert entry["data"]["home_assistant"] == f"chessbridge_{table_id}"
        device = json.loads(bytes(b.messages[0].payload))
        assert device["device"]["identifiers"] == [f"chessbridge_{table_id}"]

        # A broker restarted without persistence has lost them: the next connection brings them.
        await mosquitto_private.arestart()
        async with mqtt_subscribe(mosquitto_private, index) as again:
            await again.wait_for(lambda msgs: bool(msgs), within=30)


async def test_nothing_is_described_by_default(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        mqtt_subscribe(mosquitto, "#") as everything,
        DgtEmulator() as emu,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "s"),
    ):
        await everything.wait_for(lambda _: state_is(everything, "status", "online"), within=20)
        await asyncio.sleep(0.5)
    mine = [m.topic.value for m in everything.messages if table_id in m.topic.value]
    assert mine
    assert all(topic.startswith(f"chessbridge/1/table/{table_id}/") for topic in mine), mine
