"""The outbox's rows in flight on one connection, handed to the socket in the step that stored them.

A move's way to the broker is the latency that matters (docs/benchmarks.md). Through aiomqtt's
``publish`` coroutine a stored row needs three passes of the event loop before its bytes leave:
the sender task wakes, the ``publish`` task starts and hands the packet to paho, whose request to
watch the socket for writing is itself deferred (``call_soon_threadsafe``) before the write. Here
the rows are handed to paho and written to the socket at once, in the step that committed them
(:meth:`SendWindow.push`), and paho's PUBACKs are taken from its ``on_publish`` callback.

What stays aiomqtt's: the connection, the reading, the keepalive and everything else it publishes
(status, claim, retained state). The two meet on paho's socket, so :meth:`SendWindow.push`
keeps paho's and the event loop's view of the socket's writer the same:

- while it hands rows to paho, paho's request to watch the socket for writing is only noted;
  the write follows at once (``loop_write``: the rows of one step joined into one ``send``), and
  a write the socket would not take whole is then left to aiomqtt's writer as usual;
- a writer that aiomqtt had already asked for (deferred) before the write is removed once it is
  registered, if paho has nothing left to write: otherwise the loop would wake for a writable
  socket with nothing to write, on every pass, until paho's next packet.

At most :data:`IN_FLIGHT` rows are unacknowledged; rows are deleted in ``seq`` order, each only
after its own PUBACK, so a connection that breaks leaves the rest stored, sent again on the next.

On MQTT 5 the rows' topics are sent once and then as a *topic alias* (:class:`TopicAliases`):
``chessbridge/1/table/t042/event/touch`` is 36 bytes of every touch, and a table sends five or
six messages a move on four topics. Subscribers see no difference: the broker gives them the
whole topic.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import Any, Final, cast

import aiomqtt
import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bridge.mqtt.outbox import Outbox

IN_FLIGHT: Final = 16
"""QoS 1 publishes sent before the oldest is acknowledged (paho queues past its own limit)."""


def _join_publishes(queued: deque[Any], count: int) -> None:
    """The last ``count`` packets paho queued (QoS 1 PUBLISHes, none written yet) as one, so
    that one ``send`` writes them all: one transmission, one wake-up of the broker.

    paho writes each packet with a ``send`` of its own, and each is a transmission of its own
    (with Nagle's algorithm on, the move waited behind the touch's segment). Written whole, a
    QoS 1 PUBLISH only leaves paho's queue (its PUBACK is matched by packet id, as before), so
    the joined packet stands for all of them there. Anything else among them (never the case
    when paho queues what :meth:`SendWindow.push` hands it) leaves them as they are.
    """
    if count < 2:
        return
    packets = [queued[i] for i in range(len(queued) - count, len(queued))]
    if any(
        packet["command"] & 0xF0 != mqtt.PUBLISH or packet["qos"] != 1 or packet["pos"] != 0
        for packet in packets
    ):
        return
    joined = b"".join(packet["packet"] for packet in packets)
    for _ in range(count):
        queued.pop()
    last = packets[-1]
    queued.append({**last, "to_process": len(joined), "packet": joined})


class BrokerLimits:
    """What the broker's CONNACK allowed this connection (MQTT 5; nothing on 3.1.1).

    aiomqtt keeps none of the CONNACK's properties, so paho's ``on_connect`` is wrapped before
    the connection is made (:meth:`watch`).
    """

    def __init__(self) -> None:
        self.topic_alias_maximum = 0
        """The highest topic alias the broker accepts from us; 0: none (the MQTT 5 default)."""

    @classmethod
    def watch(cls, client: aiomqtt.Client) -> BrokerLimits:
        """Limits filled in when ``client`` (not yet connected) receives its CONNACK."""
        limits = cls()
        paho = client._client  # aiomqtt's paho client: see the module doc
        inner = cast("Callable[..., None]", paho.on_connect)

        def on_connect(
            client: mqtt.Client,
            userdata: Any,
            flags: Any,
            reason_code: Any,
            properties: Properties | None = None,
        ) -> None:
            if properties is not None:
                maximum = getattr(properties, "TopicAliasMaximum", 0)
                limits.topic_alias_maximum = maximum if isinstance(maximum, int) else 0
            inner(client, userdata, flags, reason_code, properties)

        paho.on_connect = on_connect
        return limits


class PackedAlias(Properties):
    """A PUBLISH's Topic Alias property, packed once.

    paho packs a message's properties again at every publish, trying each of the 27 property
    names in turn (about 6 µs here, several times that on a CPU woken for the move); the bytes
    of an alias never change. Only :meth:`pack` differs from paho's :class:`Properties`.
    """

    _packed: bytes

    def __init__(self, alias: int) -> None:
        super().__init__(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
        self.TopicAlias = alias  # paho checks the range (1-65535) here
        packed = super().pack()  # type: ignore[no-untyped-call]
        object.__setattr__(self, "_packed", packed)  # paho's __setattr__ takes property names only

    def pack(self) -> bytes:
        """The property's bytes, as paho's ``pack`` writes them."""
        return self._packed


class TopicAliases:
    """The topic aliases of one MQTT 5 connection, client to broker (MQTT 5 §3.3.2.3.4).

    A topic gets an alias the second time it is sent on the connection (so a response sent
    once takes none of the few the broker allows), up to the broker's maximum; that send
    carries the topic and the alias, which the broker then maps; every later send carries the
    alias and an empty topic. An alias is never given to another topic. Aliases live as long
    as the connection (a new one starts with none): make one of these per connection.
    """

    def __init__(self, maximum: int) -> None:
        """``maximum``: the broker's Topic Alias Maximum (0: send every topic whole)."""
        self._maximum = maximum
        self._seen: set[str] = set()
        self._known: dict[str, Properties] = {}
        """Topics whose alias the broker holds: the PUBLISH properties that name it."""

    def __len__(self) -> int:
        """How many aliases are given."""
        return len(self._known)

    def publish_args(self, topic: str) -> tuple[str, Properties | None]:
        """The topic and properties to publish ``topic`` with, now."""
        known = self._known.get(topic)
        if known is not None:
            return "", known
        if len(self._known) >= self._maximum:
            return topic, None
        if topic not in self._seen:
            self._seen.add(topic)
            return topic, None
        self._seen.discard(topic)
        properties = PackedAlias(len(self._known) + 1)
        self._known[topic] = properties
        return topic, properties


