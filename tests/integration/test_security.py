"""The broker's access control as documented: docs/mosquitto/acl.example and
mosquitto.example.conf loaded into a real Mosquitto, probed with real clients.

At MQTT 3.1.1 Mosquitto drops an unauthorised publish silently (the client still gets its
PUBACK). So every "does not arrive" check is followed by an allowed message from the same
client, which does arrive: a broker handles one client's messages in order and delivers them to
a subscriber in order, so once the allowed one is in, the denied ones had their chance.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import re
import shutil
import ssl
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiomqtt
import pytest

from bridge.mqtt.outbox import Outbox
from bridge.mqtt.publisher import Publisher
from bridge.wire import payloads
from bridge.wire.config import BrokerConfig, broker_settings
from tests.conftest import SUBSCRIBER_LOGGER, Mosquitto, MosquittoFactory, free_port

pytestmark = pytest.mark.mosquitto

ROOT = Path(__file__).resolve().parents[2]
ACL = ROOT / "docs" / "mosquitto" / "acl.example"
CONF = ROOT / "docs" / "mosquitto" / "mosquitto.example.conf"

TABLE = "t042"
OTHER = "t043"
ARBITER = "arbiter1"
DISPLAY = "display1"
HOME_ASSISTANT = "homeassistant"
USERS = {name: f"secret-of-{name}" for name in (TABLE, OTHER, ARBITER, DISPLAY, HOME_ASSISTANT)}

ALL = "chessbridge/1/#"


def table_topic(table: str, suffix: str) -> str:
    return payloads.topic(table, suffix)


class Peer:
    """One authenticated aiomqtt client and the messages it received, in order."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.messages: list[tuple[str, bytes]] = []
        self._changed = asyncio.Event()

    async def subscribe(self, topic_filter: str) -> None:
        await self.client.subscribe(topic_filter, qos=1)

    async def publish(self, topic: str, payload: bytes) -> None:
        await self.client.publish(topic, payload, qos=1)

    def topics(self) -> list[str]:
        return [topic for topic, _ in self.messages]

    async def wait_for(self, topic: str, payload: bytes, within: float = 20.0) -> None:
        """Wait until ``(topic, payload)`` has arrived; fail the test otherwise."""
        try:
            async with asyncio.timeout(within):
                while (topic, payload) not in self.messages:
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            pytest.fail(f"{topic} {payload!r} did not arrive in {within} s; got {self.messages}")

    async def _collect(self) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            async for message in self.client.messages:
                self.messages.append((message.topic.value, bytes(message.payload)))
                self._changed.set()


Connect = Callable[[str], contextlib.AbstractAsyncContextManager[Peer]]


def _aiomqtt_client(
    broker: Mosquitto,
    username: str | None,
    password: str | None,
    *,
    tls_port: int | None = None,
    tls_params: aiomqtt.TLSParameters | None = None,
) -> aiomqtt.Client:
    """A client of ``broker``; with ``tls_port``, over TLS to "localhost" (the certificate's
    name, as a table would connect)."""
    return aiomqtt.Client(
        broker.host if tls_port is None else "localhost",
        broker.port if tls_port is None else tls_port,
        username=username,
        password=password,
        identifier=f"{username}-{uuid.uuid4().hex[:8]}",
        tls_params=tls_params,
        logger=SUBSCRIBER_LOGGER,
    )


@contextlib.asynccontextmanager
async def _connected(client: aiomqtt.Client) -> AsyncIterator[Peer]:
    async with client:
        wrapped = Peer(client)
        collector = asyncio.create_task(wrapped._collect())
        try:
            yield wrapped
        finally:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector


