"""The publisher against a real Mosquitto: status and Will, order, outages, requests."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import selectors
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiomqtt
import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from bridge.mqtt.outbox import Outbox
from bridge.mqtt.publisher import Publisher, PublisherTiming, RequestHandler
from bridge.wire import payloads
from bridge.wire.config import BrokerConfig, broker_settings
from tests.conftest import Mosquitto, MosquittoFactory, Subscribe
from tests.mqtt_tap import MqttTap

ROOT = Path(__file__).resolve().parents[2]

BOARD = payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/ttyACM0", model="m")


def _game(last_seq: int) -> payloads.GameData:
    return payloads.GameData(
        id="g1",
        fen="8/8/8/8/8/8/8/K6k w - - 0 1",
        start_fen="8/8/8/8/8/8/8/K6k w - - 0 1",
        moves=payloads.MoveList(),
        clocks=None,
        turn="white",
        alerts=(),
        result=None,
        reason=None,
        article=None,
        claimable=(),
        rules="fide-2018/standard",
        last_seq=last_seq,
    )


def _result(n: int) -> payloads.ResultData:
    """A small event whose content says which one it is."""
    return payloads.ResultData(result="1-0", reason=f"event {n}", article="-")


def _envelopes(messages: list[aiomqtt.Message]) -> list[payloads.Envelope]:
    return [payloads.decode_envelope(bytes(m.payload)) for m in messages]


def _states(messages: list[aiomqtt.Message]) -> list[str | None]:
    return [envelope.state for envelope in _envelopes(messages)]


def _publisher(
    table: str,
    broker: Mosquitto | MqttTap,
    outbox: Outbox,
    *,
    on_request: RequestHandler | None = None,
    username: str | None = None,
    password: str | None = None,
) -> Publisher:
    """A publisher that reconnects quickly, as tests want (to a broker, or a tap before one)."""
    return Publisher(
        table,
        broker_settings(broker.url, BrokerConfig(username=username, password=password)),
        outbox,
        game_id="g1",
        on_request=on_request,
        timing=PublisherTiming(reconnect_min=0.1, reconnect_max=0.5),
    )


@contextlib.asynccontextmanager
async def running(publisher: Publisher) -> AsyncIterator[asyncio.Task[None]]:
    """Run the publisher until the block ends, then stop it cleanly."""
    task = asyncio.create_task(publisher.run())
    try:
        async with asyncio.timeout(5):
            await publisher.connected.wait()
        yield task
    finally:
        await publisher.stop()
        await task


async def _until(condition: Callable[[], bool], within: float = 5.0) -> None:
    """Poll a condition that no event signals (log records, a cleared flag)."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110  # nothing to wait on but the condition
            await asyncio.sleep(0.01)


def _topic(table: str, suffix: str) -> str:
    return payloads.topic(table, suffix)


async def test_online_retained_then_events_in_order_at_qos1(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox)
    async with mqtt_subscribe(mosquitto, _topic(table_id, "#")) as live, running(publisher):
        seqs = [publisher.publish("result", payloads.EVENT_RESULT, _result(n)) for n in range(30)]
        await publisher.flushed()
        assert publisher.published_count == 30

        async with mqtt_subscribe(mosquitto, _topic(table_id, "status")) as late:
            (status,) = await late.wait_for(lambda messages: len(messages) == 1)
        assert status.retain
        assert status.qos == 1
        envelope = payloads.decode_envelope(bytes(status.payload))
        assert envelope.state == "online"
        assert (envelope.type, envelope.table, envelope.game) == ("status", table_id, "g1")
        assert envelope.epoch == outbox.epoch == 1

        await live.wait_for(lambda _: len(live.on("event/result")) == 30)
        events = live.on("event/result")
        received = _envelopes(events)
        assert [e.seq for e in received] == seqs == sorted(seqs)
        assert [e.data["reason"] for e in received] == [f"event {n}" for n in range(30)]
        assert all(m.qos == 1 and not m.retain for m in events)
        assert seqs[0] > envelope.seq  # online comes first
    outbox.close()


