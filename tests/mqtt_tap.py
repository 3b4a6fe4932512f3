"""A TCP relay between MQTT clients and a broker that reads what the clients send.

``MqttTap`` listens on a free loopback port and relays every connection to the broker both ways,
byte for byte. It parses the client's side (MQTT 3.1.1 and 5): the bytes of each packet, and of
each PUBLISH the topic as sent, the topic alias it carries and the topic that means (the alias
resolved as the broker resolves it, per connection). Used by the tests that check what goes on
the wire and by the snapshot benchmark, which counts a table's bytes there.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Final

PUBLISH: Final = 3
CONNECT: Final = 1

_FIXED_PROPERTY_SIZES: Final = {0x01: 1, 0x02: 4, 0x23: 2}
"""PUBLISH properties of a fixed size: payload format, message expiry, topic alias."""
_STRING_PROPERTIES: Final = frozenset({0x03, 0x08, 0x09})
"""Content type, response topic, correlation data: a length and bytes."""
_TOPIC_ALIAS: Final = 0x23


@dataclass(frozen=True)
class Publish:
    """One PUBLISH a client sent."""

    at: float
    """When the tap read it (the event loop's clock)."""
    connection: int
    """Which connection of the tap's (0, 1, ... in the order they were accepted)."""
    size: int
    """The whole packet's bytes."""
    sent_topic: str
    """The topic as it was on the wire: empty when only the alias named it."""
    alias: int | None
    topic: str
    """The topic it was published to (the alias resolved)."""


@dataclass
class MqttTap:
    """Relays connections to ``broker_port`` and records what the clients sent."""

    broker_host: str
    broker_port: int
    host: str = "127.0.0.1"
    port: int = 0
    """Where clients connect; known once :meth:`running` has started."""
    publishes: list[Publish] = field(default_factory=list)
    sent_bytes: int = 0
    """Every byte the clients sent, all packets."""
    protocols: list[int] = field(default_factory=list)
    """Each connection's protocol level (4: 3.1.1, 5: MQTT 5), from its CONNECT."""
    _connections: int = 0
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)
    withhold_publishes: bool = False
    """Keep the clients' PUBLISHes from the broker (no PUBACK ever comes; pings still do), as a
    node of a cluster that lost a stream leader may."""

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[MqttTap]:
        server = await asyncio.start_server(self._accept, self.host, self.port)
        self.port = server.sockets[0].getsockname()[1]
        try:
            async with server:
                yield self
        finally:
            server.close()
            for task in self._tasks:
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        number = self._connections
        self._connections += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.broker_host, self.broker_port)
        except OSError:
            writer.close()
            return
        down = asyncio.create_task(_pipe(up_reader, writer))
        self._tasks.add(down)
        try:
            await self._read_client(number, reader, up_writer)
        finally:
            up_writer.close()
            writer.close()
            down.cancel()
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await down

    async def _read_client(
        self, number: int, reader: asyncio.StreamReader, up: asyncio.StreamWriter
    ) -> None:
        aliases: dict[int, str] = {}
        level = 4
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                first = await reader.readexactly(1)
                header = bytearray(first)
                remaining, multiplier = 0, 1
                while True:
                    byte = (await reader.readexactly(1))[0]
                    header.append(byte)
                    remaining += (byte & 0x7F) * multiplier
                    multiplier *= 128
                    if not byte & 0x80:
                        break
                body = await reader.readexactly(remaining)
                if not (self.withhold_publishes and first[0] >> 4 == PUBLISH):
                    up.write(bytes(header) + body)
                    await up.drain()
                size = len(header) + remaining
                self.sent_bytes += size
                kind = first[0] >> 4
                if kind == CONNECT:
                    name_length = int.from_bytes(body[0:2], "big")
                    level = body[2 + name_length]
                    self.protocols.append(level)
                elif kind == PUBLISH:
                    qos = (first[0] >> 1) & 3
                    at = asyncio.get_running_loop().time()
                    self.publishes.append(_publish(at, number, size, body, qos, level, aliases))


def _publish(
    at: float, number: int, size: int, body: bytes, qos: int, level: int, aliases: dict[int, str]
) -> Publish:
    length = int.from_bytes(body[0:2], "big")
    sent = body[2 : 2 + length].decode()
    properties = 2 + length + (2 if qos else 0)
    alias = _alias(body, properties) if level == 5 else None
    if alias is not None and sent:
        aliases[alias] = sent
    topic = aliases.get(alias, "") if alias is not None and not sent else sent
    return Publish(at, number, size, sent, alias, topic)


def _alias(body: bytes, at: int) -> int | None:
    """The Topic Alias among the PUBLISH properties that start at ``at``, if any."""
    length = shift = 0
    while True:
        byte = body[at]
        at += 1
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    end = at + length
    while at < end:
        identifier = body[at]
        at += 1
        if identifier == _TOPIC_ALIAS:
            return int.from_bytes(body[at : at + 2], "big")
        if identifier in _FIXED_PROPERTY_SIZES:
            at += _FIXED_PROPERTY_SIZES[identifier]
        elif identifier in _STRING_PROPERTIES:
            at += 2 + int.from_bytes(body[at : at + 2], "big")
        elif identifier == 0x26:  # user property: two strings
            for _ in range(2):
                at += 2 + int.from_bytes(body[at : at + 2], "big")
        else:  # subscription id (a variable integer) or unknown: nothing more to read
            return None
    return None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()
