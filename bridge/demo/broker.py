"""The embedded MQTT broker (amqtt, the ``demo`` extra): the demo's, and ``chessbridge broker``.

A broker for trying chessbridge on one machine with nothing else installed: anonymous, in
memory, MQTT 3.1.1 only. A venue runs Mosquitto (docs/mosquitto/). amqtt is imported only
here, when a broker is started: nothing on the daemon's path loads it.

amqtt cannot parse an MQTT 5 CONNECT that carries a Will (the daemon's): it waits for bytes that
never come, and the client times out without learning why. So the first bytes of each connection
are read here: an MQTT 5 CONNECT is refused at once with "unacceptable protocol version", as
amqtt itself answers one without a Will, and ``chessbridge run`` falls back to MQTT 3.1.1; any
other connection is handed to amqtt with those bytes in front.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sys
from typing import Any, Final

log = logging.getLogger("chessbridge.broker")

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 1883
"""The port ``chessbridge run`` and ``watch`` look for a broker on when given no ``--broker``."""

LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "0.0.0.0", "::", "::1"})
"""Bind addresses that ``mqtt://localhost`` reaches."""


class BrokerError(Exception):
    """The broker cannot start; the message says why."""


class BrokerMissingError(BrokerError):
    """amqtt, the ``demo`` extra, is not installed."""


def port_free(host: str, port: int) -> bool:
    """Whether a listener could bind ``host:port`` now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def free_port(host: str = DEFAULT_HOST) -> int:
    """A port of ``host`` that was free a moment ago."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def url_of(host: str, port: int) -> str:
    """The URL a client on this machine uses for a broker bound to ``host:port``."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    shown = f"[{host}]" if ":" in host else host
    return f"mqtt://{shown}:{port}"


MQTT5_LEVEL: Final = 5
REFUSE_PROTOCOL: Final = b"\x20\x02\x00\x01"
"""CONNACK, return code 1: unacceptable protocol version (MQTT 3.1.1 §3.2.2.3)."""


async def _connect_head(reader: asyncio.StreamReader) -> tuple[bytes, int | None]:
    """The first bytes of a CONNECT, up to its protocol level, and that level (``None``: not a
    CONNECT, or the connection ended before it)."""
    head = bytearray()
    try:
        head += await reader.readexactly(1)
        if head[0] != 0x10:
            return bytes(head), None
        for _ in range(4):  # the remaining length, 1 to 4 bytes
            head += await reader.readexactly(1)
            if not head[-1] & 0x80:
                break
        size = await reader.readexactly(2)
        head += size
        head += await reader.readexactly(min(int.from_bytes(size, "big"), 6))  # MQTT, MQIsdp
        head += await reader.readexactly(1)
    except asyncio.IncompleteReadError as exc:
        return bytes(head) + exc.partial, None
    return bytes(head), head[-1]


def _broker_class() -> type[Any]:
    """amqtt's broker, refusing MQTT 5 connections with a CONNACK (see the module's text)."""
    from amqtt.adapters import ReaderAdapter, StreamWriterAdapter
    from amqtt.broker import Broker

    class Replayed(ReaderAdapter):  # type: ignore[misc]  # amqtt ships no type hints
        """A connection's stream with the bytes already read put back in front."""

        def __init__(self, head: bytes, reader: asyncio.StreamReader) -> None:
            self._head = head
            self._reader = reader

        async def read(self, n: int = -1) -> bytes:
            if n < 0:
                head, self._head = self._head, b""
                return head + await self._reader.read(-1)
            taken, self._head = self._head[:n], self._head[n:]
            if len(taken) < n:
                taken += await self._reader.readexactly(n - len(taken))
            return taken

        def feed_eof(self) -> None:
            self._reader.feed_eof()

    class EmbeddedAmqtt(Broker):  # type: ignore[misc]
        """amqtt's broker, which knows its connections, to cut them off when it closes."""

        def __init__(self, config: dict[str, Any]) -> None:
            super().__init__(config)
            self.connections: set[asyncio.StreamWriter] = set()
            self.closing = asyncio.Event()
            self.idle = asyncio.Event()
            """Set while no connection is open."""
            self.idle.set()

        async def stream_connected(
            self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, listener_name: str
        ) -> None:
            if self.closing.is_set():  # a client reconnecting while the broker closes
                writer.transport.abort()
                return
            self.connections.add(writer)
            self.idle.clear()
            try:
                head, level = await _connect_head(reader)
                if self.closing.is_set():
                    return
                if level == MQTT5_LEVEL:
                    writer.write(REFUSE_PROTOCOL)
                    writer.close()
                    return
                await self.external_connected(
                    Replayed(head, reader), StreamWriterAdapter(writer), listener_name
                )
            finally:
                self.connections.discard(writer)
                if not self.connections:
                    self.idle.set()

        def cut_off(self) -> None:
            """Drop every connection at once, without a word to its client."""
            for connection in list(self.connections):
                connection.transport.abort()

    return EmbeddedAmqtt


CLOSE_GRACE: Final = 2.0
"""Seconds the broker's shutdown may wait for its clients before it cuts them off."""


