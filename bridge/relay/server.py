"""The relay's HTTP server (aiohttp): the live PGN, the arbiters' page, their actions.

Routes:

- ``GET /round.pgn``, ``GET /table/{id}.pgn``: the broadcast PGN with ``ETag`` and
  ``Last-Modified``; ``If-None-Match`` / ``If-Modified-Since`` get ``304`` when nothing new is
  shown, so pollers every 2 s cost a lookup.
- ``GET /``: the page; ``GET /static/*``; ``GET /table/{id}.svg``: the position.
- ``GET /api/state``: every table at a glance, the lichess push state, who is signed in.
  ``GET /api/table/{id}``: one table in full. ``GET /events``: server-sent events, ``tables``
  (summaries of the tables that changed; all of them on connecting).
- ``POST /login`` (name, password), ``POST /logout``.
- ``POST /api/table/{id}/{command}`` for ``ack_alert``, ``correct_move``, ``set_result``,
  ``adjust_clock``, ``reconstruct`` and ``set_position``: signed in, with the session's CSRF
  token in ``X-CSRF-Token``; the relay sends the command with its own MQTT credentials and
  answers with the table's response.
- ``POST /api/round/preview`` and ``POST /api/round/start`` (signed in, CSRF as above): a
  round's pairings file (TRF or CSV, its text in ``pairings``), ``round``, optionally a venue
  map (``venue``, TOML), ``event`` and ``new_games``; the preview is what would be sent to which
  table, the start sends it (docs/rounds.md) and answers with each board's outcome. A file that
  cannot be used is a 400 with one line naming its line.

An unknown table is a 404, a malformed id or body a 400. Nothing served ever contains the MQTT
credentials or the lichess token.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from email.utils import formatdate, parsedate_to_datetime
from importlib import resources
from typing import Any, Final

from aiohttp import web

from bridge.mqtt.requests import NoResponseError
from bridge.relay import page
from bridge.relay.auth import Session, SignIn, clean_name, csrf_ok
from bridge.relay.link import RelayLink
from bridge.relay.push import Pusher
from bridge.relay.room import Document, Room
from bridge.views import round as rounds
from bridge.wire import pairings
from bridge.wire.commands import Response
from bridge.wire.pairings import Pairing, PairingsError
from bridge.wire.requests import RequestError

log = logging.getLogger("chessbridge.relay.http")

PAGE_ACTIONS: Final = frozenset(
    {"ack_alert", "correct_move", "set_result", "adjust_clock", "reconstruct", "set_position"}
)
"""What the page may ask of a table."""
COOKIE: Final = "chessbridge_session"
MAX_BODY: Final = 4096
MAX_ROUND_BODY: Final = 512 * 1024
"""A round's pairings file (a TRF of a 500-player open is about 100 kB)."""
ROUND_WAIT: Final = 10.0
"""Seconds the page's round start waits for each table's response."""
MAX_TABLE_ID: Final = 64
SSE_BATCH: Final = 0.25
"""Seconds the events of many tables are gathered into one server-sent event."""
SSE_PING: Final = 15.0
SSE_QUEUE: Final = 64
"""Events a slow page may lag behind before it is dropped (it reconnects and starts over)."""

_PGN_TYPE: Final = "application/x-chess-pgn"
_SECURITY_HEADERS: Final = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
_PAGE_POLICY: Final = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_STATIC: Final = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "app.css": "text/css",
}


