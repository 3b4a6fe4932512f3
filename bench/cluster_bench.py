"""What losing a node of a clustered MQTT broker (NATS Server, three nodes) costs its clients.

Three ``nats-server`` nodes on loopback (tests/nats_cluster.py: routes, JetStream, an MQTT
listener each, ``stream_replicas: 3``). In each run:

Each kill is watched for 90 s.

* a *steady* client on a node that survives publishes QoS 1 every 50 ms, one at a time
  (connecting again at once when NATS drops it, or when a CONNECT is not answered in 10 s or a
  PUBACK in 30 s, as the daemon does); the node that leads the ``$MQTT_msgs`` stream
  (where NATS keeps QoS 1 messages; ``--victim follower``: a node that does not) is SIGKILLed;
  reported: the longest wait between two PUBACKs after the kill, and how long after the kill
  the PUBACKs came again at the pace of before;
* a *moving* client on the killed node, with the other two nodes' URLs to go on to (as
  ``--broker`` with a list, reconnecting at once and then every 0.5 s), reports the time from
  the kill to its first acknowledged publish through another node;
* a *relay* (``run_relay``, in this process) given the nodes' list starting at the killed
  node, reports the time from the kill to its subscription granted again on another node (its
  log's ``reconnected``); beside it, the baseline of that figure: a *bare subscriber* of the
  killed node that subscribes to the same topics (QoS 1) on the others in turn, at once and
  then every 0.5 s, until one grants it.

The baseline, in the same run: the steady client's PUBACK wait before the kill (its median).
The killed node is started again after each run (same ports and store). Median and range over
``--runs``. Figures only: nothing is asserted about time.

    .venv/bin/python -m bench.cluster_bench --runs 3 [--victim follower]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import statistics
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiomqtt

from bridge.mqtt.session import reason_code
from bridge.wire import payloads
from bridge.wire.config import Config
from tests.nats_cluster import NatsCluster, NatsNode, noticing_drops

TOPIC = "bench/cluster/steady"
WINDOW = 90.0
"""Seconds watched after each kill."""
CONNECT_TIMEOUT = 10.0
"""A CONNECT not answered in this long is given up (aiomqtt's default, as the daemon's)."""
ACK_TIMEOUT = 30.0
"""A PUBACK not come in this long: the connection is given up (the daemon's ``ack_timeout``)."""


def stream_leader(node: NatsNode, stream: str) -> str | None:
    """The server name leading ``stream``, as ``node`` sees it."""
    url = f"http://{node.host}:{node.http_port}/jsz?accounts=true&streams=true"
    with urllib.request.urlopen(url, timeout=2.0) as response:
        data = json.load(response)
    for account in data.get("account_details") or []:
        for detail in account.get("stream_detail") or []:
            if detail.get("name") == stream:
                leader = (detail.get("cluster") or {}).get("leader")
                return str(leader) if leader else None
    return None


async def steady(node: NatsNode, acks: list[float], waits: list[float]) -> None:
    """Publish every 50 ms through ``node``, one at a time; record when each PUBACK came. A
    connection NATS drops (it does, on the nodes that survive) is made again at once."""
    while True:
        try:
            async with (
                aiomqtt.Client(
                    node.host, node.port, identifier="bench-steady", timeout=CONNECT_TIMEOUT
                ) as client,
                noticing_drops(client),
            ):
                while True:
                    start = time.monotonic()
                    await client.publish(TOPIC, b"x", qos=1, timeout=ACK_TIMEOUT)
                    acks.append(time.monotonic())
                    waits.append(acks[-1] - start)
                    await asyncio.sleep(0.05)
        except aiomqtt.MqttError:
            await asyncio.sleep(0.1)


async def through_another(
    nodes: list[NatsNode],
    killed_at: float,
    identifier: str,
    served: Callable[[aiomqtt.Client], Awaitable[bool]],
) -> float:
    """Seconds from the kill to the first node of ``nodes`` that serves ``served`` (a new
    connection to each in turn, at once and then every 0.5 s, as ``--broker`` with a list)."""
    while True:
        for node in nodes:
            try:
                async with (
                    aiomqtt.Client(
                        node.host, node.port, identifier=identifier, timeout=CONNECT_TIMEOUT
                    ) as client,
                    noticing_drops(client),
                ):
                    if await served(client):
                        return time.monotonic() - killed_at
            except aiomqtt.MqttError:
                pass
            await asyncio.sleep(0.5)


async def acknowledged(client: aiomqtt.Client) -> bool:
    """A publish acknowledged (a *moving* client)."""
    await client.publish(TOPIC, b"y", qos=1, timeout=ACK_TIMEOUT)
    return True


FOLLOW = f"{payloads.TOPIC_ROOT}/table/+/#"
"""What a relay subscribes to."""


async def granted(client: aiomqtt.Client) -> bool:
    """A subscription to ``FOLLOW`` granted (a *bare subscriber*)."""
    codes = await client.subscribe(FOLLOW, qos=1, timeout=CONNECT_TIMEOUT)
    return all((reason_code(code) or 0) < 0x80 for code in codes)


class Reconnections(logging.Handler):
    """When the relay's log said it reconnected (``time.monotonic()``)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.at: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("reconnected to MQTT broker"):
            self.at.append(time.monotonic())


@contextlib.asynccontextmanager
async def relay(url: str, directory: Path) -> AsyncIterator[Reconnections]:
    """A relay following ``url`` (a list of nodes) in this process, until the block ends."""
    from bridge.relay.run import run_relay

    seen = Reconnections()
    logger = logging.getLogger("chessbridge.relay")
    logger.addHandler(seen)
    logger.setLevel(logging.INFO)
    stop = asyncio.Event()
    task = asyncio.create_task(
        run_relay(broker=url, http="127.0.0.1:0", config=Config(), state_dir=directory, stop=stop)
    )
    try:
        yield seen
    finally:
        stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task, 30)
        logger.removeHandler(seen)


async def one_run(
    cluster: NatsCluster, directory: Path, *, leader: bool
) -> tuple[float, float, float, float, float, float]:
    leader_name = stream_leader(cluster.nodes[0], "$MQTT_msgs")
    leading = [n for n in cluster.nodes if n.name == leader_name]
    followers = [n for n in cluster.nodes if n.name != leader_name]
    victim = leading[0] if leader and leading else followers[-1]
    others = [n for n in cluster.nodes if n is not victim]
    survivor = others[0]
    print(f"killing {victim.name} ($MQTT_msgs led by {leader_name})", flush=True)
    acks: list[float] = []
    waits: list[float] = []
    steady_task = asyncio.create_task(steady(survivor, acks, waits))
    async with aiomqtt.Client(victim.host, victim.port, identifier="bench-moving") as client:
        await client.publish(TOPIC, b"y", qos=1)
    relay_url = ",".join(node.url for node in [victim, *others])
    async with relay(relay_url, directory / f"relay-{time.monotonic_ns()}") as relayed:
        await asyncio.sleep(3.0)  # the relay subscribed (a JetStream consumer: about 1 s)
        before = statistics.median(waits) if waits else 0.0  # the baseline: a PUBACK's wait
        killed_at = time.monotonic()
        victim.kill()
        back, followed = await asyncio.gather(
            through_another(others, killed_at, "bench-moving", acknowledged),
            through_another(others, killed_at, "bench-follower", granted),
        )
        await asyncio.sleep(max(0.0, WINDOW - (time.monotonic() - killed_at)))
        steady_task.cancel()
        await asyncio.gather(steady_task, return_exceptions=True)
    again = [at - killed_at for at in relayed.at if at > killed_at]
    relay_back = again[0] if again else float("nan")  # not following within the window
    # A stall still going on when the window ends counts up to its end.
    after = [killed_at, *(t for t in acks if t > killed_at), time.monotonic()]
    gaps = [(b - a, b) for a, b in itertools.pairwise(after)]
    longest = max((gap for gap, _ in gaps), default=0.0)
    slow = [end for gap, end in gaps if gap > 0.5]
    recovered = (max(slow) - killed_at) if slow else 0.0
    print(
        f"  relay following again {relay_back:.1f} s after the kill; a bare subscriber "
        f"{followed:.1f} s; a publisher {back:.1f} s",
        flush=True,
    )
    await victim.start()
    return before, longest, recovered, back, followed, relay_back


async def main(runs: int, leader: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        cluster = NatsCluster(Path(directory))
        await cluster.start()
        try:
            results = [await one_run(cluster, Path(directory), leader=leader) for _ in range(runs)]
        finally:
            cluster.stop()
    for index, label in enumerate(
        (
            "baseline: a PUBACK's wait before the kill (median)",
            "longest wait between two PUBACKs at a surviving node",
            "kill -> PUBACKs at their pace again (the last wait over 0.5 s ends)",
            "kill -> a client of the killed node acknowledged through another",
            "kill -> a bare subscriber of the killed node granted by another (baseline)",
            "kill -> the relay of the killed node following through another",
        )
    ):
        values = [r[index] for r in results]
        print(
            f"{label}: median {statistics.median(values):.3f} s "
            f"(range {min(values):.3f}-{max(values):.3f} s, {runs} runs)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--victim",
        choices=("leader", "follower"),
        default="leader",
        help="kill the node that leads $MQTT_msgs (default), or one that does not",
    )
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.victim == "leader"))
