"""A clustered MQTT broker for the tests: three NATS Server nodes on loopback, each with an MQTT
listener, JetStream (a store directory of its own) and routes to the other two.

NATS Server (the Debian package ``nats-server``) keeps MQTT sessions and retained messages in
JetStream streams replicated over the cluster (``stream_replicas``), so a node can be killed
(SIGKILL: no Will, nothing saved beyond what JetStream wrote) and started again on the same
ports and store directory. Never a mock: real processes, their configuration files written in
the test's own directory.

- ``NatsCluster(directory)`` starts nothing; ``start()`` starts every node and waits until each
  one's JetStream is healthy and its MQTT listener answers a CONNECT.
- ``cluster.nodes[i].kill()`` / ``.start()``; ``cluster.url`` is every node's URL, comma-separated
  (``cluster.url_from(i)``: the same list starting at node ``i``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import pytest

from tests.conftest import end_process, free_port

_START_TIMEOUT = 60.0
NATS_CANDIDATES = ("/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server")


def nats_binary() -> str:
    """The ``nats-server`` executable; fails the test if absent."""
    found = shutil.which("nats-server")
    if found:
        return found
    for candidate in NATS_CANDIDATES:
        if Path(candidate).exists():
            return candidate
    pytest.fail("nats-server not found: install the Debian package nats-server (scripts/test does)")


class NatsNode:
    """One node of the cluster; it keeps its ports and store directory across kill/start."""

    host = "127.0.0.1"

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        """The MQTT listener."""
        self.client_port = free_port()
        self.route_port = free_port()
        self.http_port = free_port()
        self.config_path = directory / "nats.conf"
        self.log_path = directory / "nats.log"
        self._process: subprocess.Popen[bytes] | None = None
        self.peers = 0
        """The other nodes of the cluster."""

    @property
    def url(self) -> str:
        """``mqtt://127.0.0.1:PORT`` of this node's MQTT listener."""
        return f"mqtt://{self.host}:{self.port}"

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``, as the daemon's log and ``status`` name the node."""
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        """The running process's id (for its CPU time); 0 when it is not running."""
        return self._process.pid if self.running and self._process is not None else 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def configure(self, routes: list[int], replicas: int) -> None:
        self.peers = len(routes) - 1
        route_urls = ", ".join(f'"nats-route://{self.host}:{port}"' for port in routes)
        store = self.directory / "jetstream"
        self.config_path.write_text(
            f"""server_name: {self.name}
listen: {self.host}:{self.client_port}
http: {self.host}:{self.http_port}
log_file: "{self.log_path}"
jetstream {{ store_dir: "{store}" }}
cluster {{
  name: chessbridge-test
  listen: {self.host}:{self.route_port}
  routes: [{route_urls}]
}}
mqtt {{
  listen: {self.host}:{self.port}
  stream_replicas: {replicas}
}}
"""
        )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""

    def launch(self) -> None:
        """Start the process (without waiting for it to be ready)."""
        if self.running:
            return
        self._process = subprocess.Popen(
            [nats_binary(), "-c", str(self.config_path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def _monitor(self, path: str) -> dict[str, object]:
        url = f"http://{self.host}:{self.http_port}/{path}"
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                found = json.load(response)
                return found if isinstance(found, dict) else {}
        except (OSError, urllib.error.URLError, ValueError):
            return {}

    def healthy(self, *, current: bool = True) -> bool:
        """Whether the node says its JetStream is current (``/healthz``; not asked with
        ``current=False``), is routed to each other node and sees them all in JetStream's meta
        group, with a leader.

        Before that an MQTT client must not connect: the first one makes NATS create its MQTT
        streams, with fewer replicas than configured when it knows fewer peers (and it never
        raises them later: "MQTT sessions stream replicas mismatch" in its log).
        """
        if current and self._monitor("healthz").get("status") != "ok":
            return False
        if self._monitor("routez").get("num_routes") != self.peers:
            return False
        meta = self._monitor("jsz").get("meta_cluster")
        if not isinstance(meta, dict) or not meta.get("leader"):
            return False
        return meta.get("cluster_size") == self.peers + 1

    async def ready(self, *, current: bool = True) -> None:
        """Wait until the node is healthy (:meth:`healthy`) and accepts an MQTT connection.

        A node started again may report a JetStream consumer "not current" for a long while
        (its own consumer of the retained messages, caught up in the background) although it
        serves MQTT clients: ``current=False`` does not wait for that.
        """
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self._process is None or self._process.poll() is not None:
                stderr = b""
                if self._process is not None and self._process.stderr is not None:
                    stderr = self._process.stderr.read()
                raise RuntimeError(
                    f"nats-server {self.name} exited at start: "
                    f"{stderr.decode(errors='replace')}\n{self.log()}"
                )
            healthy = await asyncio.to_thread(self.healthy, current=current)
            if healthy and await self._answers():
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server {self.name} did not become ready\n{self.log()}")
            await asyncio.sleep(0.1)

    async def settled(self) -> None:
        """Wait until the node is healthy (:meth:`healthy`), without an MQTT connection."""
        deadline = time.monotonic() + _START_TIMEOUT
        while not await asyncio.to_thread(self.healthy):
            if self._process is None or self._process.poll() is not None:
                raise RuntimeError(f"nats-server {self.name} exited at start\n{self.log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"nats-server {self.name} did not become ready\n{self.log()}")
            await asyncio.sleep(0.1)

    async def _answers(self) -> bool:
        try:
            async with aiomqtt.Client(self.host, self.port, identifier=f"probe-{self.name}"):
                return True
        except aiomqtt.MqttError:
            return False

    async def start(self) -> None:
        """Start the node (again: same ports, same store) and wait until it is ready."""
        self.launch()
        await self.ready(current=False)

    def kill(self) -> None:
        """SIGKILL: the connections drop, no Will is sent, nothing is said to the others."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        self._end(signal.SIGTERM)

    def _end(self, sig: signal.Signals) -> None:
        process, self._process = self._process, None
        if process is not None:
            end_process(process, sig)


@contextlib.asynccontextmanager
async def noticing_drops(
    client: aiomqtt.Client, keep: Callable[[aiomqtt.Message], None] | None = None
) -> AsyncIterator[None]:
    """Within the block, ``client``'s messages are read (given to ``keep``, or dropped), so that
    a connection NATS drops is noticed there.

    NATS drops connections while it elects new stream leaders. aiomqtt keeps the reason of an
    unexpected disconnection for whoever reads the client's messages; a client that does not
    read them (one that only publishes, or one still waiting for its SUBACK) never collects it,
    and when the client is collected asyncio logs "Future exception was never retrieved" at
    ERROR, in whichever test happens to be running then.
    """

    async def read() -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            async for message in client.messages:
                if keep is not None:
                    keep(message)

    reader = asyncio.create_task(read())
    try:
        yield
    finally:
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader


async def retained_messages(
    node: NatsNode, topics: list[str], within: float = 1.0
) -> dict[str, bytes]:
    """The retained payloads of ``topics`` as ``node`` hands them to a new subscriber, by
    topic: those that came within ``within`` seconds (retained copies come at once; a topic
    with none is missing).

    QoS 0: NATS makes no JetStream consumer for it (a QoS 1 one waits for a consumer leader
    while the cluster recovers from a lost node); retained copies come all the same. A node
    that does not answer the CONNECT or the SUBSCRIBE in time hands over nothing: callers ask
    again (``eventually``).
    """
    found: dict[str, bytes] = {}
    complete = asyncio.Event()

    def keep(message: aiomqtt.Message) -> None:
        if isinstance(message.payload, bytes):
            found[message.topic.value] = message.payload
        if len(found) == len(topics):
            complete.set()

    try:
        async with (
            aiomqtt.Client(node.host, node.port) as client,
            noticing_drops(client, keep),
        ):
            for topic in topics:
                await client.subscribe(topic, qos=0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(complete.wait(), within)
    except aiomqtt.MqttError:
        pass  # a node that does not answer now (electing leaders): what came, maybe nothing
    return found


@dataclass(frozen=True)
class BrokerList:
    """A ``--broker`` value: node URLs, comma-separated (``url``, as the harness takes it)."""

    url: str


class NatsCluster:
    """Three (``size``) NATS nodes routed to each other, MQTT on each."""

    def __init__(self, directory: Path, size: int = 3, replicas: int = 3) -> None:
        self.nodes = [NatsNode(directory / f"n{i}", f"n{i}") for i in range(size)]
        self.replicas = replicas
        self._configure()

    def _configure(self) -> None:
        routes = [node.route_port for node in self.nodes]
        for node in self.nodes:
            node.configure(routes, self.replicas)

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated, as ``--broker`` takes them."""
        return self.url_from(0)

    def url_from(self, first: int) -> str:
        """The nodes' URLs starting at node ``first`` (then the others in turn)."""
        count = len(self.nodes)
        return ",".join(self.nodes[(first + i) % count].url for i in range(count))

    def starting_at(self, first: int) -> BrokerList:
        """The cluster as a client given :meth:`url_from` sees it."""
        return BrokerList(self.url_from(first))

    async def start(self) -> None:
        for attempt in range(3):
            for node in self.nodes:
                node.launch()
            try:
                await asyncio.gather(*(node.settled() for node in self.nodes))
                await asyncio.gather(*(node.ready() for node in self.nodes))
                return
            except BaseException as exc:
                self.stop()  # no node left running by a start that failed
                # A free port picked for a node taken by another process meanwhile (tests run
                # side by side): the cluster starts afresh on other ports.
                if "address already in use" not in str(exc) or attempt == 2:
                    raise
                for node in self.nodes:
                    node.port, node.client_port = free_port(), free_port()
                    node.route_port, node.http_port = free_port(), free_port()
                    shutil.rmtree(node.directory / "jetstream", ignore_errors=True)
                self._configure()

    def stop(self) -> None:
        for node in self.nodes:
            with contextlib.suppress(OSError):
                node.stop()