class RelayServer:
    """The HTTP side of the relay, over a :class:`Room` and the MQTT :class:`RelayLink`."""

    def __init__(
        self,
        room: Room,
        link: RelayLink | None,
        signin: SignIn,
        *,
        pusher: Pusher | None = None,
        clock: Callable[[], float] = time.time,
        secure_cookies: bool = False,
    ) -> None:
        self.room = room
        self.link = link
        self.signin = signin
        self.pusher = pusher
        self.clock = clock
        self.secure_cookies = secure_cookies
        self.requests = 0
        self._static = {
            name: (resources.files("bridge.relay").joinpath("static", name).read_bytes(), kind)
            for name, kind in _STATIC.items()
        }
        self._dirty: set[str] = set()
        self._wake = asyncio.Event()
        self._clients: set[asyncio.Queue[bytes | None]] = set()
        self._svg: dict[str, tuple[int, bytes, str]] = {}
        self._broadcaster: asyncio.Task[None] | None = None

    # -- the application ------------------------------------------------------------------------

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application(client_max_size=MAX_ROUND_BODY, middlewares=[self._headers])
        app.router.add_get("/round.pgn", self.round_pgn)
        app.router.add_get("/table/{name}", self.table_file)
        app.router.add_get("/", self.index)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_get("/api/state", self.state)
        app.router.add_get("/api/table/{table}", self.table_detail)
        app.router.add_post("/api/table/{table}/{command}", self.action)
        app.router.add_post("/api/round/preview", self.round_preview)
        app.router.add_post("/api/round/start", self.round_start)
        app.router.add_get("/events", self.events)
        app.router.add_post("/login", self.login)
        app.router.add_post("/logout", self.logout)
        app.on_startup.append(self._start_broadcaster)
        app.on_shutdown.append(self._close_events)
        return app

    @web.middleware
    async def _headers(
        self, request: web.Request, handler: Callable[[web.Request], Any]
    ) -> web.StreamResponse:
        self.requests += 1
        response: web.StreamResponse = await handler(request)
        for name, value in _SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    def changed(self, table: str) -> None:
        """A table changed: its summary goes to the pages (batched)."""
        self._dirty.add(table)
        self._wake.set()

    async def _start_broadcaster(self, app: web.Application) -> None:
        self._broadcaster = asyncio.create_task(self._broadcast(), name="relay page events")

    async def _close_events(self, app: web.Application) -> None:
        task = self._broadcaster
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for queue in list(self._clients):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    # -- PGN --------------------------------------------------------------------------------------

    async def round_pgn(self, request: web.Request) -> web.StreamResponse:
        """Every game of the round."""
        now = self.clock()
        return _pgn_response(request, self.room.round_document(now, now))

    async def table_file(self, request: web.Request) -> web.StreamResponse:
        """``/table/{id}.pgn`` and ``/table/{id}.svg``."""
        name = request.match_info["name"]
        table_id, dot, kind = name.rpartition(".")
        if not dot or kind not in ("pgn", "svg"):
            raise web.HTTPNotFound(text="only /table/{id}.pgn and /table/{id}.svg exist\n")
        _check_table_id(table_id)
        now = self.clock()
        if kind == "pgn":
            document = self.room.table_document(table_id, now, now)
            if document is None:
                raise _unknown(table_id)
            return _pgn_response(request, document)
        table = self.room.table(table_id)
        if table is None:
            raise _unknown(table_id)
        cached = self._svg.get(table_id)
        if cached is None or cached[0] != table.version:
            body = page.diagram(table).encode()
            cached = (table.version, body, _etag(body))
            self._svg[table_id] = cached
        _, body, etag = cached
        if etag in _if_none_match(request):
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(
            body=body,
            content_type="image/svg+xml",
            headers={"ETag": etag, "Cache-Control": "no-cache"},
        )

    # -- the page ---------------------------------------------------------------------------------

    async def index(self, request: web.Request) -> web.StreamResponse:
        """The page."""
        return self._file("index.html")

    async def static(self, request: web.Request) -> web.StreamResponse:
        """The page's script and style."""
        name = request.match_info["name"]
        if name not in self._static or name == "index.html":
            raise web.HTTPNotFound(text="no such file\n")
        return self._file(name)

    def _file(self, name: str) -> web.Response:
        body, kind = self._static[name]
        response = web.Response(body=body, content_type=kind, charset="utf-8")
        response.headers["Cache-Control"] = "no-cache"
        if kind == "text/html":
            response.headers["Content-Security-Policy"] = _PAGE_POLICY
        return response

    def _summaries(self, tables: list[str] | None = None) -> list[dict[str, Any]]:
        errors = self.pusher.errors if self.pusher is not None else {}
        chosen = (
            [t for t in self.room if t.game_id is not None or t.view.status is not None]
            if tables is None
            else [t for name in tables if (t := self.room.table(name)) is not None]
        )
        return [page.summary(t, errors.get(t.table)) for t in chosen]

    async def state(self, request: web.Request) -> web.StreamResponse:
        """Every table at a glance, and who is signed in."""
        return _json(
            {
                "tables": self._summaries(),
                "me": self._me(request),
                "push": None if self.pusher is None else self.pusher.status,
                "broker": None if self.link is None else self.link.connected.is_set(),
            }
        )

    def _me(self, request: web.Request) -> dict[str, Any]:
        session = self.signin.session(request.cookies.get(COOKIE), self.clock())
        return {
            "enabled": self.signin.enabled,
            "name": None if session is None else session.name,
            "csrf": None if session is None else session.csrf,
        }

    async def table_detail(self, request: web.Request) -> web.StreamResponse:
        """One table in full."""
        table_id = request.match_info["table"]
        _check_table_id(table_id)
        table = self.room.table(table_id)
        if table is None:
            raise _unknown(table_id)
        errors = self.pusher.errors if self.pusher is not None else {}
        return _json(page.detail(table, errors.get(table_id)))

    # -- server-sent events -----------------------------------------------------------------------

    async def events(self, request: web.Request) -> web.StreamResponse:
        """Summaries of the tables as they change (all of them first)."""
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue(SSE_QUEUE)
        self._clients.add(queue)
        try:
            await response.write(_event("tables", {"tables": self._summaries(), "all": True}))
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), SSE_PING)
                except TimeoutError:
                    item = b": ping\n\n"
                if item is None:
                    break
                await response.write(item)
        except (ConnectionResetError, asyncio.CancelledError):
            pass
        finally:
            self._clients.discard(queue)
        return response

    async def _broadcast(self) -> None:
        while True:
            await self._wake.wait()
            await asyncio.sleep(SSE_BATCH)
            self._wake.clear()
            names, self._dirty = sorted(self._dirty), set()
            if not self._clients or not names:
                continue
            push = None if self.pusher is None else self.pusher.status
            event = _event("tables", {"tables": self._summaries(names), "push": push})
            for queue in list(self._clients):
                try:
                    queue.put_nowait(event)
                except asyncio.QueueFull:
                    self._clients.discard(queue)  # too slow: it reconnects and starts over
                    with contextlib.suppress(asyncio.QueueEmpty):
                        queue.get_nowait()
                    queue.put_nowait(None)

    # -- signing in -------------------------------------------------------------------------------

    async def login(self, request: web.Request) -> web.StreamResponse:
        """Check the password (rate limited) and open a session."""
        if not self.signin.enabled:
            return _json(
                {"error": "sign-in is disabled: the relay has no [relay] password; read-only"},
                status=403,
            )
        body = await _body(request)
        name = clean_name(str(body.get("name", "")))
        password = body.get("password")
        if name is None or not isinstance(password, str):
            return _json({"error": "give your name and the arbiters' password"}, status=400)
        client = request.remote or "?"
        now = self.clock()
        verdict = self.signin.check(client, password, now)
        if verdict == "wait":
            wait = max(1, round(self.signin.retry_after(client, now)))
            return _json(
                {"error": f"too many failed sign-ins; try again in {wait} s"},
                status=429,
                headers={"Retry-After": str(wait)},
            )
        if verdict != "ok":
            log.warning("failed sign-in to the arbiters' page from %s", client)
            return _json({"error": "wrong password"}, status=401)
        token = secrets.token_urlsafe(32)
        session = self.signin.open(token, name, secrets.token_urlsafe(24), now)
        log.info("%s signed in to the arbiters' page from %s", name, client)
        response = _json({"name": session.name, "csrf": session.csrf})
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="Strict",
            secure=self.secure_cookies or request.secure,
            path="/",
            max_age=int(session.expires - now),
        )
        return response

    async def logout(self, request: web.Request) -> web.StreamResponse:
        """Close the session."""
        self.signin.close(request.cookies.get(COOKIE))
        response = _json({"ok": True})
        response.del_cookie(COOKIE, path="/")
        return response

    # -- actions ----------------------------------------------------------------------------------

    def _arbiter(self, request: web.Request) -> Session | web.Response:
        """The signed-in arbiter sending ``request`` from the page, or the refusal to answer."""
        session = self.signin.session(request.cookies.get(COOKIE), self.clock())
        if session is None:
            return _json({"error": "sign in first: the page is read-only without it"}, status=401)
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return _json({"error": "request from another site refused"}, status=403)
        if not csrf_ok(session, request.headers.get("X-CSRF-Token")):
            return _json({"error": "missing or wrong CSRF token; reload the page"}, status=403)
        return session

    async def action(self, request: web.Request) -> web.StreamResponse:
        """An arbiter's command from the page, sent to the table by the relay."""
        session = self._arbiter(request)
        if isinstance(session, web.Response):
            return session
        table_id, command = request.match_info["table"], request.match_info["command"]
        _check_table_id(table_id)
        if command not in PAGE_ACTIONS:
            allowed = ", ".join(sorted(PAGE_ACTIONS))
            return _json({"error": f"the page can send {allowed}, not {command!r}"}, status=400)
        if self.room.table(table_id) is None:
            raise _unknown(table_id)
        fields = await _body(request)
        if self.link is None:
            return _json({"error": "the relay has no broker connection"}, status=503)
        try:
            response = await self.link.request(table_id, command, fields, by=session.name)
        except RequestError as exc:
            return _json({"error": str(exc)}, status=400)
        except NoResponseError as exc:
            return _json({"error": str(exc)}, status=504)
        log.info("%s sent %s to table %s: %s", session.name, command, table_id, response.status)
        return _json({"status": response.status, "data": response.data, "error": response.error})

    # -- a round ----------------------------------------------------------------------------------

    def _held(self, table_id: str) -> rounds.Held | None:
        table = self.room.table(table_id)
        if table is None:
            return None
        view = table.view
        return rounds.Held(
            players=view.players,
            event=view.event,
            round=view.round,
            board=view.board_number,
            plies=len(view.moves),
            over=view.result is not None,
            status=view.status,
        )

    def _round_plan(self, body: Mapping[str, Any]) -> rounds.Plan | web.Response:
        text, number = body.get("pairings"), body.get("round")
        name = body.get("name") or "pairings"
        venue_text, event = body.get("venue") or None, body.get("event") or None
        if not isinstance(text, str) or not text.strip():
            return _json({"error": "choose the pairings file, or paste the CSV"}, status=400)
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
        if not isinstance(number, int) or isinstance(number, bool):
            return _json({"error": "the round must be a number"}, status=400)
        if not isinstance(name, str) or not isinstance(venue_text, str | None):
            return _json({"error": "name and venue are text"}, status=400)
        if not isinstance(event, str | None):
            return _json({"error": "event is text"}, status=400)
        source = name.replace("/", "_")[:100]
        try:
            venue = None if venue_text is None else pairings.read_venue(venue_text, "venue map")
            return rounds.plan(text, source, number, venue=venue, event=event)
        except PairingsError as exc:
            return _json({"error": str(exc)}, status=400)

    async def round_preview(self, request: web.Request) -> web.StreamResponse:
        """What starting the round would send, board by board."""
        session = self._arbiter(request)
        if isinstance(session, web.Response):
            return session
        plan = self._round_plan(await _body(request, limit=MAX_ROUND_BODY))
        if isinstance(plan, web.Response):
            return plan
        rows = []
        for pairing in plan.round.pairings:
            table = plan.tables[pairing.board]
            fields = plan.fields[pairing.board]
            held = self._held(table)
            rows.append(
                _round_row(pairing, table)
                | {
                    "ok": True,
                    "said": "unchanged" if held is not None and held.has(fields) else "assign",
                    "seen": held is not None,
                }
            )
        return _json({"round": plan.round.round, "rows": rows, "unpaired": _unpaired(plan)})

    async def round_start(self, request: web.Request) -> web.StreamResponse:
        """Send each board's table its assignment (and a new game); each board's outcome."""
        session = self._arbiter(request)
        if isinstance(session, web.Response):
            return session
        body = await _body(request, limit=MAX_ROUND_BODY)
        plan = self._round_plan(body)
        if isinstance(plan, web.Response):
            return plan
        new_games = body.get("new_games") is True
        link = self.link
        if link is None:
            return _json({"error": "the relay has no broker connection"}, status=503)

        async def send(table: str, command: str, fields: Mapping[str, object]) -> Response:
            return await link.request(table, command, fields, by=session.name, within=ROUND_WAIT)

        outcomes = await asyncio.gather(
            *(
                rounds.start_board(
                    send,
                    self._held(plan.tables[pairing.board]),
                    plan.tables[pairing.board],
                    pairing,
                    plan.fields[pairing.board],
                    new_games,
                )
                for pairing in plan.round.pairings
            )
        )
        good = sum(o.ok for o in outcomes)
        log.info(
            "%s started round %d: %d boards, %d ok",
            session.name,
            plan.round.round,
            len(outcomes),
            good,
        )
        return _json(
            {
                "round": plan.round.round,
                "rows": [
                    _round_row(o.pairing, o.table) | {"ok": o.ok, "said": o.said} for o in outcomes
                ],
                "unpaired": _unpaired(plan),
                "summary": f"{len(outcomes)} boards: {good} ok, {len(outcomes) - good} not",
            }
        )