@pytest.fixture
def venue(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A broker with the documented ACL and one account per role."""
    return mosquitto_factory(users=USERS, acl=ACL.read_text(encoding="utf-8"))


@pytest.fixture
def connect(venue: Mosquitto) -> Connect:
    """``async with connect(username) as client``: logged in with that user's password."""

    def open_as(username: str) -> contextlib.AbstractAsyncContextManager[Peer]:
        return _connected(_aiomqtt_client(venue, username, USERS[username]))

    return open_as


# --- tables ------------------------------------------------------------------------------------


async def test_table_publishes_its_own_events_to_arbiters(connect: Connect) -> None:
    async with connect(ARBITER) as arbiter, connect(TABLE) as table:
        await arbiter.subscribe(ALL)
        for suffix in ("event/move", "status", "claim", "board", "game", "response/new_game"):
            await table.publish(table_topic(TABLE, suffix), suffix.encode())
            await arbiter.wait_for(table_topic(TABLE, suffix), suffix.encode())


async def test_table_publishes_its_own_descriptions_only(connect: Connect) -> None:
    """With [discovery] on: its index entry and Home Assistant discovery, nobody else's."""
    own = [f"chessbridge/1/index/{TABLE}", f"homeassistant/device/chessbridge/{TABLE}/config"]
    others = [f"chessbridge/1/index/{OTHER}", f"homeassistant/device/chessbridge/{OTHER}/config"]
    async with (
        connect(HOME_ASSISTANT) as reader,
        connect(TABLE) as table,
        connect(DISPLAY) as display,
    ):
        await reader.subscribe("#")
        for topic in others:
            await table.publish(topic, b"forged")
            await display.publish(topic, b"forged")
        for topic in own:
            await display.publish(topic, b"forged")
            await reader.publish(topic, b"forged")
        for topic in own:
            await table.publish(topic, b"mine")
            await reader.wait_for(topic, b"mine")
        assert sorted(reader.topics()) == sorted(own)


async def test_table_cannot_write_under_another_table(connect: Connect) -> None:
    async with connect(ARBITER) as arbiter, connect(TABLE) as table:
        await arbiter.subscribe(ALL)
        for suffix in ("event/move", "status", "board", "game", "response/new_game"):
            await table.publish(table_topic(OTHER, suffix), b"forged")
        await table.publish(table_topic(TABLE, "event/move"), b"control")
        await arbiter.wait_for(table_topic(TABLE, "event/move"), b"control")
        assert arbiter.topics() == [table_topic(TABLE, "event/move")]


async def test_table_cannot_send_requests_not_even_to_itself(connect: Connect) -> None:
    async with (
        connect(ARBITER) as arbiter,
        connect(TABLE) as table,
        connect(TABLE) as table_listener,
    ):
        await arbiter.subscribe(ALL)
        await table_listener.subscribe(table_topic(TABLE, "request/#"))
        await table.publish(table_topic(TABLE, "request/new_game"), b"forged")
        await table.publish(table_topic(OTHER, "request/new_game"), b"forged")
        await table.publish(table_topic(TABLE, "event/move"), b"control")
        await arbiter.wait_for(table_topic(TABLE, "event/move"), b"control")
        # The arbiter's own request, after the forged ones, reaches the table's listener.
        await arbiter.publish(table_topic(TABLE, "request/new_game"), b"genuine")
        await table_listener.wait_for(table_topic(TABLE, "request/new_game"), b"genuine")
        assert b"forged" not in [payload for _, payload in arbiter.messages]
        assert table_listener.messages == [(table_topic(TABLE, "request/new_game"), b"genuine")]


async def test_table_reads_only_its_own_requests(connect: Connect) -> None:
    """A table subscribing to every table's requests (or to everything) gets only its own."""
    async with (
        connect(ARBITER) as arbiter,
        connect(TABLE) as table,
        connect(OTHER) as other,
    ):
        await table.subscribe("chessbridge/1/table/+/request/#")
        await other.subscribe(ALL)
        await arbiter.publish(table_topic(TABLE, "request/takeback"), b"for t042")
        await arbiter.publish(table_topic(OTHER, "request/takeback"), b"for t043")
        await table.wait_for(table_topic(TABLE, "request/takeback"), b"for t042")
        await other.wait_for(table_topic(OTHER, "request/takeback"), b"for t043")
        # Nor can a table read another table's events (nor its own: it has no need).
        await table.publish(table_topic(TABLE, "event/move"), b"e4")
        await arbiter.publish(table_topic(OTHER, "request/replay"), b"control")
        await other.wait_for(table_topic(OTHER, "request/replay"), b"control")
        assert table.topics() == [table_topic(TABLE, "request/takeback")]
        assert other.topics() == [
            table_topic(OTHER, "request/takeback"),
            table_topic(OTHER, "request/replay"),
        ]


# --- arbiters and displays ---------------------------------------------------------------------


async def test_arbiter_sends_requests_but_cannot_pose_as_a_table(connect: Connect) -> None:
    async with connect(ARBITER) as arbiter, connect(DISPLAY) as display:
        await display.subscribe(ALL)
        # The table patterns apply to every username: the ACL's deny line must stop "arbiter1"
        # from acting as a table of that name.
        await arbiter.publish(table_topic(ARBITER, "event/move"), b"forged")
        await arbiter.publish(table_topic(ARBITER, "status"), b"forged")
        await arbiter.publish(table_topic(TABLE, "event/move"), b"forged")
        await arbiter.publish(table_topic(TABLE, "status"), b"forged")
        await arbiter.publish(table_topic(TABLE, "request/set_result"), b"genuine")
        await display.wait_for(table_topic(TABLE, "request/set_result"), b"genuine")
        assert display.topics() == [table_topic(TABLE, "request/set_result")]


async def test_display_reads_everything_and_writes_nothing(connect: Connect) -> None:
    async with (
        connect(ARBITER) as arbiter,
        connect(DISPLAY) as display,
        connect(TABLE) as table,
    ):
        await arbiter.subscribe(ALL)
        await display.subscribe(ALL)
        for topic in (
            table_topic(TABLE, "event/move"),
            table_topic(TABLE, "status"),
            table_topic(TABLE, "request/new_game"),
            table_topic(DISPLAY, "event/move"),  # a table named like the display
            table_topic(DISPLAY, "status"),
            "chessbridge/1/venue/announcement",
        ):
            await display.publish(topic, b"forged")
        await table.publish(table_topic(TABLE, "event/move"), b"control")
        await arbiter.wait_for(table_topic(TABLE, "event/move"), b"control")
        await display.wait_for(table_topic(TABLE, "event/move"), b"control")
        assert arbiter.messages == [(table_topic(TABLE, "event/move"), b"control")]


# --- authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("username", "password"),
    [(TABLE, "wrong"), ("t999", "anything"), (None, None), (TABLE, None)],
    ids=["wrong-password", "unknown-user", "anonymous", "no-password"],
)
async def test_connection_refused_without_valid_credentials(
    venue: Mosquitto, username: str | None, password: str | None
) -> None:
    with pytest.raises(aiomqtt.MqttCodeError) as refused:
        async with _aiomqtt_client(venue, username, password):
            pass
    rc = refused.value.rc
    code = rc if isinstance(rc, int) or rc is None else rc.value
    assert code in {4, 5, 134, 135}  # bad user name or password / not authorised


