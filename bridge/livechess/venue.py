"""``chessbridge livechess --broker LIST``: every table on a venue's broker, as LiveChess serves
a hall's boards.

One MQTT connection follows ``chessbridge/1/table/+/#`` (reconnecting with
:func:`~bridge.mqtt.session.run_sessions`, to the next node of a clustered broker after each
failure) and folds every payload into the hall; the server tells the clients following a table
what changed. The game is each table's retained ``game`` and its events; the physical board
comes from the tables' ``event/touch`` (where they publish them). A ``setup`` of another
position than a game's is refused: a client must not reset an arbiter's game; with
``--allow-setup`` (``[livechess] setup = true``) it is sent to the table as a ``new_game``
request with this connection's credentials, which the broker's ACL must allow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable
from typing import Final

import aiomqtt
import msgspec

from bridge import logs
from bridge.livechess.hall import Hall
from bridge.livechess.origins import DEFAULT_ORIGINS, Origins
from bridge.livechess.server import ListenError, LiveChessServer, start
from bridge.mqtt import session
from bridge.mqtt.requests import NoResponseError, Responses, new_transaction
from bridge.mqtt.session import (
    SubscriptionRefusedError,
    refused_credentials,
    run_sessions,
    subscribe,
)
from bridge.views.model import PayloadError
from bridge.wire import payloads
from bridge.wire.config import BrokerSettings, Config, broker_settings, parse_listen
from drivers.backoff import Backoff

log = logging.getLogger("chessbridge.livechess")

_MQTT_LOGGER: Final = logging.getLogger("chessbridge.livechess.mqtt")
_MQTT_LOGGER.setLevel(logging.CRITICAL)  # outages are said once, plainly, here

PROG: Final = "chessbridge livechess"
TOPICS: Final = f"{payloads.TOPIC_ROOT}/table/+/#"
SETUP_WAIT: Final = 10.0
"""Seconds a table has to answer a setup's ``new_game``."""
_WARNED_LIMIT: Final = 1000


class RefusedError(Exception):
    """The broker refused the login or the subscription: nothing to retry."""


