"""A hall's Mosquitto bridged to a central cluster, the layout docs/cluster.md recommends: the
bridge of docs/mosquitto/bridge.example.conf (``cleansession false``, MQTT 3.1.1, QoS 1 up and
down) with every node of a three-node NATS Server cluster (tests/nats_cluster.py) on its
``address`` line.

Real processes only: the hall broker is a private ``mosquitto``, the centre three
``nats-server`` nodes. The node the bridge is connected to, the first address, is SIGKILLed:
the bridge goes on through another node, losing none of the payloads the hall's tables
published meanwhile, and the centre's requests still come down.

What Mosquitto does with the example's settings (its log is in the output of a failure; run
with ``--log-cli-level=INFO`` for the times):

- It connects to the first address (the example sets ``try_private false``: NATS
  refuses Mosquitto's bridge flag, "unacceptable protocol version of 132", and Mosquitto would
  take that for a lost node and start on the second). With ``round_robin false`` (the default)
  it goes back to the first address once that accepts a TCP connection again; the test waits
  until the bridge is on the first node (NATS's ``connz``) before the kill.
- When its node is lost it tries the next address; NATS may drop that CONNECT while the
  JetStream leaders the killed node held are elected again ("loading session record ...
  timeout"), and the bridge moves on to the third.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator

import aiomqtt
import pytest

from tests.conftest import SUBSCRIBER_LOGGER, MosquittoFactory, Received
from tests.integration.test_relay_bridge import BRIDGE_EXAMPLE
from tests.nats_cluster import NatsCluster, NatsNode, noticing_drops, retained_messages
from tests.relay_harness import eventually

pytestmark = [pytest.mark.nats, pytest.mark.mosquitto]

LOGGER = logging.getLogger(__name__)
TABLE = "chessbridge/1/table/t1"


def hall_bridge(cluster: NatsCluster) -> tuple[str, str]:
    """The documented bridge with every node of ``cluster`` on its address line, and the
    bridge's client id. The TLS and account lines are dropped: the test's nodes have neither."""
    lines: list[str] = []
    client_id = ""
    for line in BRIDGE_EXAMPLE.read_text().splitlines():
        if line.startswith(("bridge_cafile", "remote_username", "remote_password")):
            continue
        if line.startswith("address "):
            line = "address " + " ".join(node.address for node in cluster.nodes)
        if line.startswith("remote_clientid "):
            client_id = line.split()[1]
        lines.append(line)
    # The settings docs/cluster.md gives the hall bridges.
    assert sum(line.startswith("address ") for line in lines) == 1
    assert "cleansession false" in lines
    assert "bridge_protocol_version mqttv311" in lines
    assert client_id, "the bridge example names no remote_clientid"
    return "\n".join(lines), client_id


def bridge_on(node: NatsNode, client_id: str) -> bool:
    """Whether ``node`` holds an MQTT connection of ``client_id`` (its ``connz``)."""
    query = urllib.parse.urlencode({"mqtt_client": client_id})
    url = f"http://{node.host}:{node.http_port}/connz?{query}"
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            found = json.load(response)
    except (OSError, urllib.error.URLError, ValueError):
        return False
    return isinstance(found, dict) and bool(found.get("num_connections"))


async def bridge_node(cluster: NatsCluster, client_id: str) -> NatsNode | None:
    """The one running node holding the bridge's connection, or ``None``."""
    holding = [
        node
        for node in cluster.nodes
        if node.running and await asyncio.to_thread(bridge_on, node, client_id)
    ]
    return holding[0] if len(holding) == 1 else None


async def bridge_is_on(cluster: NatsCluster, client_id: str, node: NatsNode) -> bool:
    return await bridge_node(cluster, client_id) is node


@contextlib.asynccontextmanager
async def listening(host: str, port: int, topic_filter: str) -> AsyncIterator[Received]:
    """A QoS 1 subscriber on ``host:port`` collecting what it receives."""
    async with aiomqtt.Client(host, port, logger=SUBSCRIBER_LOGGER) as client:
        received = Received()

        async def collect() -> None:
            with contextlib.suppress(aiomqtt.MqttError):
                async for message in client.messages:
                    received.received(message)

        collector = asyncio.create_task(collect())
        try:
            await client.subscribe(topic_filter, qos=1)
            yield received
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector


async def send_request(node: NatsNode, suffix: str, payload: bytes) -> None:
    """Publish ``payload`` on ``TABLE/request/suffix`` (QoS 1) through ``node``; again through a
    new connection while NATS does not acknowledge it (it may not while it elects leaders)."""
    deadline = time.monotonic() + 90
    while True:
        try:
            async with (
                aiomqtt.Client(
                    node.host, node.port, logger=SUBSCRIBER_LOGGER, timeout=10
                ) as client,
                noticing_drops(client),
            ):
                await client.publish(f"{TABLE}/request/{suffix}", payload, qos=1, timeout=10)
                return
        except aiomqtt.MqttError as exc:
            if time.monotonic() > deadline:
                pytest.fail(f"{node.name} acknowledged no request {payload!r} in 90 s: {exc}")
            LOGGER.info("request %r not acknowledged by %s: %s", payload, node.name, exc)
            await asyncio.sleep(0.5)