# --- the real publisher ------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def _running(publisher: Publisher) -> AsyncIterator[None]:
    """The publisher running and connected; stopped (``offline``) on exit."""
    task = asyncio.create_task(publisher.run())
    try:
        await asyncio.wait_for(publisher.connected.wait(), 5.0)
        yield
    finally:
        await publisher.stop()
        await task


def _status(messages: list[tuple[str, bytes]], table: str) -> list[str | None]:
    topic = table_topic(table, payloads.STATUS)
    return [payloads.decode_envelope(p).state for t, p in messages if t == topic]


async def test_publisher_with_table_credentials(
    venue: Mosquitto, connect: Connect, tmp_path: Path
) -> None:
    requests: list[tuple[str, bytes]] = []
    got_request = asyncio.Event()

    async def on_request(command: str, raw: bytes) -> None:
        requests.append((command, raw))
        got_request.set()

    outbox = Outbox(tmp_path)
    publisher = Publisher(
        TABLE,
        broker_settings(venue.url, BrokerConfig(username=TABLE, password=USERS[TABLE])),
        outbox,
        on_request=on_request,
    )
    try:
        async with connect(DISPLAY) as display, connect(ARBITER) as arbiter:
            await display.subscribe(table_topic(TABLE, "#"))
            async with _running(publisher):
                await _wait(lambda: _status(display.messages, TABLE) == ["online"])
                seq = publisher.set_board(
                    payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/x")
                )
                await _wait(lambda: table_topic(TABLE, payloads.BOARD) in display.topics())
                assert payloads.decode_envelope(display.messages[-1][1]).seq == seq
                await arbiter.publish(table_topic(TABLE, "request/ack_alert"), b'{"a":1}')
                await asyncio.wait_for(got_request.wait(), 5.0)
            await _wait(lambda: _status(display.messages, TABLE) == ["online", "offline"])
        assert requests == [("ack_alert", b'{"a":1}')]
    finally:
        outbox.close()