class VenueLink:
    """Follows every table on the broker into ``hall``; sends the setups allowed."""

    def __init__(
        self,
        settings: BrokerSettings,
        hall: Hall,
        changed: Callable[[str], None],
        *,
        reconnect_min: float = 0.5,
        reconnect_max: float = 30.0,
    ) -> None:
        self.nodes = session.Nodes(settings)
        self.hall = hall
        self.changed = changed
        self.identifier = new_transaction("chessbridge-livechess")
        self.responses = Responses()
        self.connected = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._backoff = Backoff(reconnect_min, reconnect_max)
        self._granted = False
        self._started = False
        self._failed = False
        self._warned: set[tuple[str, str]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the tables until ``stop``.

        Raises:
            RefusedError: the broker refused the login (before any connection succeeded) or
                the subscription.
        """
        sessions = asyncio.create_task(
            run_sessions(
                self._session,
                backoff=self._backoff,
                failed=self._failure,
                stop=stop,
                nodes=self.nodes,
            ),
            name="livechess mqtt",
        )
        stopper = asyncio.create_task(stop.wait(), name="livechess stop")
        try:
            await asyncio.wait({sessions, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sessions, stopper):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sessions

    async def _session(self) -> None:
        self._started = False
        try:
            async with session.client(
                self.nodes.current, identifier=self.identifier, logger=_MQTT_LOGGER
            ) as client:
                self._started = True
                try:
                    await subscribe(client, TOPICS, granted_before=self._granted)
                except SubscriptionRefusedError as exc:
                    raise RefusedError(
                        f"MQTT broker {self.nodes.address} {exc}: give this user read access "
                        "to it in the broker's ACL"
                    ) from None
                self._granted = True
                self._backoff.reset()
                self._client = client
                self.connected.set()
                verb = "reconnected to" if self._failed else "connected to"
                log.info("%s MQTT broker %s, following %s", verb, self.nodes.address, TOPICS)
                self._failed = False
                async for message in client.messages:
                    self.handle(message.topic.value, message.payload)
        finally:
            self._client = None
            self.connected.clear()

    def _failure(self, exc: aiomqtt.MqttError, wait: float) -> None:
        if not self._granted and refused_credentials(exc):
            raise RefusedError(
                f"MQTT broker {self.nodes.address} refused the login ({exc}): check [broker] "
                "username/password in the config or CHESSBRIDGE_MQTT_USERNAME/PASSWORD"
            ) from exc
        verb = "lost the connection to" if self._started else "cannot connect to"
        log.warning(
            "%s MQTT broker %s (%s); retrying in %.1f s", verb, self.nodes.address, exc, wait
        )
        self._failed = True

    def handle(self, topic: str, raw: object) -> None:
        """One message: into its table, and the clients told if it changed anything."""
        where = payloads.split_topic(topic)
        if where is None or not isinstance(raw, bytes | bytearray) or not raw:
            return  # not a table's, or a retained topic cleared
        table, suffix = where
        if suffix.startswith(payloads.REQUEST_PREFIX + "/"):
            return
        try:
            envelope = payloads.decode_envelope(bytes(raw))
            if envelope.type == "response":
                self.responses.deliver(envelope)
            taken = self.hall.apply(table, envelope, int(time.time() * 1000))
        except (msgspec.DecodeError, msgspec.ValidationError, PayloadError, OverflowError) as exc:
            self._warn(table, suffix, str(exc))
            return
        if taken:
            self.changed(table)

    def _warn(self, table: str, suffix: str, what: str) -> None:
        """The first unusable payload of each table and topic is said; later ones are not."""
        if (table, suffix) in self._warned or len(self._warned) >= _WARNED_LIMIT:
            return
        self._warned.add((table, suffix))
        log.warning("table %r, topic %r: skipped (%s)", table[:64], suffix[:64], what[:200])

    async def setup(self, table: str, fen: str) -> str | None:
        """Ask ``table`` for a new game from ``fen``; ``None`` once started, else why not."""
        client = self._client
        if client is None:
            return f"not connected to MQTT broker {self.nodes.address}: try again"
        try:
            response = await self.responses.send(
                client,
                table,
                "new_game",
                {"fen": fen},
                transaction=new_transaction("livechess"),
                within=SETUP_WAIT,
            )
        except NoResponseError as exc:
            return str(exc)
        except aiomqtt.MqttError as exc:
            return f"the new_game request could not be sent: {exc}"
        if response.status == "ok":
            return None
        return f"table {table} did not start a new game from {fen}: {response.error}"


async def serve_venue(
    broker: str, listen: str, config: Config, *, allow_setup: bool, stop: asyncio.Event
) -> int:
    """Serve every table on ``broker`` at ``listen`` until ``stop``; the exit status (2: a start
    that cannot work: a bad setting, the port taken, the broker refusing us)."""
    try:
        settings = broker_settings(broker, config.broker)
        session.check_tls(settings)
        host, port = parse_listen(listen)
    except ValueError as exc:
        logs.fatal(str(exc), prog=PROG)
        return 2
    section = config.livechess
    hall = Hall()
    server = LiveChessServer(hall, origins=Origins(section.origins or DEFAULT_ORIGINS))
    link = VenueLink(settings, hall, server.changed)
    if allow_setup or section.setup is True:
        server.setup = link.setup
    try:
        runner, bound = await start(server, host, port)
    except ListenError as exc:
        logs.fatal(str(exc), prog=PROG)
        return 2
    try:
        setup = "new games by setup allowed" if server.setup else "setup of a new game refused"
        print(
            f"{PROG}: serving every table on MQTT broker {settings.address} at "
            f"ws://{host}:{bound}/api/v1.0 ({setup}); Ctrl-C stops",
            file=sys.stderr,
            flush=True,
        )
        await link.run(stop)
    except RefusedError as exc:
        logs.fatal(str(exc), prog=PROG)
        return 2
    finally:
        await runner.cleanup()
    return 0