async def test_clean_stop_publishes_offline_and_no_will(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox)
    async with mqtt_subscribe(mosquitto, _topic(table_id, "status")) as live:
        async with running(publisher):
            await live.wait_for(lambda messages: _states(messages) == ["online"])
        await live.wait_for(lambda messages: _states(messages) == ["online", "offline"])
        await asyncio.sleep(0.3)  # a Will would arrive right after the disconnect
        assert _states(live.messages) == ["online", "offline"]
        online, offline = _envelopes(live.messages)
        assert offline.seq > online.seq
    async with mqtt_subscribe(mosquitto, _topic(table_id, "status")) as late:
        (retained,) = await late.wait_for(lambda messages: len(messages) == 1)
        assert retained.retain
        assert payloads.decode_envelope(bytes(retained.payload)).state == "offline"
    outbox.close()


_CHILD = """
import asyncio, sys
from pathlib import Path
from bridge.mqtt.outbox import Outbox
from bridge.mqtt.publisher import Publisher, PublisherTiming
from bridge.wire.config import broker_settings

async def main() -> None:
    url, table, state = sys.argv[1:4]
    publisher = Publisher(
        table,
        broker_settings(url),
        Outbox(Path(state)),
        game_id="g1",
        timing=PublisherTiming(keepalive=60),
    )
    await publisher.run()

asyncio.run(main())
"""


