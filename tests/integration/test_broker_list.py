"""``--broker`` with a list, on a real Mosquitto: a node that does not answer comes first.

The cluster itself (three NATS nodes, one killed mid-game) is tests/integration/test_cluster.py;
here the list is given to each command that connects, with nothing listening on the first node.
"""

from __future__ import annotations

import asyncio
import io
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest

from bridge.views.send import send
from bridge.wire import payloads
from bridge.wire.config import broker_settings
from tests.cli import chessbridge
from tests.conftest import Mosquitto
from tests.nats_cluster import BrokerList
from tests.relay_harness import eventually, running_relay, running_table

pytestmark = [pytest.mark.mosquitto]


@pytest.fixture
def dead_url() -> Iterator[str]:
    """``mqtt://127.0.0.1:PORT`` of a port held closed (bound, never listening) for the test."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"mqtt://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.pty
async def test_every_command_goes_on_to_the_node_that_answers(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, dead_url: str
) -> None:
    listed = f"{dead_url},{mosquitto.url}"
    address = f"{mosquitto.host}:{mosquitto.port}"
    async with (
        running_table(BrokerList(listed), table_id, tmp_path / "table") as (_, daemon),
        running_relay(BrokerList(listed), tmp_path / "relay") as relay,
    ):
        assert daemon.publisher.broker == address
        # The retained status names the node.
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            await client.subscribe(payloads.topic(table_id, payloads.STATUS), qos=1)
            message = await anext(aiter(client.messages))
            assert isinstance(message.payload, bytes)
            status = payloads.data_as(
                payloads.decode_envelope(message.payload), payloads.StatusData
            )
        assert (status.state, status.broker) == ("online", address)

        # The relay follows the table through the node that answers.
        async def followed() -> bool:
            async with relay.http.get("/api/state") as response:
                state = await response.json()
            return table_id in json.dumps(state)

        await eventually(followed)

        # send: the first node cannot be reached, the second takes the command.
        out = io.StringIO()
        players = ["white=Ju Wenjun", "black=Lei Tingjie"]
        code = await send(table_id, "assign", players, broker=broker_settings(listed), out=out)
        assert code == 0, out.getvalue()
        assert daemon.assignment.white == "Ju Wenjun"

        # watch, from the command line.
        proc = await chessbridge("watch", "--table", table_id, "--broker", listed)
        try:
            assert proc.stdout is not None
            async with asyncio.timeout(30):
                while True:
                    line = (await proc.stdout.readline()).decode()
                    assert line, "watch ended"
                    if f"{table_id} status online" in line:
                        break
        finally:
            proc.terminate()
            await proc.wait()