# --- helpers ---------------------------------------------------------------------------------


def _check_table_id(table_id: str) -> None:
    if not table_id or len(table_id) > MAX_TABLE_ID or any(c in table_id for c in "/+#\x00"):
        raise web.HTTPBadRequest(text=f"not a table id: {table_id[:MAX_TABLE_ID]!r}\n")


def _unknown(table_id: str) -> web.HTTPNotFound:
    return web.HTTPNotFound(text=f"no table {table_id!r} has published a game here\n")


def _round_row(pairing: Pairing, table: str) -> dict[str, Any]:
    return {
        "board": pairing.board,
        "table": table,
        "white": pairing.white.name,
        "black": pairing.black.name,
        "whiteRating": pairing.white.rating,
        "blackRating": pairing.black.rating,
        "forfeit": pairing.result if pairing.forfeit else None,
    }


def _unpaired(plan: rounds.Plan) -> list[dict[str, str]]:
    return [{"name": u.player.name, "why": u.describe()} for u in plan.round.unpaired]


async def _body(request: web.Request, *, limit: int = MAX_BODY) -> dict[str, Any]:
    """The request's JSON object (or form fields) of at most ``limit`` bytes; 400 otherwise."""
    if request.content_length is not None and request.content_length > limit:
        raise web.HTTPBadRequest(text=f"the body is over {limit} bytes\n")
    if request.content_type == "application/x-www-form-urlencoded":
        form = await request.post()
        return {key: str(value) for key, value in form.items()}
    try:
        raw = await request.read()
        if len(raw) > limit:
            raise web.HTTPBadRequest(text=f"the body is over {limit} bytes\n")
        data = json.loads(raw or b"{}")
    except (ValueError, web.HTTPRequestEntityTooLarge) as exc:
        raise web.HTTPBadRequest(text=f"the body must be one JSON object: {exc}\n") from None
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(text="the body must be one JSON object\n")
    return data