async def test_will_lost_when_the_process_is_killed(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    async with mqtt_subscribe(mosquitto, _topic(table_id, "status")) as live:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _CHILD,
            mosquitto.url,
            table_id,
            str(tmp_path),
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            await live.wait_for(lambda messages: _states(messages) == ["online"], within=10)
        finally:
            child.send_signal(signal.SIGKILL)
            await child.wait()
        # SIGKILL closes the socket without DISCONNECT: the broker sends the Will at once,
        # well before the 60 s keepalive would notice.
        await live.wait_for(lambda messages: _states(messages) == ["online", "lost"])
        online, lost = _envelopes(live.messages)
        assert lost.type == "status"
        # The Will names the node it was left with (here the only one).
        assert lost.data == {"state": "lost", "broker": f"{mosquitto.host}:{mosquitto.port}"}
        assert (lost.table, lost.game, lost.epoch) == (table_id, "g1", 1)
        assert lost.seq > online.seq
        assert live.messages[1].qos == 1
    async with mqtt_subscribe(mosquitto, _topic(table_id, "status")) as late:
        (retained,) = await late.wait_for(lambda messages: len(messages) == 1)
        assert retained.retain
        assert payloads.decode_envelope(bytes(retained.payload)).state == "lost"
    with Outbox(tmp_path) as outbox:  # the next start counts a new epoch and goes on
        assert outbox.epoch == 2
        assert outbox.last_seq >= lost.seq


async def test_retained_board_and_game_republished_after_broker_restart(
    mosquitto_private: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    broker = mosquitto_private  # no persistence: a restart forgets every retained message
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, broker, outbox)
    async with running(publisher):
        board_seq = publisher.set_board(BOARD)
        game_seq = publisher.set_game(_game(last_seq=0))
        await publisher.flushed()

        await broker.arestart()
        await _until(lambda: not publisher.connected.is_set())
        async with asyncio.timeout(5):
            await publisher.connected.wait()

        async with mqtt_subscribe(broker, _topic(table_id, "#")) as late:
            await late.wait_for(lambda messages: len(messages) == 4)
            by_topic = {m.topic.value.rsplit("/", 1)[-1]: m for m in late.messages}
        assert all(m.retain for m in by_topic.values())
        board = payloads.decode_envelope(bytes(by_topic["board"].payload))
        game = payloads.decode_envelope(bytes(by_topic["game"].payload))
        assert (board.seq, game.seq) == (board_seq, game_seq)  # the same messages again
        assert payloads.data_as(board, payloads.BoardData) == BOARD
        assert payloads.decode_envelope(bytes(by_topic["status"].payload)).state == "online"
        claim = payloads.decode_envelope(bytes(by_topic["claim"].payload))
        assert payloads.data_as(claim, payloads.ClaimData).instance == publisher.instance
    outbox.close()


# The connection the broker's stop cut can end after the session did (the tap between them
# closes it late): aiomqtt then logs its disconnection, unread, when collected - here.
@pytest.mark.allow_error_log
async def test_a_claim_the_broker_never_confirmed_does_not_make_the_last_process_a_rival(
    mosquitto_factory: MosquittoFactory,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A restarted daemon's first claim is sent, and the broker stops before it confirms it
    (here it never even reads it: a tap in between withholds it): the claim retained is still
    the dead process's. On the next connection that claim is not a rival's, the daemon's own
    never having stood: the table stays claimed by this process and serves its requests,
    instead of stopping as a second daemon would (exit 78)."""
    broker = mosquitto_factory(persistence=True)  # the dead process's claim survives the restart
    claim_topic = _topic(table_id, payloads.CLAIM)
    dead = payloads.encode(
        table_id, "g1", 1, 7, 946684800.0, "claim",
        payloads.ClaimData(instance="0123456789abcdef", since="2000-01-01T00:00:00.000Z"),
    )  # fmt: skip
    handled = asyncio.Event()

    async def handle(command: str, raw: bytes) -> None:
        handled.set()

    outbox = Outbox(tmp_path)
    tap = MqttTap(broker.host, broker.port)
    async with mqtt_subscribe(broker, None) as arbiter:
        await arbiter.client.publish(claim_topic, dead, qos=1, retain=True)
    async with tap.running():
        publisher = _publisher(table_id, tap, outbox, on_request=handle)
        tap.withhold_publishes = True
        task = asyncio.create_task(publisher.run())
        try:
            await _until(lambda: any(p.topic == claim_topic for p in tap.publishes), within=10)
            await broker.astop()  # before it read the claim: it keeps the dead process's
            tap.withhold_publishes = False
            await broker.astart()
            async with mqtt_subscribe(broker, None) as arbiter_again:
                await _until(lambda: publisher.connected.is_set() or task.done(), within=30)
                assert not task.done(), f"the publisher stopped: {task.exception()!r}"
                # Asked after the retained claim was delivered: answered once it was judged.
                request = _topic(table_id, "request/ack_alert")
                await arbiter_again.client.publish(request, b"{}", qos=1)
                await _until(lambda: handled.is_set() or task.done(), within=10)
                assert not task.done(), f"the publisher stopped: {task.exception()!r}"
            async with mqtt_subscribe(broker, claim_topic) as late:
                (retained,) = await late.wait_for(lambda messages: len(messages) == 1)
            claim = payloads.data_as(
                payloads.decode_envelope(bytes(retained.payload)), payloads.ClaimData
            )
            assert claim.instance == publisher.instance
        finally:
            await publisher.stop()
            with contextlib.suppress(Exception):
                await task
    outbox.close()
    # The connection the broker's stop cut: collected here, not in a later test.
    gc.collect()
    # The connection lost during the announce was noticed as lost, not after the client's
    # timeout on a claim that could never be acknowledged.
    lost = [r.getMessage() for r in caplog.records if "lost the connection" in r.getMessage()]
    assert lost, "the publisher never said it lost the connection"
    assert not any("timed out" in message for message in lost), lost


async def test_events_during_an_outage_arrive_once_in_order(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    # The broker keeps the subscriber's persistent session across its restart, as a venue
    # broker for the relay should.
    broker = mosquitto_factory(persistence=True)
    outbox = Outbox(tmp_path / "state")
    publisher = _publisher(table_id, broker, outbox)
    received: list[aiomqtt.Message] = []
    relay = f"relay-{table_id}"
    events = _topic(table_id, "event/#")
    async with running(publisher):
        async with mqtt_subscribe(broker, events, identifier=relay, clean_session=False) as sub:
            for n in range(3):
                publisher.publish("result", payloads.EVENT_RESULT, _result(n))
            await sub.wait_for(lambda messages: len(messages) == 3)
            await broker.astop()
            await _until(lambda: not publisher.connected.is_set())
            received += sub.messages

        # The broker is down: these wait in the outbox.
        for n in range(3, 10):
            publisher.publish("result", payloads.EVENT_RESULT, _result(n))
        assert outbox.count() == 7
        await asyncio.sleep(0.3)

        await broker.astart()
        async with asyncio.timeout(5):
            await publisher.flushed()
        assert publisher.published_count == 10
        assert outbox.count() == 0
        async with mqtt_subscribe(broker, None, identifier=relay, clean_session=False) as sub:
            await sub.wait_for(lambda messages: len({_key(m) for m in received + messages}) == 10)
            await asyncio.sleep(0.2)  # let any duplicate show up
            received += sub.messages

    # QoS 1 may deliver a message twice; dropping copies by (epoch, seq) leaves each once, in order.
    first = {_key(m): m for m in reversed(received)}
    unique = sorted(first)
    assert list(dict.fromkeys(_key(m) for m in received)) == unique
    assert [seq for _, seq in unique] == list(range(unique[0][1], unique[0][1] + 10))
    reasons = [e.data["reason"] for e in _envelopes([first[key] for key in unique])]
    assert reasons == [f"event {n}" for n in range(10)]
    outbox.close()


def _key(message: aiomqtt.Message) -> tuple[int, int]:
    envelope = payloads.decode_envelope(bytes(message.payload))
    return envelope.epoch, envelope.seq


async def test_rows_left_by_a_previous_run_are_sent_first(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    with Outbox(tmp_path) as outbox:  # a run that never reached the broker
        offline = _publisher(table_id, mosquitto, outbox)
        for n in range(3):
            offline.publish("result", payloads.EVENT_RESULT, _result(n))
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox)
    publisher.publish("result", payloads.EVENT_RESULT, _result(3))
    async with mqtt_subscribe(mosquitto, _topic(table_id, "event/#")) as live, running(publisher):
        await publisher.flushed()
        await live.wait_for(lambda messages: len(messages) == 4)
    assert [_key(m) for m in live.messages] == [(1, 1), (1, 2), (1, 3), (2, 4)]
    outbox.close()


async def test_requests_are_routed_to_the_handler(
    mosquitto: Mosquitto,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[tuple[str, bytes]] = []
    got = asyncio.Event()

    async def handle(command: str, raw: bytes) -> None:
        seen.append((command, raw))
        got.set()

    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox, on_request=handle)
    async with mqtt_subscribe(mosquitto, None) as arbiter:
        request = _topic(table_id, "request/")
        # A retained command would run again after every reconnect: it must be ignored.
        await arbiter.client.publish(request + "new_game", b'{"stale":1}', qos=1, retain=True)
        async with running(publisher):
            await arbiter.client.publish(_topic("other", "request/new_game"), b"{}", qos=1)
            await arbiter.client.publish(request + "new_game", b'{"transaction":"1"}', qos=1)
            await arbiter.client.publish(request + "ack_alert", b"", qos=1)
            await _until(lambda: len(seen) == 2)
        await arbiter.client.publish(request + "new_game", b"", qos=1, retain=True)  # clear
    assert seen == [("new_game", b'{"transaction":"1"}'), ("ack_alert", b"")]
    assert "ignoring retained request 'new_game'" in caplog.text
    outbox.close()


@pytest.mark.allow_error_log
async def test_a_failing_handler_is_logged_and_the_next_request_served(
    mosquitto: Mosquitto,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    async def handle(command: str, raw: bytes) -> None:
        seen.append(command)
        if command == "explode":
            raise RuntimeError("handler bug")

    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox, on_request=handle)
    async with mqtt_subscribe(mosquitto, None) as arbiter, running(publisher):
        await arbiter.client.publish(_topic(table_id, "request/explode"), b"", qos=1)
        await arbiter.client.publish(_topic(table_id, "request/takeback"), b"", qos=1)
        await _until(lambda: seen == ["explode", "takeback"])
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in errors] == [f"request 'explode' on table {table_id} failed"]
    assert errors[0].exc_info is not None
    outbox.close()


@pytest.mark.allow_error_log
async def test_refused_credentials_are_a_clear_error_and_retried(
    mosquitto_factory: MosquittoFactory,
    table_id: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    broker = mosquitto_factory(users={table_id: "right-secret"})
    outbox = Outbox(tmp_path)
    wrong = _publisher(table_id, broker, outbox, username=table_id, password="wrong-secret")
    task = asyncio.create_task(wrong.run())
    await _until(lambda: sum("refused" in r.getMessage() for r in caplog.records) >= 2)
    await wrong.stop()
    await task
    refusals = [r for r in caplog.records if "refused" in r.getMessage()]
    assert all(r.levelno == logging.ERROR for r in refusals)
    message = refusals[0].getMessage()
    assert f"127.0.0.1:{broker.port}" in message
    assert "check username/password in the config or environment" in message
    assert "secret" not in caplog.text

    right = _publisher(table_id, broker, outbox, username=table_id, password="right-secret")
    async with running(right):
        assert right.connected.is_set()
    outbox.close()


async def test_unreachable_broker_is_a_warning_and_retried(
    table_id: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    outbox = Outbox(tmp_path)
    publisher = Publisher(
        table_id,
        broker_settings("mqtt://127.0.0.1:9"),
        outbox,
        timing=PublisherTiming(reconnect_min=0.05),
    )
    task = asyncio.create_task(publisher.run())
    await _until(lambda: sum("cannot connect" in r.getMessage() for r in caplog.records) >= 2)
    await publisher.stop()
    await task
    failures = [r for r in caplog.records if "cannot connect" in r.getMessage()]
    assert all(r.levelno == logging.WARNING for r in failures)
    assert "127.0.0.1:9" in failures[0].getMessage()
    assert "retrying in" in failures[0].getMessage()
    outbox.close()


@pytest.mark.parametrize(
    ("url", "complaint"),
    [
        ("tcp://localhost:1883", "mqtt:// or mqtts://"),
        ("mqtt://user:pw@localhost", "not in the URL"),
        ("mqtt://localhost/path", "must be mqtt"),
        ("mqtt://:1883", "no host"),
        ("mqtt://localhost:port", "bad port"),
    ],
)
def test_bad_broker_urls(url: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        broker_settings(url)


async def test_tls_files_need_mqtts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mqtts"):
        broker_settings("mqtt://localhost", BrokerConfig(ca_file=str(tmp_path / "ca.pem")))


def test_a_bad_table_id_is_refused(tmp_path: Path) -> None:
    with Outbox(tmp_path) as outbox, pytest.raises(ValueError, match="table"):
        Publisher("a/b", broker_settings("mqtt://localhost"), outbox)


async def test_a_jittered_first_connection_waits_and_a_stop_ends_the_wait(
    mosquitto: Mosquitto,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """connect_jitter spreads the first connection; stopping meanwhile never connects."""
    # The wait drawn is the longest (a draw near 0 would connect within the test's 0.1 s).
    monkeypatch.setattr("bridge.mqtt.publisher.random.uniform", lambda low, high: high)
    async with mqtt_subscribe(mosquitto, _topic(table_id, "#")) as seen:
        with Outbox(tmp_path / "waiting") as outbox:
            waiting = Publisher(
                table_id,
                broker_settings(mosquitto.url, BrokerConfig(connect_jitter=60.0)),
                outbox,
                game_id="waiting",
            )
            task = asyncio.create_task(waiting.run())
            await asyncio.sleep(0.1)
            assert not task.done()
            assert not waiting.connected.is_set()
            await waiting.stop()
            await task
        with Outbox(tmp_path / "spread") as outbox:
            spread = Publisher(
                table_id,
                broker_settings(mosquitto.url, BrokerConfig(connect_jitter=0.2)),
                outbox,
                game_id="spread",
            )
            async with running(spread):
                pass
        await seen.wait_for(lambda messages: bool(messages))
    statuses = [payloads.decode_envelope(bytes(m.payload)) for m in seen.on("status")]
    assert [(s.game, s.state) for s in statuses] == [("spread", "online"), ("spread", "offline")]


class _Listener:
    """A subscriber on a thread of its own (paho's): it hears the broker while the test's event
    loop, where the publisher runs, is blocked."""

    def __init__(self, broker: Mosquitto, topic: str) -> None:
        self.received: list[bytes] = []
        self.heard = threading.Event()
        self._subscribed = threading.Event()
        self._topic = topic
        client = mqtt.Client(CallbackAPIVersion.VERSION2)
        client.on_connect = lambda c, u, flags, rc, props: c.subscribe(topic, qos=1)
        client.on_subscribe = lambda c, u, mid, rcs, props: self._subscribed.set()
        client.on_message = self._on_message
        host, port = broker.url.removeprefix("mqtt://").split(":")
        client.connect(host, int(port))
        client.loop_start()
        self._client = client
        assert self._subscribed.wait(5), "the listener could not subscribe"

    def _on_message(self, client: mqtt.Client, userdata: object, message: mqtt.MQTTMessage) -> None:
        self.received.append(bytes(message.payload))
        self.heard.set()

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()


async def test_a_row_stored_while_connected_is_on_the_wire_when_publish_returns(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    """A move goes to the broker in the step that stored it, not passes of the loop later."""
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox)
    listener = _Listener(mosquitto, _topic(table_id, payloads.EVENT_RESULT))
    try:
        async with running(publisher):
            await publisher.flushed()
            for n in range(3):
                listener.heard.clear()
                seq = publisher.publish("result", payloads.EVENT_RESULT, _result(n))
                # The loop is blocked here: nothing of the publisher runs but what publish() did.
                assert listener.heard.wait(5), f"event {n} was not sent by publish() itself"
                assert payloads.decode_envelope(listener.received[-1]).seq == seq
            # Inside an outbox batch nothing is sent before the commit; send_now() sends it,
            # several rows in one write (one send for all of them), before it returns.
            listener.heard.clear()
            heard = len(listener.received)
            with outbox.batch():
                seqs = [
                    publisher.publish("result", payloads.EVENT_RESULT, _result(n)) for n in (8, 9)
                ]
                assert not listener.heard.wait(0.3)
            window = publisher._window
            assert window is not None
            paho = window._paho
            sent: list[int] = []
            send = paho._sock_send

            def counted(buf: bytes | bytearray) -> int:
                written = send(buf)
                sent.append(written)
                return written

            paho._sock_send = counted  # type: ignore[method-assign]
            try:
                publisher.send_now()
            finally:
                del paho._sock_send
            assert len(sent) == 1, f"two rows of one step took {len(sent)} sends"
            deadline = time.monotonic() + 5
            while len(listener.received) < heard + 2 and time.monotonic() < deadline:
                listener.heard.clear()
                listener.heard.wait(0.1)
            got = [payloads.decode_envelope(p).seq for p in listener.received[heard:]]
            assert got == seqs
            await publisher.flushed()
            assert outbox.count() == 0
    finally:
        listener.close()
        outbox.close()


async def test_writing_at_once_leaves_no_writer_behind_on_the_loop(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    """After the direct writes, with a packet of aiomqtt's queued just before them and a burst
    over the window of 16, the loop watches no socket for writing once everything is sent: a
    writer left registered with nothing to write would wake the loop on every pass."""
    outbox = Outbox(tmp_path)
    publisher = _publisher(table_id, mosquitto, outbox)
    loop = asyncio.get_running_loop()

    def writers() -> list[int]:
        selector = loop._selector  # type: ignore[attr-defined]
        return [k.fd for k in selector.get_map().values() if k.events & selectors.EVENT_WRITE]

    async with mqtt_subscribe(mosquitto, _topic(table_id, "event/#")) as seen, running(publisher):
        await publisher.flushed()
        sent = 0
        for round_ in range(5):
            # A packet of aiomqtt's own (its writer asked for, deferred to the next pass)...
            window = publisher._window
            assert window is not None
            window._paho.publish(_topic(table_id, "other"), b"x", qos=0)
            # ... then rows written at once in the same step: a few (within the window), or
            # more than the window holds (the rest sent as the PUBACKs come).
            count = 3 if round_ < 4 else 40
            for _ in range(count):
                publisher.publish("result", payloads.EVENT_RESULT, _result(sent))
                sent += 1
            await publisher.flushed()
            await asyncio.sleep(0.05)
            assert writers() == []
        await seen.wait_for(lambda messages: len(messages) == sent)
    outbox.close()
    reasons = [payloads.decode_envelope(bytes(m.payload)).data["reason"] for m in seen.messages]
    assert reasons == [f"event {n}" for n in range(sent)]


# --- topic aliases ----------------------------------------------------------------------------


def _events(table: str, tap: MqttTap, connection: int) -> list[tuple[str, int | None, str]]:
    """(topic as sent, alias, topic meant) of the table's event PUBLISHes on one connection."""
    prefix = _topic(table, "event/")
    return [
        (p.sent_topic, p.alias, p.topic)
        for p in tap.publishes
        if p.connection == connection and p.topic.startswith(prefix)
    ]


async def _send_events(publisher: Publisher, kinds: list[str]) -> list[int]:
    seqs: list[int] = []
    for kind in kinds:
        data = _result(len(seqs))
        seqs.append(publisher.publish("result", f"event/{kind}", data))
    await publisher.flushed()
    return seqs


async def test_a_topic_sent_again_goes_as_its_alias_and_subscribers_see_it_whole(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path, mqtt_subscribe: Subscribe
) -> None:
    """MQTT 5: a topic's second PUBLISH names it and gives it an alias, later ones send only
    the alias; a subscriber gets every message on its whole topic, in order. After the broker
    restarts, the new connection starts without aliases (the broker forgot them: an alias it
    never heard of would make it drop the connection)."""
    outbox = Outbox(tmp_path)
    tap = MqttTap(mosquitto.host, mosquitto.port)
    kinds = ["touch", "move", "touch", "touch", "move", "clock", "touch"]
    async with tap.running():
        publisher = _publisher(table_id, tap, outbox)
        async with (
            mqtt_subscribe(mosquitto, _topic(table_id, "event/#")) as seen,
            running(publisher),
        ):
            seqs = await _send_events(publisher, kinds)
            await seen.wait_for(lambda messages: len(messages) == len(kinds))
            touch, move, clock = (
                _topic(table_id, f"event/{k}") for k in ("touch", "move", "clock")
            )
            assert _events(table_id, tap, 0) == [
                (touch, None, touch),
                (move, None, move),
                (touch, 1, touch),
                ("", 1, touch),
                (move, 2, move),
                (clock, None, clock),
                ("", 1, touch),
            ]
            assert [m.topic.value for m in seen.messages] == [
                _topic(table_id, f"event/{k}") for k in kinds
            ]
            assert [e.seq for e in _envelopes(seen.messages)] == seqs
            assert tap.protocols == [5]
            # The broker restarts: the tap's connection to it drops, so the publisher's does.
            await mosquitto.arestart()
            await _until(lambda: len(tap.protocols) == 2 and publisher.connected.is_set(), 10)
            async with mqtt_subscribe(mosquitto, _topic(table_id, "event/#")) as again:
                await _send_events(publisher, ["touch", "touch", "touch"])
                await again.wait_for(lambda messages: len(messages) == 3)
            assert _events(table_id, tap, 1) == [
                (touch, None, touch),
                (touch, 1, touch),
                ("", 1, touch),
            ]
    outbox.close()


@pytest.mark.parametrize("maximum", [0, 1])
async def test_no_more_aliases_than_the_broker_allows(
    mosquitto_factory: MosquittoFactory,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    maximum: int,
) -> None:
    """A broker that allows one alias (or none, its CONNACK saying so) gets that many; the
    other topics go whole every time, and nothing is lost."""
    broker = mosquitto_factory(extra_config=f"max_topic_alias {maximum}")
    outbox = Outbox(tmp_path)
    tap = MqttTap(broker.host, broker.port)
    kinds = ["move", "touch", "move", "touch", "move", "touch"]
    async with tap.running():
        publisher = _publisher(table_id, tap, outbox)
        async with mqtt_subscribe(broker, _topic(table_id, "event/#")) as seen, running(publisher):
            await _send_events(publisher, kinds)
            await seen.wait_for(lambda messages: len(messages) == len(kinds))
    outbox.close()
    move, touch = _topic(table_id, "event/move"), _topic(table_id, "event/touch")
    sent = _events(table_id, tap, 0)
    if maximum == 0:
        assert sent == [
            (_topic(table_id, f"event/{k}"), None, _topic(table_id, f"event/{k}")) for k in kinds
        ]
    else:
        assert sent == [
            (move, None, move),
            (touch, None, touch),
            (move, 1, move),
            (touch, None, touch),
            ("", 1, move),
            (touch, None, touch),
        ]
    assert [m.topic.value for m in seen.messages] == [_topic(table_id, f"event/{k}") for k in kinds]


async def test_a_node_that_never_acknowledges_is_left_for_the_next(
    mosquitto: Mosquitto,
    table_id: str,
    tmp_path: Path,
    mqtt_subscribe: Subscribe,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A node that keeps the connection (and its pings) but acknowledges nothing, as a NATS
    node may while a lost node's streams elect leaders: once rows waited ``ack_timeout`` for a
    PUBACK, the daemon connects to the next node of the list and sends them there."""
    outbox = Outbox(tmp_path)
    tap = MqttTap(mosquitto.host, mosquitto.port)
    async with tap.running():
        publisher = Publisher(
            table_id,
            broker_settings(f"{tap.url},{mosquitto.url}"),
            outbox,
            game_id="g1",
            timing=PublisherTiming(reconnect_min=0.1, reconnect_max=0.5, ack_timeout=0.5),
        )
        async with (
            mqtt_subscribe(mosquitto, _topic(table_id, "event/#")) as seen,
            running(publisher),
        ):
            assert publisher.broker == f"{tap.host}:{tap.port}"
            tap.withhold_publishes = True
            seq = publisher.publish("result", "event/result", _result(1))
            await seen.wait_for(lambda messages: len(messages) == 1, within=20)
            assert _envelopes(seen.messages)[0].seq == seq
            assert publisher.broker == f"{mosquitto.host}:{mosquitto.port}"
            await publisher.flushed()
    outbox.close()
    assert any("no PUBACK from MQTT broker" in r.getMessage() for r in caplog.records)