class SendWindow:
    """Sends one connection's outbox rows in ``seq`` order and deletes them as they are acked."""

    def __init__(
        self,
        client: aiomqtt.Client,
        outbox: Outbox,
        on_ack: Callable[[], None],
        *,
        topic_alias_maximum: int = 0,
    ) -> None:
        """Take over the PUBACKs of ``client`` (connected); ``on_ack`` is called on each one of
        a row of ours (from paho's reading, in the loop's thread: it should only wake someone).
        ``topic_alias_maximum``: the broker's, from its CONNACK (:class:`BrokerLimits`)."""
        self._paho = client._client  # the socket is paho's: see the module doc
        self._outbox = outbox
        self.aliases = TopicAliases(topic_alias_maximum)
        self._on_ack = on_ack
        self._loop = asyncio.get_running_loop()
        self._inflight: deque[tuple[int, int]] = deque()
        """``(seq, mid)`` handed to paho and not yet deleted, in ``seq`` order."""
        self._sent: set[int] = set()
        """The ``seq`` of :attr:`_inflight`."""
        self._mids: set[int] = set()
        """The paho message ids of :attr:`_inflight` not yet acknowledged."""
        self._acked: set[int] = set()
        self.failed: aiomqtt.MqttError | None = None
        """Why paho refused a row (the connection is gone); nothing more is sent on it."""
        self._aiomqtt_on_publish = cast("Callable[..., None] | None", self._paho.on_publish)
        self._paho.on_publish = self._on_publish

    @property
    def idle(self) -> bool:
        """Nothing in flight."""
        return not self._inflight

    def close(self) -> None:
        """Give the PUBACKs back to aiomqtt alone."""
        self._paho.on_publish = self._aiomqtt_on_publish

    def push(self) -> None:
        """Hand the oldest rows not yet sent to paho (up to the window) and write them out now.

        Only committed rows may be sent: not inside an outbox batch. Never raises for the
        network: a refusal is kept in :attr:`failed` for the sender to raise.
        """
        room = IN_FLIGHT - len(self._inflight)
        if room <= 0 or self.failed is not None or self._outbox.in_batch:
            return
        pending = self._outbox.pending(room + len(self._sent))
        rows = [row for row in pending if row.seq not in self._sent][:room]
        if not rows:
            return
        paho = self._paho
        register = paho.on_socket_register_write
        asked = False

        def note(client: mqtt.Client, userdata: Any, sock: Any) -> None:
            nonlocal asked
            asked = True

        paho.on_socket_register_write = note
        queued = paho._out_packet  # paho's packets not yet written, oldest first
        before = len(queued)
        try:
            aliases = self.aliases
            for row in rows:
                topic, properties = aliases.publish_args(row.topic)
                info = paho.publish(
                    topic, row.payload, qos=1, retain=row.retain, properties=properties
                )
                if info.rc != mqtt.MQTT_ERR_SUCCESS:
                    self.failed = aiomqtt.MqttCodeError(info.rc, "Could not publish message")
                    break
                self._inflight.append((row.seq, info.mid))
                self._sent.add(row.seq)
                self._mids.add(info.mid)
            _join_publishes(queued, len(queued) - before)
            paho.loop_write()
        finally:
            paho.on_socket_register_write = register
        sock = paho.socket()  # a failed write closes it
        if sock is None or register is None:
            return
        if asked and paho.want_write():
            register(paho, paho.user_data_get(), sock)  # the rest is aiomqtt's writer's
        elif not asked:
            # A writer aiomqtt asked for before this write may still be on its way to the loop.
            self._loop.call_soon(self._tidy, sock)

    def settle(self) -> int:
        """Delete the acknowledged rows at the front of the window; how many were deleted."""
        done: list[int] = []
        inflight, acked = self._inflight, self._acked
        while inflight and inflight[0][1] in acked:
            seq, mid = inflight.popleft()
            acked.discard(mid)
            self._sent.discard(seq)
            done.append(seq)
        if done:
            self._outbox.ack_many(done)
        return len(done)

    def _tidy(self, sock: object) -> None:
        paho = self._paho
        current = paho.socket()
        if current is not None and current is sock and not paho.want_write():
            self._loop.remove_writer(current.fileno())

    def _on_publish(
        self,
        client: mqtt.Client,
        userdata: Any,
        mid: int,
        reason_code: Any,
        properties: Any,
    ) -> None:
        if mid in self._mids:
            self._mids.discard(mid)
            self._acked.add(mid)
            self._on_ack()
        elif self._aiomqtt_on_publish is not None:
            self._aiomqtt_on_publish(client, userdata, mid, reason_code, properties)