class EmbeddedBroker:
    """An amqtt broker listening on ``host:port`` until :meth:`close`."""

    def __init__(self, broker: Any, host: str, port: int) -> None:  # amqtt ships no type hints
        self._broker = broker
        self.host = host
        self.port = port

    @property
    def url(self) -> str:
        """The URL to give ``chessbridge run``, ``watch``, ``relay`` (``--broker``)."""
        return url_of(self.host, self.port)

    @classmethod
    async def start(cls, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> EmbeddedBroker:
        """Start listening on ``host:port`` (``port`` 0: a free one).

        Raises:
            BrokerMissingError: amqtt (the ``demo`` extra) is not installed.
            BrokerError: it cannot listen there (the port is taken, the address not this
                machine's).
        """
        try:
            broker_class = _broker_class()  # amqtt: the `demo` extra
        except ImportError as exc:
            raise BrokerMissingError("the embedded MQTT broker (amqtt) is not installed") from exc

        if port == 0:
            port = free_port(host)
        for name in ("amqtt", "transitions"):
            logging.getLogger(name).setLevel(logging.ERROR)
        bind = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        config = {
            "listeners": {"default": {"type": "tcp", "bind": bind}},
            "plugins": {
                "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
            },
        }
        broker = broker_class(config)
        try:
            await broker.start()
        except Exception as exc:
            raise BrokerError(
                f"the embedded MQTT broker could not start on {bind} ({exc})"
            ) from exc
        return cls(broker, host, port)

    async def close(self) -> None:
        """Stop listening and let the clients go, waiting for none of them (bounded).

        amqtt's own shutdown closes each client's session and waits until it is over, and its
        listener until every connection is gone (Python 3.12 and later): a client that stays
        connected (a ``watch``, a relay), or one caught between its TCP connection and its
        CONNECT, could keep it waiting for ever. What is still connected after
        :data:`CLOSE_GRACE` seconds is cut off; a shutdown still not over after as long again is
        abandoned.
        """
        broker = self._broker
        broker.closing.set()
        shutdown = asyncio.create_task(broker.shutdown(), name="embedded broker shutdown")
        done, _ = await asyncio.wait({shutdown}, timeout=CLOSE_GRACE)
        if not done:
            log.debug("embedded broker: cutting off the clients still connected")
        # Also after a shutdown that is over: on Python 3.11 it leaves a connection that never
        # sent its CONNECT open, to be cancelled (with a traceback) when the event loop ends.
        logging.getLogger("amqtt").setLevel(logging.CRITICAL)  # its words on each of them
        broker.cut_off()
        if not done:
            done, _ = await asyncio.wait({shutdown}, timeout=CLOSE_GRACE)
        with contextlib.suppress(TimeoutError):  # each connection's task sees its end
            await asyncio.wait_for(broker.idle.wait(), CLOSE_GRACE)
        if not done:
            log.debug("embedded broker: shutdown abandoned")
            shutdown.cancel()
            await asyncio.wait({shutdown}, timeout=CLOSE_GRACE)
            return
        shutdown.result()


async def start_local(port: int = DEFAULT_PORT, *, prog: str) -> EmbeddedBroker:
    """The embedded broker on ``127.0.0.1:port`` (``port`` 0: a free one), or on a free port if
    that one is taken, which is said on stderr as ``PROG: ...``.

    Raises:
        BrokerMissingError: amqtt (the ``demo`` extra) is not installed.
        BrokerError: it cannot listen there.
    """
    wanted = port
    if port != 0 and not port_free(DEFAULT_HOST, port):
        port = free_port()
    broker = await EmbeddedBroker.start(DEFAULT_HOST, port)
    if port != wanted and wanted != 0:
        print(
            f"{prog}: port {wanted} is taken (another broker?); the embedded broker uses {port}",
            file=sys.stderr,
        )
    return broker


async def serve(host: str, port: int, stop: asyncio.Event) -> int:
    """``chessbridge broker``: the embedded broker until ``stop``; the exit status.

    Prints the broker's URL on stdout (the first line), and on stderr how to use it.

    Returns:
        0 once stopped, 2 when it cannot start (amqtt missing, the port taken).
    """
    if port != 0 and not port_free(host, port):
        print(
            f"chessbridge broker: {host}:{port} is in use (a broker is running there already? "
            "then chessbridge run and watch can use that one); another port: --port N, or "
            "--port 0 for a free one",
            file=sys.stderr,
        )
        return 2
    try:
        broker = await EmbeddedBroker.start(host, port)
    except BrokerMissingError as exc:
        print(
            f"chessbridge broker: {exc}: pip install 'chessbridge[demo]', or run Mosquitto "
            "(sudo apt install mosquitto), which chessbridge run and watch find at "
            "localhost:1883",
            file=sys.stderr,
        )
        return 2
    except BrokerError as exc:
        print(f"chessbridge broker: {exc}; try another --host or --port", file=sys.stderr)
        return 2
    try:
        print(broker.url, flush=True)
        print(f"chessbridge broker: {_how_to_use(broker)}", file=sys.stderr, flush=True)
        await stop.wait()
    finally:
        await broker.close()
    print("chessbridge broker: stopped", file=sys.stderr)
    return 0


def _how_to_use(broker: EmbeddedBroker) -> str:
    url = broker.url
    if broker.port == DEFAULT_PORT and broker.host in LOCAL_HOSTS:
        clients = "chessbridge run, watch and relay find it with no --broker"
    else:
        clients = f"give chessbridge run, watch and relay --broker {url}"
    everywhere = ""
    if broker.host in ("0.0.0.0", "::"):
        everywhere = ", on every interface (other machines use this one's address)"
    return (
        f"MQTT broker at {url}{everywhere}, anonymous and in memory, for trying (a venue runs "
        f"Mosquitto); {clients}. Ctrl-C stops it."
    )