def _json(data: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    response = web.json_response(data, status=status, headers=headers)
    response.headers["Cache-Control"] = "no-store"
    return response


def _event(name: str, data: Any) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _etag(body: bytes) -> str:
    return f'"{hashlib.sha256(body).hexdigest()[:32]}"'


def _if_none_match(request: web.Request) -> set[str]:
    header = request.headers.get("If-None-Match", "")
    return {part.strip().removeprefix("W/") for part in header.split(",") if part.strip()}


def _pgn_response(request: web.Request, document: Document) -> web.StreamResponse:
    headers = {
        "ETag": document.etag,
        "Last-Modified": formatdate(document.modified, usegmt=True),
        "Cache-Control": "no-cache",
        "Access-Control-Allow-Origin": "*",
    }
    tags = _if_none_match(request)
    if tags:
        if document.etag in tags or "*" in tags:
            return web.Response(status=304, headers=headers)
    elif (since := request.headers.get("If-Modified-Since")) is not None:
        with contextlib.suppress(TypeError, ValueError, IndexError):
            if int(document.modified) <= parsedate_to_datetime(since).timestamp():
                return web.Response(status=304, headers=headers)
    return web.Response(
        text=document.text, content_type=_PGN_TYPE, charset="utf-8", headers=headers
    )