async def _wait(condition: Callable[[], bool], within: float = 20.0) -> None:
    """Poll ``condition`` (it reads messages that several clients collect)."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


# --- the example broker configuration, with TLS ------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def certificates(tmp_path: Path) -> Path:
    """A CA and a broker certificate for 127.0.0.1/localhost, in a fresh directory."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make test certificates")
    certs = tmp_path / "certs"
    certs.mkdir()
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
        "-subj", "/CN=chessbridge test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=certs,
    )  # fmt: skip
    _openssl(
        "req", *ec, "-keyout", "broker.key", "-out", "broker.csr", "-subj", "/CN=localhost",
        cwd=certs,
    )  # fmt: skip
    (certs / "ext.cnf").write_text(
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\n"
        "extendedKeyUsage=serverAuth\n"
        "authorityKeyIdentifier=keyid\n"
        "subjectKeyIdentifier=hash\n"
    )
    _openssl(
        "x509", "-req", "-in", "broker.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "1", "-extfile", "ext.cnf", "-out", "broker.crt",
        cwd=certs,
    )  # fmt: skip
    return certs


def _localise(conf: str, broker: Mosquitto, tls_port: int, certs: Path) -> str:
    """The example config with this machine's ports, files and log; nothing else changed."""
    files = {
        "password_file": broker.directory / "passwords",
        "acl_file": broker.directory / "acl",
        "certfile": certs / "broker.crt",
        "keyfile": certs / "broker.key",
    }
    lines: list[str] = []
    for line in conf.splitlines():
        key = line.split(" ", 1)[0]
        if key in files:
            line = f"{key} {files[key]}"
        elif re.fullmatch(r"listener 1883 \S+", line):
            line = f"listener {broker.port} {broker.host}"
        elif line == "listener 8883":
            line = f"listener {tls_port} {broker.host}"
        lines.append(line)
    local = "\n".join(lines)
    listeners = [line for line in lines if line.startswith("listener ")]
    assert listeners == [
        f"listener {broker.port} {broker.host}",
        f"listener {tls_port} {broker.host}",
    ]
    assert all(str(path) in local for path in files.values())
    own = broker.config_path.read_text().splitlines()
    keep = [line for line in own if line.startswith(("log_dest", "log_type", "user "))]
    return "\n".join([local, *keep, ""])


@pytest.fixture
def example_broker(tmp_path: Path, certificates: Path) -> Iterator[tuple[Mosquitto, int]]:
    """Mosquitto running docs/mosquitto/mosquitto.example.conf (plain and TLS listeners)."""
    broker = Mosquitto(tmp_path / "example", users=USERS, acl=ACL.read_text(encoding="utf-8"))
    tls_port = free_port()
    broker.config_path.write_text(
        _localise(CONF.read_text(encoding="utf-8"), broker, tls_port, certificates)
    )
    broker.start()
    try:
        yield broker, tls_port
    finally:
        broker.stop()


async def test_example_config_tls_listener_with_the_publisher(
    example_broker: tuple[Mosquitto, int], certificates: Path, tmp_path: Path
) -> None:
    broker, tls_port = example_broker
    ca = certificates / "ca.pem"
    tls = aiomqtt.TLSParameters(ca_certs=str(ca), cert_reqs=ssl.CERT_REQUIRED)
    display_client = _aiomqtt_client(
        broker, DISPLAY, USERS[DISPLAY], tls_port=tls_port, tls_params=tls
    )
    outbox = Outbox(tmp_path / "state")
    publisher = Publisher(
        TABLE,
        broker_settings(
            f"mqtts://localhost:{tls_port}",
            BrokerConfig(username=TABLE, password=USERS[TABLE], ca_file=str(ca)),
        ),
        outbox,
    )
    try:
        async with _connected(display_client) as display:
            await display.subscribe(ALL)
            async with _running(publisher):
                await _wait(lambda: _status(display.messages, TABLE) == ["online"])
    finally:
        outbox.close()


