"""The LiveChess API's server (aiohttp): the websocket at ``/api/v1.0`` and
``GET /api/v1.0/eboards``.

Each websocket is a :class:`~bridge.livechess.session.Session`; what it sends goes through a
queue of its own, written by one task, so that :meth:`LiveChessServer.changed` (called by
whatever feeds the hall, in the middle of its own work) never waits for a client: a client
:data:`QUEUE` messages behind is dropped (it connects again and starts over). A ``setup`` that
starts a new game is carried out by the ``setup`` handler the server was given (none: a setup of
another position than the game's is refused).

A web page may connect only from an allowed origin (:mod:`bridge.livechess.origins`): any
website open in the user's browser could otherwise reach the API on this machine. A client
without an ``Origin`` header (a tool) is let in. The server listens on this machine only unless
told otherwise, and says so when told.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import WSMsgType, web

from bridge.livechess.hall import Hall
from bridge.livechess.origins import Origins
from bridge.livechess.protocol import MAX_MESSAGE
from bridge.livechess.session import NewGame, Session
from bridge.logs import escape
from bridge.wire.config import ConfigError

log = logging.getLogger("chessbridge.livechess")

API: Final = "/api/v1.0"
QUEUE: Final = 1024
"""Messages a client may lag behind before it is dropped."""
HEARTBEAT: Final = 30.0
"""Seconds between the server's pings: a client gone without a word is noticed."""

SetupHandler = Callable[[str, str], Awaitable[str | None]]
"""Starts a new game at a table (its id) from a FEN; ``None`` once done, else why not."""


class ListenError(ConfigError):
    """The API cannot listen where it was told to; the message says why and what to do."""


class _Client:
    """One websocket: its session, and the queue its writer task empties."""

    def __init__(self, ws: web.WebSocketResponse, session: Session, name: str) -> None:
        self.ws = ws
        self.session = session
        self.name = name
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE)
        self.dropped = False

    def send(self, messages: list[str]) -> None:
        """Queue ``messages``; a client too far behind is dropped."""
        for message in messages:
            if self.dropped:
                return
            try:
                self.queue.put_nowait(message)
            except asyncio.QueueFull:
                log.warning("LiveChess client %s is %d messages behind: dropped", self.name, QUEUE)
                self.dropped = True
                self.queue.get_nowait()
                self.queue.put_nowait(None)

    async def write(self) -> None:
        """Send what is queued, in order, until told to stop (``None``)."""
        while (message := await self.queue.get()) is not None:
            await self.ws.send_str(message)
        await self.ws.close()


class LiveChessServer:
    """The LiveChess API over a :class:`~bridge.livechess.hall.Hall`."""

    def __init__(
        self,
        hall: Hall,
        *,
        origins: Origins,
        setup: SetupHandler | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.hall = hall
        self.origins = origins
        self.setup = setup
        self.clock = clock
        self.clients: set[_Client] = set()
        self._refused: set[str] = set()
        self._jobs: set[asyncio.Task[None]] = set()

    def now_ms(self) -> int:
        """The time messages carry: milliseconds since the epoch."""
        return int(self.clock() * 1000)

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application()
        app.router.add_get(API, self.socket)
        app.router.add_get(f"{API}/eboards", self.eboards)
        app.on_shutdown.append(self._close_all)
        return app

    def changed(self, table_id: str) -> None:
        """Table ``table_id`` changed: the feeds it makes, to every client following it."""
        now = self.now_ms()
        for client in self.clients:
            client.send(client.session.changed(table_id, now))

    # -- the routes -----------------------------------------------------------------------------

    def _refusal(self, request: web.Request) -> web.Response | None:
        """The answer to a web page from an origin that is not allowed (``None``: allowed)."""
        origin = request.headers.get("Origin")
        if self.origins.allows(origin):
            return None
        assert origin is not None
        if origin not in self._refused and len(self._refused) < 100:
            self._refused.add(origin)
            log.warning(
                "refused the LiveChess API to a web page from %s: add it to [livechess] origins "
                "in the config if it may connect",
                escape(origin[:200]),
            )
        return web.Response(
            status=403,
            text=f"web pages from {origin} may not use this LiveChess API: the allowed origins "
            "are set by [livechess] origins in chessbridge's config\n",
        )

    async def eboards(self, request: web.Request) -> web.Response:
        """``GET /api/v1.0/eboards``: the boards, as the ``eboards`` call answers."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        response = web.json_response(self.hall.eboards())
        origin = request.headers.get("Origin")
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
        return response

    async def socket(self, request: web.Request) -> web.StreamResponse:
        """``/api/v1.0``: one client's websocket, until it closes."""
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        ws = web.WebSocketResponse(max_msg_size=MAX_MESSAGE, heartbeat=HEARTBEAT)
        if not ws.can_prepare(request).ok:
            return web.Response(
                status=400,
                text=f"this is the LiveChess API's websocket: connect to ws://HOST:PORT{API}\n",
            )
        await ws.prepare(request)
        origin = request.headers.get("Origin")
        name = escape(f"{request.remote} ({origin or 'no web page'})"[:200])
        client = _Client(ws, Session(self.hall, setup=self.setup is not None), name)
        self.clients.add(client)
        log.info("LiveChess client %s connected", name)
        writer = asyncio.create_task(client.write(), name=f"livechess {name}")
        try:
            async for message in ws:
                if message.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
                    continue
                replies, job = client.session.receive(message.data, self.now_ms())
                client.send(replies)
                if job is not None:
                    self._start(client, job)
        finally:
            self.clients.discard(client)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            log.info("LiveChess client %s disconnected", name)
        return ws

    def _start(self, client: _Client, job: NewGame) -> None:
        task = asyncio.create_task(self._set_up(client, job), name=f"livechess setup {job.table}")
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)

    async def _set_up(self, client: _Client, job: NewGame) -> None:
        assert self.setup is not None  # a session makes jobs only where setup is served
        log.info("LiveChess client %s: setup of %s at table %s", client.name, job.fen, job.table)
        error = await self.setup(job.table, job.fen)
        if error is not None:
            log.warning("LiveChess setup at table %s: %s", job.table, error)
        client.send(client.session.setup_done(job, error, self.now_ms()))

    async def _close_all(self, app: web.Application) -> None:
        for task in list(self._jobs):
            task.cancel()
        for client in list(self.clients):
            await client.ws.close()


async def start(server: LiveChessServer, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Listen on ``host:port`` (0: any free port); the runner (``cleanup()`` ends it) and the
    port bound. Listening elsewhere than on this machine is said in the log.

    Raises:
        ListenError: the address is in use or not this machine's.
    """
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise ListenError(
            f"the LiveChess API cannot listen on {host}:{port} ({exc.strerror or exc}): is DGT "
            "LiveChess or another chessbridge serving it already? Stop it, or give another "
            "address ([livechess] listen, --livechess or --listen); clients look for port 1982"
        ) from exc
    bound = port
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            bound = int(address[1])
    shown = f"[{host}]" if ":" in host else host
    log.info("LiveChess API at ws://%s:%d%s", shown, bound, API)
    if not _loopback(host):
        log.warning(
            "the LiveChess API listens on %s:%d, not on this machine only: any device that "
            "reaches this address can read the boards%s",
            host,
            bound,
            " and start new games with setup" if server.setup is not None else "",
        )
    return runner, bound


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