async def retained_on(node: NatsNode, suffix: str) -> bytes | None:
    """The retained payload of ``TABLE/suffix`` as ``node`` hands it to a new subscriber."""
    topic = f"{TABLE}/{suffix}"
    return (await retained_messages(node, [topic])).get(topic)


def payloads(messages: list[aiomqtt.Message], suffix: str) -> list[bytes]:
    """The payloads of the messages on ``TABLE/suffix``, in arrival order."""
    found: list[bytes] = []
    for message in messages:
        if message.topic.value == f"{TABLE}/{suffix}":
            assert isinstance(message.payload, bytes)
            found.append(message.payload)
    return found


def first_copies(items: list[bytes]) -> list[bytes]:
    """``items`` without later copies (QoS 1 may deliver a payload twice)."""
    return list(dict.fromkeys(items))


@pytest.mark.timeout(300)
async def test_the_hall_bridge_goes_on_through_another_node_when_its_node_is_killed(
    cluster: NatsCluster, mosquitto_factory: MosquittoFactory
) -> None:
    config, client_id = hall_bridge(cluster)
    hall = mosquitto_factory(extra_config=config)
    first, second, centre = cluster.nodes
    started = time.monotonic()
    try:
        await eventually(functools.partial(bridge_is_on, cluster, client_id, first), within=60)
        LOGGER.info("bridge on the first node %.1f s after the start", time.monotonic() - started)
        async with (
            listening(centre.host, centre.port, f"{TABLE}/#") as up,
            listening(hall.host, hall.port, f"{TABLE}/request/#") as down,
            aiomqtt.Client(hall.host, hall.port, logger=SUBSCRIBER_LOGGER) as table,
        ):
            # Until the bridge's subscription is in place: a probe sent at the centre comes down.
            async def probe() -> bool:
                await send_request(centre, "probe", b"probe")
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await down.wait_for(lambda m: bool(payloads(m, "request/probe")))
                return bool(payloads(down.messages, "request/probe"))

            await eventually(probe, within=60)

            # 1. Up: a retained and a live payload reach the centre; down: a request.
            await table.publish(f"{TABLE}/game", b"game-before", qos=1, retain=True)
            await table.publish(f"{TABLE}/event/move", b"move-0", qos=1)
            await up.wait_for(
                lambda m: (
                    b"game-before" in payloads(m, "game") and b"move-0" in payloads(m, "event/move")
                ),
                within=30,
            )
            await send_request(centre, "replay", b"request-0")
            await down.wait_for(lambda m: b"request-0" in payloads(m, "request/replay"), within=30)
            assert await bridge_node(cluster, client_id) is first, hall.log()

            # 2. The bridge's node is killed. The hall's tables go on publishing (queued in the
            # hall broker until the bridge is through), and the centre sends a request.
            await asyncio.to_thread(first.kill)
            killed_at = time.monotonic()
            moves = [f"move-{i}".encode() for i in range(1, 6)]
            for move in moves:
                await table.publish(f"{TABLE}/event/move", move, qos=1)
            asking = asyncio.create_task(send_request(centre, "replay", b"request-1"))
            try:
                await up.wait_for(lambda m: moves[0] in payloads(m, "event/move"), within=120)
                LOGGER.info("payloads up again %.1f s after the kill", time.monotonic() - killed_at)
                await asking
            finally:
                asking.cancel()
            # None lost, in order (a copy sent again may follow).
            await up.wait_for(
                lambda m: first_copies(payloads(m, "event/move")) == [b"move-0", *moves],
                within=30,
            )
            await down.wait_for(lambda m: b"request-1" in payloads(m, "request/replay"), within=60)
            now_on = await bridge_node(cluster, client_id)
            assert now_on is not None, hall.log()
            assert now_on in (second, centre)
            LOGGER.info(
                "bridge on %s, request-1 down %.1f s after the kill; moves received: %s",
                now_on.name,
                time.monotonic() - killed_at,
                payloads(up.messages, "event/move"),
            )
            await send_request(centre, "replay", b"request-2")
            await down.wait_for(lambda m: b"request-2" in payloads(m, "request/replay"), within=60)

        # 3. The retained payload of before the kill, on both remaining nodes.
        for node in (second, centre):
            found = await eventually(functools.partial(retained_on, node, "game"), within=60)
            assert found == b"game-before", node.name
    except BaseException:
        LOGGER.warning("the hall broker's log:\n%s", hall.log())
        raise