async def test_example_config_plain_listener_needs_an_account(
    example_broker: tuple[Mosquitto, int],
) -> None:
    broker, _ = example_broker
    with pytest.raises(aiomqtt.MqttCodeError):
        async with _aiomqtt_client(broker, None, None):
            pass
    async with _connected(_aiomqtt_client(broker, ARBITER, USERS[ARBITER])) as arbiter:
        await arbiter.subscribe(ALL)
        await arbiter.publish(table_topic(ARBITER, "event/move"), b"forged")
        await arbiter.publish(table_topic(TABLE, "request/new_game"), b"control")
        await arbiter.wait_for(table_topic(TABLE, "request/new_game"), b"control")
        assert arbiter.topics() == [table_topic(TABLE, "request/new_game")]


# paho leaves the socket of a failed TLS handshake to the garbage collector, which warns.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_tls_listener_is_not_trusted_without_the_venue_ca(
    example_broker: tuple[Mosquitto, int],
) -> None:
    """A client verifying against the system's CAs only refuses the venue's certificate."""
    broker, tls_port = example_broker
    client = _aiomqtt_client(
        broker, TABLE, USERS[TABLE], tls_port=tls_port, tls_params=aiomqtt.TLSParameters()
    )
    with pytest.raises(aiomqtt.MqttError, match="certificate"):
        async with client:
            pass
    del client
    gc.collect()  # that socket's warning, here rather than in whichever test runs next


# --- nobody takes over a table's session -------------------------------------------------------


@pytest.mark.parametrize("identifier", ["t042", "chessbridge-t042"])
async def test_another_account_cannot_take_over_a_tables_session(
    example_broker: tuple[Mosquitto, int], tmp_path: Path, identifier: str
) -> None:
    """With the documented config, an account connecting with the table's client id (the bare
    table id, or the daemon's) gets a client id of its own: the table is not disconnected."""
    broker, _ = example_broker
    requests: list[str] = []
    got = asyncio.Event()

    async def on_request(command: str, raw: bytes) -> None:
        requests.append(command)
        got.set()

    outbox = Outbox(tmp_path / "state")
    publisher = Publisher(
        TABLE,
        broker_settings(broker.url, BrokerConfig(username=TABLE, password=USERS[TABLE])),
        outbox,
        on_request=on_request,
    )
    display = _aiomqtt_client(broker, DISPLAY, USERS[DISPLAY])
    try:
        async with _connected(display) as shown:
            await shown.subscribe(table_topic(TABLE, "status"))
            async with _running(publisher):
                await _wait(lambda: _status(shown.messages, TABLE) == ["online"])
                intruder = aiomqtt.Client(
                    broker.host,
                    broker.port,
                    username=ARBITER,
                    password=USERS[ARBITER],
                    identifier=identifier,
                    logger=SUBSCRIBER_LOGGER,
                )
                async with _connected(intruder) as arbiter:
                    # The table still reads its requests on its first connection.
                    await arbiter.publish(table_topic(TABLE, "request/assign"), b"{}")
                    await asyncio.wait_for(got.wait(), 5.0)
                    assert _status(shown.messages, TABLE) == ["online"], "the table was kicked"
    finally:
        outbox.close()
    assert requests == ["assign"]


async def test_a_table_reads_and_writes_its_own_claim_only(connect: Connect) -> None:
    """A second daemon for the same table is seen on the table's claim."""
    async with connect(TABLE) as table, connect(OTHER) as other:
        await table.subscribe("chessbridge/1/table/+/claim")
        await other.publish(table_topic(OTHER, "claim"), b"other's")
        await table.publish(table_topic(OTHER, "claim"), b"forged")
        await table.publish(table_topic(TABLE, "claim"), b"own")
        await table.wait_for(table_topic(TABLE, "claim"), b"own")
        assert table.topics() == [table_topic(TABLE, "claim")]
