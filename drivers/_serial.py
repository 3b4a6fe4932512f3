"""A serial port for a board link: the I/O every serial family shares.

Opening with one clear line when the port cannot be had, writes kept in order, reads that end
in ``LinkLostError`` when the board goes silent or away, the identification of a board that
has just been opened, and the probe ``chessbridge scan`` uses; :class:`SerialBoardLink` is the
link built on them. The families' links (``drivers/*/link.py``) add only their commands, their
codec and what they keep of its events.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Final, Generic, Protocol, Self, TypeVar

import serial
import serial_asyncio_fast

from drivers.errors import BoardNotFoundError, LinkLostError, NotABoardError
from drivers.events import BoardInfo, BoardSnapshot, merge_info
from drivers.link import Capabilities, EventCallback

Feed = Callable[[bytes, float], None]
"""Takes the bytes read and the loop time they arrived at."""


CLOSE_WAIT: Final = 2.0
"""Seconds a closing port may take to write what it still holds (``SerialPort.close``)."""


class _PortProtocol(asyncio.StreamReaderProtocol):
    """The port's bytes: held for :meth:`SerialPort.read` until :meth:`SerialPort.pump` takes
    them, then handed to its feed in the loop's callback that read them.

    A board event on its way to the engine then wakes no task (and costs no pass of the loop)
    per read. The stream reader under it only carries the end of the connection to the writer.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.reader = asyncio.StreamReader(loop=loop)
        """Only for the writer (it learns the end of the connection there)."""
        super().__init__(self.reader, loop=loop)
        self._loop = loop
        self.held = bytearray()
        """Bytes read and not yet taken (while no feed takes them)."""
        self.last = loop.time()
        """Loop time of the last bytes read."""
        self.feed: Feed | None = None
        self.ended: asyncio.Future[None] = loop.create_future()
        """Done when the connection is lost (:attr:`lost_by`), or with the feed's exception."""
        self.lost_by: BaseException | None = None
        self._arrived: asyncio.Future[None] | None = None

    def data_received(self, data: bytes) -> None:
        self.last = now = self._loop.time()
        feed = self.feed
        if feed is None:
            self.held += data
            self._wake()
            return
        try:
            feed(data, now)
        except Exception as exc:  # noqa: BLE001  # the pump raises it, as if it had fed the bytes
            self.feed = None
            if not self.ended.done():
                self.ended.set_exception(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.lost_by = exc
        if not self.ended.done():
            self.ended.set_result(None)
        self._wake()

    def take(self) -> bytes:
        """The bytes held, now no longer held."""
        data = bytes(self.held)
        self.held.clear()
        return data

    def _wake(self) -> None:
        arrived, self._arrived = self._arrived, None
        if arrived is not None and not arrived.done():
            arrived.set_result(None)

    async def arrival(self) -> None:
        """Until bytes arrive or the connection ends."""
        arrived = self._arrived = self._loop.create_future()
        await arrived


class SerialPort:
    """One open serial port to a board (or a pseudo-terminal standing in for one)."""

    def __init__(self, path: str, protocol: _PortProtocol, writer: asyncio.StreamWriter) -> None:
        self.path = path
        self._protocol = protocol
        self._writer: asyncio.StreamWriter | None = writer
        self._lock = asyncio.Lock()

    @classmethod
    async def open(cls, path: str, *, baudrate: int, example: str) -> Self:
        """Open ``path`` as 8N1 at ``baudrate``, locked against other programs opening it too
        (two readers of one port would each get half of the board's bytes).

        Raises:
            BoardNotFoundError: the port cannot be opened; the message says why and what to
                check (``example`` shows a right board URI).
        """
        loop = asyncio.get_running_loop()
        protocol = _PortProtocol(loop)
        try:
            transport, _ = await serial_asyncio_fast.create_serial_connection(
                loop,
                lambda: protocol,
                url=path,
                baudrate=baudrate,
                bytesize=8,
                parity="N",
                stopbits=1,
                exclusive=True,
            )
        except (OSError, serial.SerialException) as exc:
            why = reason(exc)
            advice = (
                "stop it first"
                if why.startswith("in use")
                else f"check that the board is plugged in and the path is right (e.g. {example})"
            )
            raise BoardNotFoundError(path, f"cannot open board at {path}: {why}; {advice}") from exc
        writer = asyncio.StreamWriter(transport, protocol, protocol.reader, loop)
        return cls(path, protocol, writer)

    @property
    def is_open(self) -> bool:
        """False once closed."""
        return self._writer is not None

    async def write(self, *chunks: bytes) -> None:
        """Write ``chunks`` in order, after any write in progress (a closed port: nothing)."""
        writer = self._writer
        if writer is None:
            return
        async with self._lock:
            for chunk in chunks:
                writer.write(chunk)
            with contextlib.suppress(OSError, serial.SerialException):
                await writer.drain()

    async def read(self, silence: float) -> bytes:
        """The next bytes from the board.

        Raises:
            LinkLostError: nothing came for ``silence`` seconds, the port failed (the board was
                unplugged) or was closed.
        """
        protocol = self._protocol
        try:
            # A timeout scope, not ``wait_for``: on Python 3.11 that runs the wait in a task of
            # its own, two more passes of the loop.
            async with asyncio.timeout(silence):
                while not protocol.held and not protocol.ended.done():
                    await protocol.arrival()
        except TimeoutError:
            message = f"board at {self.path} silent for {silence:g} s"
            raise LinkLostError(self.path, message) from None
        if not protocol.held:
            raise self._lost()
        return protocol.take()

    def _lost(self) -> LinkLostError:
        """The error for a connection that ended (the port failed, or was closed)."""
        exc = self._protocol.lost_by
        if exc is None:
            return LinkLostError(self.path, f"board at {self.path} closed the connection")
        error = LinkLostError(self.path, f"board at {self.path} lost: {reason(exc)}")
        error.__cause__ = exc
        return error

    async def identify(
        self, answered: Callable[[bytes, float], bool], *, within: float, failure: str
    ) -> None:
        """Read until ``answered(data, now)`` says the board has identified itself.

        Raises:
            NotABoardError: not ``within`` seconds (the port is closed then);
                ``failure`` is the message, saying what was expected.
            LinkLostError: the port failed meanwhile.
        """
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(within):
                while not answered(await self.read(within + 1.0), loop.time()):
                    pass
        except TimeoutError:
            await self.close()
            raise NotABoardError(self.path, failure) from None

    async def pump(
        self, feed: Feed, *, dead_after: float, keepalive: bytes | None = None, every: float = 1.0
    ) -> None:
        """Read and ``feed`` until the link dies (``LinkLostError``) or is cancelled; then close.

        With ``keepalive``, that command is written every ``every`` seconds, so that a board
        silent for ``dead_after`` seconds is one gone, not one with nothing to say.
        """
        loop = asyncio.get_running_loop()
        protocol = self._protocol
        pinger = None if keepalive is None else asyncio.create_task(self._ping(keepalive, every))
        try:
            if protocol.held:  # read before the pump (while the board was identified)
                feed(protocol.take(), protocol.last)
            # From here on every read is fed in the loop's callback that read it; this task
            # only watches for the end of the connection, or the board's silence.
            protocol.feed = feed
            while True:
                silent_for = loop.time() - protocol.last
                if silent_for >= dead_after:
                    message = f"board at {self.path} silent for {dead_after:g} s"
                    raise LinkLostError(self.path, message)
                await asyncio.wait({protocol.ended}, timeout=dead_after - silent_for)
                if protocol.ended.done():
                    protocol.ended.result()  # the feed's exception, if it raised
                    raise self._lost()
        finally:
            protocol.feed = None
            if pinger is not None:
                pinger.cancel()
            await self.close()

    async def close(self) -> None:
        """Close the port (idempotent), within ``CLOSE_WAIT`` seconds.

        A transport closes once what it still has to write is written; a board (or a pty) that
        no longer reads would keep it open for ever - and the task closing it with it, a daemon
        that never stops: past the wait, the port is dropped with what it had left to write.
        """
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            try:
                await asyncio.wait_for(writer.wait_closed(), CLOSE_WAIT)
            except TimeoutError:
                writer.transport.abort()
            except Exception:  # noqa: BLE001  # closing: whatever the port says, it is closed
                pass

    async def _ping(self, command: bytes, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            await self.write(command)


E = TypeVar("E")


class SerialCodec(Protocol[E]):
    """A serial family's codec: bytes in, its events out; never raises."""

    def feed(self, data: bytes, at: float) -> list[E]:
        """Decode ``data`` read at loop time ``at``."""
        ...


class SerialBoardLink(Capabilities, Generic[E]):
    """One connection to a board of a serial family; ``run()`` reads until the link dies.

    The :class:`~drivers.link.BoardLink` every serial family shares: the port opened and the
    start-up written (:meth:`_open_port`), the board identified by what it says
    (:meth:`_identify`), then read, decoded and kept alive (:meth:`run`) until it goes silent or
    away. Each event decoded goes to :meth:`_dispatch`, where the family keeps back what is its
    own and passes the rest to ``on_event``.
    """

    codec: SerialCodec[E]
    """The family's codec."""

    def __init__(
        self,
        path: str,
        on_event: EventCallback,
        *,
        info: BoardInfo,
        identify_timeout: float,
        dead_after: float,
        keepalive: bytes | None = None,
        every: float = 1.0,
    ) -> None:
        self.path = path
        self._on_event = on_event
        self._info = info
        self._identify_timeout = identify_timeout
        self._dead_after = dead_after
        self._keepalive = keepalive
        self._every = every
        self._port: SerialPort | None = None

    async def run(self) -> None:
        """Read and decode until the board goes silent or the port closes (``LinkLostError``)."""
        port = self._port
        assert port is not None, "open() first"
        await port.pump(
            self._feed, dead_after=self._dead_after, keepalive=self._keepalive, every=self._every
        )

    async def close(self) -> None:
        """Close the port (idempotent)."""
        if self._port is not None:
            await self._port.close()

    async def send(self, *commands: bytes) -> None:
        """Write commands to the board, in order."""
        if self._port is not None:
            await self._port.write(*commands)

    async def _open_port(self, *, baudrate: int, example: str, startup: Sequence[bytes]) -> None:
        """Open the port (``example``: a right board URI, for the error) and write ``startup``."""
        self._port = port = await SerialPort.open(self.path, baudrate=baudrate, example=example)
        await port.write(*startup)

    async def _identify(self, failure: str, *, version: bool) -> None:
        """Read until the board has sent a whole board (and, with ``version``, its version),
        keeping what it says of itself (:attr:`info`) and dispatching every event meanwhile.

        Raises:
            NotABoardError: not within ``identify_timeout`` seconds; ``failure`` is the message.
            LinkLostError: the port failed meanwhile.
        """
        port = self._port
        assert port is not None, "_open_port() first"
        wanted = {"version", "board"} if version else {"board"}
        seen: set[str] = set()

        def answered(data: bytes, now: float) -> bool:
            for event in self.codec.feed(data, now):
                if isinstance(event, BoardInfo):
                    if event.version is not None:
                        seen.add("version")
                    self._info = merge_info(self._info, event)
                elif isinstance(event, BoardSnapshot):
                    seen.add("board")
                self._dispatch(event)
            return seen.issuperset(wanted)

        await port.identify(answered, within=self._identify_timeout, failure=failure)

    def _feed(self, data: bytes, now: float) -> None:
        for event in self.codec.feed(data, now):
            self._dispatch(event)

    def _dispatch(self, event: E) -> None:
        """What the family does with an event it decoded: the family's own kept back, the rest
        to ``on_event``."""
        raise NotImplementedError


async def probe(
    path: str,
    *,
    baudrate: int,
    send: Sequence[bytes],
    identity: Callable[[bytes, float], BoardInfo | None],
    within: float,
) -> BoardInfo | None:
    """Whether a board of one family answers at ``path``: its identity, or ``None``.

    Opens the port at ``baudrate``, writes ``send``, and reads until ``identity(data, now)``
    returns what the board said of itself, for at most ``within`` seconds.

    Raises:
        BoardNotFoundError: the port cannot be opened at all.
    """
    port = await SerialPort.open(path, baudrate=baudrate, example=path)
    found: list[BoardInfo] = []

    def answered(data: bytes, now: float) -> bool:
        info = identity(data, now)
        if info is not None:
            found.append(info)
        return bool(found)

    try:
        await port.write(*send)
        await port.identify(answered, within=within, failure="no answer")
    except (NotABoardError, LinkLostError):
        return None
    finally:
        await port.close()
    return found[0]


def reason(exc: BaseException) -> str:
    """Why a port could not be used, in a few words a person can act on."""
    if isinstance(exc, FileNotFoundError) or "No such file" in str(exc):
        return "no such device"
    if isinstance(exc, PermissionError) or "Permission denied" in str(exc):
        return "permission denied (is the user in the dialout group?)"
    if "exclusively lock" in str(exc):
        return "in use by another program (is another chessbridge reading this board?)"
    return str(exc) or type(exc).__name__
