"""The MQTT side of one table: the durable outbox drained to the broker, in order, at QoS 1.

:meth:`Publisher.publish` is synchronous and never waits for the network: it gives the payload
its ``seq`` and stores it in the outbox (:mod:`bridge.mqtt.outbox`), then wakes the sender.
:meth:`run` keeps one connection to the broker, reconnecting with capped, jittered exponential
backoff. On every connection it

1. connects with the Last Will ``status`` = ``lost`` (retained, QoS 1);
2. subscribes to ``request/+`` and hands each request to ``on_request``;
3. publishes ``status`` = ``online`` (retained, QoS 1);
4. republishes the last retained ``board`` and ``game`` it holds (the broker may have restarted
   without persistence), unless those are still in the outbox and about to be sent anyway, and
   the retained *descriptions* it was given (:meth:`describe`: the optional index entry and
   Home Assistant discovery), which are neither stored nor numbered;
5. drains the outbox in ``seq`` order, up to 16 messages in flight (:mod:`bridge.mqtt.window`),
   deleting a row only after its PUBACK. A row whose PUBACK never came is sent again on the next
   connection, so subscribers may see it twice and drop the copy by ``(epoch, seq)``; they never
   see messages out of order.

A row stored while connected is written to the socket in the same step (:meth:`Publisher.publish`,
or :meth:`Publisher.send_now` after an outbox batch): a move reaches the broker without waiting
for other tasks of the loop.

:meth:`stop` publishes ``status`` = ``offline`` and disconnects cleanly, so the broker does not
send the Will.

The table's ``claim`` (retained, published on every connection before ``online``) names this
process and when it started; a second daemon for the same table sees it, and the one started
later stops (:class:`TableTakenError`; the other claims the table again).

Status and claim payloads are not stored: they describe the connection they are sent on. Their
``seq`` comes from the same counter, so ``seq`` is increasing but not contiguous (and they may
arrive before stored payloads of lower ``seq``): a connection reserves the ``seq`` of its
``online`` and then of its Will, and a Will the broker never had to send leaves a gap. Failed
connection attempts reuse the reserved pair, so an outage uses up no ``seq``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
from collections.abc import Awaitable, Callable
from typing import Final, Literal

import aiomqtt
import msgspec
from paho.mqtt.subscribeoptions import SubscribeOptions

from bridge.arbiter.facts import Fact
from bridge.mqtt import session
from bridge.mqtt.outbox import Outbox
from bridge.mqtt.session import check_tls, refused_credentials, refused_protocol, run_sessions
from bridge.mqtt.window import BrokerLimits, SendWindow
from bridge.wire import payloads
from bridge.wire.config import BrokerSettings
from drivers.backoff import Backoff

_LOGGER = logging.getLogger(__name__)


class _DroppedConnectionIsAWarning(logging.Filter):
    """paho logs a connection dropped by the broker at ERROR; to us it is an outage that we
    report (WARNING) and recover from, so its record becomes a WARNING too."""

    _TEMPLATES: Final = frozenset({"failed to receive on socket: %s", "timeout on socket: %s"})

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and record.msg in self._TEMPLATES:
            record.levelno = logging.WARNING
            record.levelname = logging.getLevelName(logging.WARNING)
        return True


_MQTT_LOGGER = logging.getLogger(f"{__name__}.mqtt")
_MQTT_LOGGER.addFilter(_DroppedConnectionIsAWarning())


class TableTakenError(RuntimeError):
    """Another daemon, started earlier, runs the same table: this one must not run."""

    def __init__(self, table: str, instance: str, since: str | None) -> None:
        super().__init__(
            f"another chessbridge daemon (instance {instance}, started {since or 'earlier'}) "
            f"already runs table {table} on this broker: stop this one, or give it its own "
            "table id (each table needs exactly one daemon)"
        )
        self.table = table
        self.instance = instance


RequestHandler = Callable[[str, bytes], Awaitable[None]]
"""Called with the command name (the last topic level) and the raw payload of a request."""


class PublisherTiming(msgspec.Struct, frozen=True, kw_only=True):
    """How the publisher keeps its connection: seconds, all of them."""

    keepalive: int = 15
    """The broker sends the Will after 1.5 times this of silence."""
    reconnect_min: float = 0.5
    """First backoff delay."""
    reconnect_max: float = 30.0
    """Cap of the backoff delay."""
    drain_timeout: float = 2.0
    """How long :meth:`Publisher.stop` lets the outbox drain before going offline."""
    ack_timeout: float = 30.0
    """A connection on which rows are in flight and no PUBACK came for this long is given up
    and made again (to the next node of a cluster): a broker node may keep the connection and
    its pings alive and never acknowledge (NATS, while a lost node's streams elect leaders)."""


DEFAULT_TIMING: Final = PublisherTiming()

_SHOWN_BYTES: Final = 200
"""At most this much of a payload from outside is quoted in the log."""
_MAX_QUEUED_REQUESTS: Final = 100


class Publisher:
    """Publishes one table's payloads to the broker from its durable outbox."""

    def __init__(
        self,
        table: str,
        broker: BrokerSettings,
        outbox: Outbox,
        *,
        game_id: str = "",
        on_request: RequestHandler | None = None,
        timing: PublisherTiming = DEFAULT_TIMING,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Set up; nothing touches the network before :meth:`run`.

        Args:
            table: the table id, the topic level under ``chessbridge/1/table/``.
            broker: where the broker is and how to log in (its ``client_id`` defaults to
                ``chessbridge-{table}``: with the documented broker config the broker makes it
                the username anyway), whether to speak MQTT 5 (falling back to 3.1.1 when the
                broker refuses the version) and how long the first connection may wait at
                random (``connect_jitter``).
            outbox: this table's outbox; it allocates every ``seq``.
            game_id: the envelope's ``game``; the daemon updates :attr:`game_id`.
            on_request: receives each ``request/{command}`` (command name, payload bytes).
            timing: keepalive, reconnect backoff and drain time.
            clock: wall-clock seconds for the envelope's ``ts``.

        Raises:
            ValueError: an invalid table id, or TLS files that cannot be used.
        """
        payloads.topic(table, "")  # validates the table id
        self.table = table
        self.game_id = game_id
        self.on_request = on_request
        self.connected = asyncio.Event()
        """Set while connected and announced (``online`` and retained state sent)."""
        self.published_count = 0
        """Outbox rows the broker acknowledged (status payloads not counted)."""

        check_tls(broker)
        self._nodes = session.Nodes(broker)
        self.broker = self._nodes.address
        """``host:port`` of the broker node connected to (or tried next), for logs and the
        ``status``'s ``broker``."""
        self._mqtt311_nodes: set[str] = set()
        """Nodes that refused MQTT 5: spoken to in 3.1.1 from then on."""
        self._client_id = f"chessbridge-{table}" if broker.client_id is None else broker.client_id
        self.instance = os.urandom(8).hex()
        """This process, in its claim to the table (``claim``; see :class:`TableTakenError`)."""
        self._since = payloads.format_ts(clock())
        self._claimed = False
        self._keepalive = timing.keepalive
        self._backoff = Backoff(timing.reconnect_min, timing.reconnect_max)
        self._drain_timeout = timing.drain_timeout
        self._ack_timeout = timing.ack_timeout
        self._clock = clock
        self._outbox = outbox

        self._status_topic = payloads.topic(table, payloads.STATUS)
        self._claim_topic = payloads.topic(table, payloads.CLAIM)
        self._request_filter = payloads.topic(table, f"{payloads.REQUEST_PREFIX}/+")
        self._retained: dict[str, tuple[int, bytes]] = {}
        self._descriptions: dict[str, bytes] = {}
        self._reserved: tuple[int, int] | None = None  # (online seq, Will seq)
        self._wake = asyncio.Event()
        self._window: SendWindow | None = None
        """The rows in flight on the connection, while connected and announced."""
        self._drained = asyncio.Event()
        if outbox.count() == 0:
            self._drained.set()
        self._stopping = asyncio.Event()
        self._done = asyncio.Event()
        self._run_task: asyncio.Task[None] | None = None
        self._session_started = False
        self._requests: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue(_MAX_QUEUED_REQUESTS)
        self.taps: list[Callable[[str, bytes], None]] = []
        """Readers of this table in this process (``run --livechess``'s LiveChess API), called
        with each payload :meth:`publish` stores (its topic suffix and bytes), in ``seq`` order,
        as it is stored: they need no broker, and never block."""
        self._mqtt5 = broker.mqtt5
        """MQTT 5 (Retain As Published, topic aliases) unless the broker speaks only 3.1.1."""
        self._connect_jitter = broker.connect_jitter
        self._problem: str | None = None
        self._status_changed = asyncio.Event()
        self._reasserting = False
        self._claims_before = False
        self._bad_claim_said = False
        self._subscribed = False
        """Whether the broker ever granted the subscriptions (a refusal is the ACL otherwise)."""
        self._refusal_said = False

    @property
    def epoch(self) -> int:
        """The restart counter of this table's outbox."""
        return self._outbox.epoch

    # --- publishing (synchronous, never blocks on the network) --------------------------------

    def publish(
        self,
        type: str,  # noqa: A002  # the envelope's field name
        suffix: str,
        data: msgspec.Struct,
        retain: bool = False,
    ) -> int:
        """Store one payload for ``suffix`` (e.g. ``"event/move"``) and wake the sender.

        Returns its ``seq``. The payload is on disk when this returns, and on its way to the
        broker if connected (inside an outbox batch: from :meth:`send_now` after it).
        """
        topic = payloads.topic(self.table, suffix)
        game = self.game_id
        ts = self._clock()
        built: list[bytes] = []

        def build(epoch: int, seq: int) -> bytes:
            payload = payloads.encode(self.table, game, epoch, seq, ts, type, data)
            built.append(payload)
            return payload

        seq = self._outbox.add(topic, build, retain)
        if retain:
            self._retained[topic] = (seq, built[0])
        self._drained.clear()
        self._wake.set()
        self.send_now()
        for tap in self.taps:
            tap(suffix, built[0])
        return seq

    def send_now(self) -> None:
        """Write what was stored to the broker now, if connected (nothing inside an outbox batch:
        call this after it). Without it the sender still sends it, a few loop passes later."""
        window = self._window
        if window is not None:
            window.push()

    def publish_fact(self, fact: Fact) -> int:
        """Publish one engine fact as its event; returns its ``seq``."""
        type_, suffix, data = payloads.fact_data(fact)
        return self.publish(type_, suffix, data)

    def set_board(self, data: payloads.BoardData) -> int:
        """Publish the retained ``board`` state (republished on every reconnect)."""
        return self.publish("board", payloads.BOARD, data, retain=True)

    def set_game(self, data: payloads.GameData) -> int:
        """Publish the retained ``game`` snapshot (republished on every reconnect)."""
        return self.publish("game", payloads.GAME, data, retain=True)

    def describe(self, topic: str, payload: bytes) -> None:
        """Publish ``payload`` retained on ``topic`` on every connection from the next one on.

        For descriptions that change only with a restart (the index entry, Home Assistant
        discovery): not stored, not numbered, and a broker that refuses them (an ACL without
        them) costs nothing else.
        """
        self._descriptions[topic] = payload

    def set_problem(self, problem: str | None) -> None:
        """Say (or stop saying) in the retained ``status`` what keeps the table from working as
        it should (``data.error``); published at once if connected, and on every connection."""
        if problem != self._problem:
            self._problem = problem
            self._status_changed.set()

    async def flushed(self) -> None:
        """Wait until the outbox is empty: everything published so far was acknowledged."""
        await self._drained.wait()

    # --- the connection ------------------------------------------------------------------------

    async def run(self) -> None:
        """Stay connected and drain the outbox until :meth:`stop` (or cancellation)."""
        if self._run_task is not None:
            raise RuntimeError("Publisher.run() is already running")
        self._run_task = asyncio.current_task()
        self._done.clear()
        worker = asyncio.create_task(self._serve_requests(), name=f"requests {self.table}")
        try:
            if self._connect_jitter > 0:
                with contextlib.suppress(TimeoutError):
                    wait = random.uniform(0.0, self._connect_jitter)
                    await asyncio.wait_for(self._stopping.wait(), wait)
            await run_sessions(
                self._session,
                backoff=self._backoff,
                failed=self._log_failure,
                stop=self._stopping,
                nodes=self._nodes,
                stay=self._refused_mqtt5,
            )
        finally:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
            self._run_task = None
            self._done.set()

    async def stop(self, grace: float = 5.0) -> None:
        """Drain briefly, publish ``offline``, disconnect cleanly and wait for :meth:`run`.

        Payloads still in the outbox stay there for the next run.
        """
        self._stopping.set()
        self._wake.set()
        task = self._run_task
        if task is None:
            return
        try:
            await asyncio.wait_for(self._done.wait(), grace)
        except TimeoutError:
            _LOGGER.warning(
                "MQTT publisher of table %s did not stop in time; cancelling", self.table
            )
            task.cancel()
            await self._done.wait()

    async def _session(self) -> None:
        """One connection: announce, then send and receive until it fails or we stop."""
        node = self._nodes.current
        self.broker = node.address
        online_seq, will = self._reserve_statuses()
        client = session.client(
            node,
            identifier=self._client_id,
            will=aiomqtt.Will(self._status_topic, will, qos=1, retain=True),
            keepalive=self._keepalive,
            logger=_MQTT_LOGGER,
            mqtt5=self._speaks_mqtt5,
        )
        limits = BrokerLimits.watch(client)
        self._session_started = False
        async with client:
            self._session_started = True
            self._backoff.reset()
            self._reserved = None  # used now; the next connection gets new seqs
            _LOGGER.info("connected to MQTT broker %s as %r", self.broker, self._client_id)
            # Listening from the start: the claim retained arrives during the announce, and a
            # connection lost then ends the session at once (its error read, not left behind).
            receiver = asyncio.create_task(self._receive(client))
            try:
                await self._announce_while(receiver, client, online_seq)
                # From here on a row stored is written at once (send_now), also before the
                # sender task first runs.
                self._window = SendWindow(
                    client,
                    self._outbox,
                    on_ack=self._wake.set,
                    topic_alias_maximum=limits.topic_alias_maximum,
                )
                self.connected.set()
                await self._serve(client, self._window, receiver)
            except asyncio.CancelledError:
                with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                    await asyncio.wait_for(self._say_offline(client), 1.0)
                raise
            finally:
                receiver.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await receiver
                self.connected.clear()
                if self._window is not None:
                    self._window.close()
                    self._window = None
            await self._say_offline(client)
            _LOGGER.info("disconnecting from MQTT broker %s", self.broker)

    async def _announce_while(
        self, receiver: asyncio.Task[None], client: aiomqtt.Client, online_seq: int
    ) -> None:
        """``_announce``, unless the connection drops first (the receiver raises MqttError)."""
        announce = asyncio.create_task(self._announce(client, online_seq))
        try:
            await asyncio.wait({announce, receiver}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not announce.done():
                announce.cancel()
                with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                    await announce
        if receiver.done():
            receiver.result()  # the connection dropped: MqttError
            raise aiomqtt.MqttError("the broker closed the connection during the announce")
        announce.result()

    async def _announce(self, client: aiomqtt.Client, online_seq: int) -> None:
        # One SUBSCRIBE for both, before anything is said: the table's claim (a second daemon
        # for this table claims it there; without Retain As Published, so that a claim made now,
        # retain 0, is told from the last one, retain 1) and the requests (with Retain As
        # Published: a request published retained keeps its flag also when it arrives live, so
        # that it is recognised and never acted on).
        self._claims_before = self._claimed
        if self._speaks_mqtt5:
            granted = await client.subscribe(
                [
                    (self._claim_topic, SubscribeOptions(qos=1)),
                    (self._request_filter, SubscribeOptions(qos=1, retainAsPublished=True)),
                ]
            )
        else:
            granted = await client.subscribe([(self._claim_topic, 1), (self._request_filter, 1)])
        if any((session.reason_code(code) or 0) >= 0x80 for code in granted):
            if self._subscribed:
                # Granted before, so not the ACL: a node of a cluster that cannot serve it now
                # (NATS while its JetStream elects a leader). Deaf to requests: connect again.
                raise aiomqtt.MqttError("the subscription to the table's requests was refused")
            if not self._refusal_said:
                self._refusal_said = True
                _LOGGER.warning(
                    "MQTT broker %s refused table %s's subscription to its requests: arbiters' "
                    "commands will not reach it; give its user read access in the broker's ACL",
                    self.broker,
                    self.table,
                )
        else:
            self._subscribed = True
        self._status_changed.clear()  # the online below says it
        await self._say_online(client, online_seq)

    async def _say_online(self, client: aiomqtt.Client, seq: int | None = None) -> None:
        """Our claim to the table, ``status`` = ``online``, then the retained state we hold."""
        self._reasserting = False
        claim = payloads.encode(
            self.table,
            self.game_id,
            self._outbox.epoch,
            self._outbox.next_seq(),
            self._clock(),
            "claim",
            payloads.ClaimData(instance=self.instance, since=self._since),
        )
        messages = [(self._status_topic, self._status("online", seq))]
        messages += [
            (topic, payload)
            for topic, (retained_seq, payload) in self._retained.items()
            if not self._outbox.is_pending(retained_seq)
        ]
        messages += list(self._descriptions.items())

        async def claim_table() -> None:
            await client.publish(self._claim_topic, claim, qos=1, retain=True)
            # Only once the broker holds it: until then the claim it keeps may still be the
            # last process's (the broker stopped before it took ours), which the next
            # connection must not take for a rival's.
            self._claimed = True

        # Sent in this order (the claim first), without waiting for each acknowledgement before
        # the next.
        await asyncio.gather(
            claim_table(),
            *(client.publish(topic, payload, qos=1, retain=True) for topic, payload in messages),
        )

    async def _serve(
        self, client: aiomqtt.Client, window: SendWindow, receiver: asyncio.Task[None]
    ) -> None:
        """Send and receive until the connection fails (raises) or :meth:`stop` (returns)."""
        sender = asyncio.create_task(self._send(window))
        statuses = asyncio.create_task(self._send_status_changes(client))
        watchdog = asyncio.create_task(self._watch_acks(window))
        stopping = asyncio.create_task(self._stopping.wait())
        tasks = {receiver, sender, statuses, watchdog, stopping}
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            if done == {stopping}:
                # Give the outbox a moment to drain before going offline.
                done, _ = await asyncio.wait(
                    {receiver, sender, statuses, watchdog},
                    timeout=self._drain_timeout,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            for task in done:
                task.result()  # the receiver and a failed sender raise MqttError
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _send(self, window: SendWindow) -> None:
        """Drain the outbox in seq order; return once it is empty and we are stopping.

        Several QoS 1 publishes are in flight at once (the broker keeps their order): a move
        does not wait for the PUBACK of the touch before it. Rows are deleted in seq order, each
        only after its own PUBACK; a broken connection leaves the rest stored. Rows stored while
        this runs are written at once by :meth:`send_now`; this task deletes the acknowledged
        ones and sends what the window had no room for.
        """
        while True:
            self._wake.clear()
            self.published_count += window.settle()
            window.push()
            if window.failed is not None:
                raise window.failed
            if window.idle:
                self._drained.set()
                if self._stopping.is_set():
                    return
            await self._wake.wait()

    async def _watch_acks(self, window: SendWindow) -> None:
        """Raise ``MqttError`` once rows were in flight for :attr:`PublisherTiming.ack_timeout`
        with no PUBACK meanwhile (the rows stay stored and go again on the next connection)."""
        while True:
            acked = self.published_count
            busy = not window.idle
            await asyncio.sleep(self._ack_timeout)
            if busy and not window.idle and self.published_count == acked:
                raise aiomqtt.MqttError(
                    f"no PUBACK from MQTT broker {self.broker} in {self._ack_timeout:.0f} s "
                    "with messages in flight"
                )

    async def _send_status_changes(self, client: aiomqtt.Client) -> None:
        """Publish ``status`` again whenever :meth:`set_problem` changes what it says, or our
        claim to the table must be made again (with the retained state)."""
        while True:
            await self._status_changed.wait()
            self._status_changed.clear()
            if self._reasserting:
                await self._say_online(client)
            else:
                await client.publish(self._status_topic, self._status("online"), qos=1, retain=True)

    async def _receive(self, client: aiomqtt.Client) -> None:
        """Queue each request for the handler; raises MqttError when the connection drops."""
        async for message in client.messages:
            if message.topic.value == self._claim_topic:
                self._on_claim(bytes(message.payload), live=not message.retain)
                continue
            command = message.topic.value.rsplit("/", 1)[-1]
            if message.retain:
                # A retained command would run again on every reconnect: never act on one.
                _LOGGER.warning("ignoring retained request %r on table %s", command, self.table)
                continue
            try:
                self._requests.put_nowait((command, bytes(message.payload)))
            except asyncio.QueueFull:
                _LOGGER.warning(
                    "too many requests queued on table %s; dropping %r", self.table, command
                )

    def _on_claim(self, raw: bytes, *, live: bool) -> None:
        """Another daemon's claim to this table: of the two, the one started later goes.

        The claim found at subscription before the broker ever confirmed ours is the previous
        process's (dead: a restart); any claim after ours is a second daemon. Two daemons with
        one client id take each other's connection in turn and never overlap: each finds the
        other's claim when it comes back, so the claim has a topic of its own, which no Last
        Will overwrites.
        """
        if not raw:  # the retained claim cleared: nobody's claim
            return
        try:
            claim = payloads.data_as(payloads.decode_envelope(raw), payloads.ClaimData)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            # Not a claim a daemon makes (its text is from outside, escaped by the log): never
            # a reason to stop. Said once; a flood, or one retained and received again on every
            # connection, only at DEBUG.
            level = logging.DEBUG if self._bad_claim_said else logging.WARNING
            self._bad_claim_said = True
            _LOGGER.log(
                level,
                "ignoring a message on table %s's claim topic that is not a daemon's claim "
                "(%s): %s",
                self.table,
                exc,
                raw[:_SHOWN_BYTES].decode(errors="replace"),
            )
            return
        other = claim.instance
        if other == self.instance or (not live and not self._claims_before):
            return
        if (claim.since, other) < (self._since, self.instance):
            raise TableTakenError(self.table, other, claim.since)
        _LOGGER.warning(
            "another chessbridge daemon (instance %s, started %s) claimed table %s; it started "
            "later and gives way: claiming the table again",
            other,
            claim.since,
            self.table,
        )
        self._reasserting = True
        self._status_changed.set()

    async def _serve_requests(self) -> None:
        """Hand requests to ``on_request`` one at a time, in arrival order."""
        while True:
            command, raw = await self._requests.get()
            handler = self.on_request
            if handler is None:
                _LOGGER.debug("no request handler; dropping %r", command)
                continue
            try:
                await handler(command, raw)
            except Exception:
                # The one boundary where any handler failure is caught: log it and go on.
                _LOGGER.exception("request %r on table %s failed", command, self.table)

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        await client.publish(self._status_topic, self._status("offline"), qos=1, retain=True)

    def _status(self, state: Literal["online", "offline", "lost"], seq: int | None = None) -> bytes:
        if seq is None:
            seq = self._outbox.next_seq()
        problem = self._problem if state == "online" else None
        return payloads.encode_status(
            self.table,
            self.game_id,
            self._outbox.epoch,
            seq,
            self._clock(),
            state,
            problem,
            broker=self.broker,
        )

    def _reserve_statuses(self) -> tuple[int, bytes]:
        """The ``online`` seq and the Will (``lost``, the next seq) of the next connection.

        Kept until a connection succeeds, so failed attempts use up no seq; ``online`` comes
        first so that a Will always has a higher seq than the ``online`` it ends.
        """
        if self._reserved is None:
            online_seq = self._outbox.next_seq()
            self._reserved = (online_seq, self._outbox.next_seq())
        online_seq, lost_seq = self._reserved
        return online_seq, self._status("lost", lost_seq)  # naming the node it is left with

    @property
    def _speaks_mqtt5(self) -> bool:
        """Whether the next connection (to the current node) speaks MQTT 5."""
        return self._mqtt5 and self.broker not in self._mqtt311_nodes

    def _refused_mqtt5(self, exc: aiomqtt.MqttError) -> bool:
        """A node that refuses MQTT 5 is not a dead node: it is asked again, in 3.1.1."""
        return self._speaks_mqtt5 and not self._session_started and refused_protocol(exc)

    def _log_failure(self, exc: aiomqtt.MqttError, wait: float) -> None:
        if self._refused_mqtt5(exc):
            self._mqtt311_nodes.add(self.broker)
            # Said once; the other nodes of a cluster that speak 3.1.1 only, at INFO.
            _LOGGER.log(
                logging.INFO if len(self._mqtt311_nodes) > 1 else logging.WARNING,
                "MQTT broker %s does not speak MQTT 5; using 3.1.1, where a retained request "
                "that arrives live cannot be told from another (use Mosquitto 2 for that)",
                self.broker,
            )
        elif refused_credentials(exc):
            _LOGGER.error(
                "MQTT broker %s refused the connection (%s): check username/password in the "
                "config or environment; retrying in %.1f s",
                self.broker,
                exc,
                wait,
            )
        elif self._session_started:
            _LOGGER.warning(
                "lost the connection to MQTT broker %s (%s); reconnecting in %.1f s",
                self.broker,
                exc,
                wait,
            )
        else:
            _LOGGER.warning(
                "cannot connect to MQTT broker %s (%s); retrying in %.1f s", self.broker, exc, wait
            )
