"""The relay's one MQTT connection: every table's topics in; replays and arbiters' requests out.

Subscribes to ``chessbridge/1/table/+/#`` (reconnecting with :func:`~bridge.mqtt.session.
run_sessions`), folds each payload into the :class:`~bridge.relay.room.Room`, keeps it in the
:class:`~bridge.relay.store.Store`, and tells the server and the pusher which table changed.
A payload that is not an envelope of ours (malformed, or a foreign publisher on our topics) is
logged once per table and topic, escaped, and skipped. Every second, tables with a ``seq`` gap
(:class:`~bridge.relay.gaps.Gaps`), with a game joined under way whose earlier events this
relay never got (:class:`~bridge.relay.gaps.Backfill`), or with a move waiting for the position
it was played from (:class:`~bridge.relay.gaps.Wanted`), are asked for a ``replay``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Final

import aiomqtt
import msgspec

from bridge.mqtt import session
from bridge.mqtt.requests import NoResponseError, Responses, new_transaction
from bridge.mqtt.session import (
    SubscriptionRefusedError,
    refused_credentials,
    run_sessions,
    subscribe,
)
from bridge.relay.gaps import ASK_TIMES
from bridge.relay.room import Room
from bridge.relay.store import Row, Store
from bridge.views.model import PayloadError, move_label
from bridge.wire import payloads, requests
from bridge.wire.commands import Response
from bridge.wire.config import BrokerSettings
from drivers.backoff import Backoff

log = logging.getLogger("chessbridge.relay")

_MQTT_LOGGER: Final = logging.getLogger("chessbridge.relay.mqtt")
_MQTT_LOGGER.setLevel(logging.CRITICAL)  # we report outages ourselves, once, plainly

GAP_CHECK: Final = 1.0
"""Seconds between two looks for ``seq`` gaps."""
_WARNED_LIMIT: Final = 10_000


class RefusedError(Exception):
    """The broker refused our credentials or our subscription: nothing to retry."""


class RelayLink:
    """Subscribed to every table; sends replays and the page's commands."""

    def __init__(
        self,
        settings: BrokerSettings,
        room: Room,
        *,
        store: Store | None = None,
        changed: Callable[[str], None] | None = None,
        identifier: str | None = None,
        clock: Callable[[], float] = time.time,
        reconnect_min: float = 0.5,
        reconnect_max: float = 30.0,
    ) -> None:
        self.settings = settings
        self.nodes = session.Nodes(settings)
        """The broker node connected to (or tried next): ``nodes.address``."""
        self.room = room
        self.store = store
        self.changed = changed
        self.identifier = identifier or new_transaction("chessbridge-relay")
        self.clock = clock
        self.connected = asyncio.Event()
        self.responses = Responses()
        self.messages = 0
        """Payloads received (duplicates included)."""
        self._client: aiomqtt.Client | None = None
        self._backoff = Backoff(reconnect_min, reconnect_max)
        self._warned: set[tuple[str, str]] = set()
        self._ever_connected = False
        self._started = False
        self._failed = False

    # -- the connection ------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Stay subscribed until ``stop``; asks tables with gaps for a replay meanwhile.

        Raises:
            RefusedError: the broker refused the credentials (before any connection succeeded)
                or the subscription.
        """
        gaps = asyncio.create_task(self._gap_loop(), name="relay gaps")
        try:
            await run_sessions(
                lambda: self._session(stop),
                backoff=self._backoff,
                failed=self._failure,
                stop=stop,
                nodes=self.nodes,
            )
        finally:
            gaps.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gaps

    async def _session(self, stop: asyncio.Event) -> None:
        self._started = False
        try:
            async with session.client(
                self.nodes.current, identifier=self.identifier, keepalive=30, logger=_MQTT_LOGGER
            ) as client:
                self._started = True
                topics = f"{payloads.TOPIC_ROOT}/table/+/#"
                try:
                    await subscribe(client, topics, granted_before=self._ever_connected)
                except SubscriptionRefusedError as exc:
                    raise RefusedError(
                        f"MQTT broker {self.nodes.address} {exc}: give the relay's user read "
                        "access to it in the broker's ACL"
                    ) from None
                self._backoff.reset()
                self._client = client
                self.connected.set()
                if self._failed and self._ever_connected:
                    log.warning("reconnected to MQTT broker %s", self.nodes.address)
                else:
                    log.info(
                        "connected to MQTT broker %s, following %s", self.nodes.address, topics
                    )
                self._ever_connected = True
                self._failed = False
                receiver = asyncio.create_task(self._receive(client))
                stopper = asyncio.create_task(stop.wait())
                try:
                    done, _ = await asyncio.wait(
                        {receiver, stopper}, return_when=asyncio.FIRST_COMPLETED
                    )
                    if receiver in done:
                        receiver.result()
                finally:
                    for task in (receiver, stopper):
                        task.cancel()
                    await asyncio.gather(receiver, stopper, return_exceptions=True)
        finally:
            self._client = None
            self.connected.clear()

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            self.handle(message.topic.value, message.payload, retained=message.retain)

    def _failure(self, exc: aiomqtt.MqttError, wait: float) -> None:
        if not self._ever_connected and refused_credentials(exc):
            raise RefusedError(
                f"MQTT broker {self.nodes.address} refused the relay's login ({exc}): check "
                "[broker] username/password in the config or CHESSBRIDGE_MQTT_USERNAME/PASSWORD"
            ) from exc
        verb = "lost the connection to" if self._started else "cannot connect to"
        log.warning(
            "%s MQTT broker %s (%s); retrying in %.1f s", verb, self.nodes.address, exc, wait
        )
        self._failed = True

    # -- payloads ------------------------------------------------------------------------------

    def handle(self, topic: str, raw: object, *, retained: bool = False) -> bool:
        """One message: decode, fold into its table, keep it; whether anything changed."""
        where = payloads.split_topic(topic)
        if where is None:
            return False
        table, suffix = where
        if suffix.partition("/")[0] == payloads.REQUEST_PREFIX:
            return False  # requests are not the table's state
        self.messages += 1
        if not isinstance(raw, bytes | bytearray) or not raw:
            if raw not in (b"", bytearray()):
                self._warn(table, suffix, f"unreadable payload of type {type(raw).__name__}")
            return False  # an empty retained payload clears a topic
        data = bytes(raw)
        try:
            envelope = payloads.decode_envelope(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self._warn(table, suffix, f"not a chessbridge payload ({exc}): {data[:80]!r}")
            return False
        if envelope.table != table:
            self._warn(table, suffix, f"payload names table {envelope.table[:40]!r}")
            return False
        if envelope.type == "response":
            self.responses.deliver(envelope)
        now = self.clock()
        try:
            changed = self.room.apply(
                table, envelope, suffix=suffix, received=now, retained=retained
            )
        except PayloadError as exc:
            self._warn(table, suffix, f"malformed {envelope.type} payload ({exc})")
            return False
        except OverflowError as exc:
            self._warn("*", "*", str(exc))
            return False
        if not changed:
            return False
        if self.store is not None and envelope.type != "touch":
            self.store.add(Row(table, envelope.game, now, suffix, retained, data))
        if self.changed is not None:
            self.changed(table)
        return True

    def _warn(self, table: str, suffix: str, what: str) -> None:
        """Log the first problem of each table and topic; later ones are skipped quietly."""
        key = (table, suffix)
        if key in self._warned or len(self._warned) >= _WARNED_LIMIT:
            return
        self._warned.add(key)
        log.warning(
            "table %r, topic %r: %s; skipped (further ones on this topic are skipped silently)",
            table[:64],
            suffix[:64],
            what,
        )

    # -- requests ------------------------------------------------------------------------------

    async def request(
        self,
        table: str,
        command: str,
        fields: Mapping[str, object],
        *,
        by: str | None = None,
        within: float = 10.0,
    ) -> Response:
        """Send an arbiter's command to ``table`` and wait for its response.

        Raises:
            RequestError: the request is not valid.
            NoResponseError: not connected, or no response in time.
        """
        client = self._client
        if client is None:
            raise NoResponseError(f"not connected to MQTT broker {self.nodes.address}")
        transaction = new_transaction("relay")
        known = self.room.table(table)
        if known is not None and by is not None:
            known.expect(transaction, by)
        try:
            return await self.responses.send(
                client, table, command, fields, transaction=transaction, within=within
            )
        except aiomqtt.MqttError as exc:
            raise NoResponseError(f"the request could not be sent: {exc}") from exc

    async def _gap_loop(self) -> None:
        while True:
            await asyncio.sleep(GAP_CHECK)
            await self.ask_replays()

    async def ask_replays(self) -> int:
        """Ask each table with a ``seq`` gap, a game joined under way, or a move waiting for its
        position, for a replay (not waiting for the answers)."""
        client = self._client
        if client is None:
            return 0
        now = self.clock()
        asked = 0
        for table in list(self.room.tables.values()):
            gap = table.gaps.due(now)
            earlier = table.backfill_due(now)
            needed = table.needs_due(now)
            if gap is None and earlier is None and needed is None:
                continue
            # One replay resends everything from its from_seq on: the lowest one covers all.
            from_seq = min(seq for seq in (gap, earlier, needed) if seq is not None)
            table.gaps.asked(now)
            if needed is not None:
                table.needs_asked(now)
                waiting = table.waiting()
                log.info(
                    "table %s: no payload gives the position move %s was played from; "
                    "asking for a replay from seq %d (%d of %d)",
                    table.table,
                    "?" if waiting is None else move_label(waiting.ply, waiting.san, waiting.color),
                    from_seq,
                    table.wanted.times,
                    ASK_TIMES,
                )
            if earlier is not None:
                table.backfill_asked(now)
                log.info(
                    "table %s: game %s joined under way (%d moves without their events); "
                    "asking for a replay from seq %d",
                    table.table,
                    table.game_id,
                    len(table.unheard()),
                    from_seq,
                )
            elif gap is not None:
                log.info(
                    "table %s: payloads from seq %d missed; asking for a replay",
                    table.table,
                    from_seq,
                )
            payload = requests.build(
                "replay",
                {"from_seq": from_seq},
                transaction=new_transaction("relay-replay"),
                expires_at=self.clock() + requests.EXPIRY,
            )
            try:
                await client.publish(
                    payloads.topic(table.table, f"{payloads.REQUEST_PREFIX}/replay"),
                    payload,
                    qos=1,
                )
            except (aiomqtt.MqttError, ValueError) as exc:
                log.warning("table %s: could not ask for a replay (%s)", table.table, exc)
                continue
            asked += 1
        return asked
