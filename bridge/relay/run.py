"""``chessbridge relay``: wires the room, the store, the MQTT link, the HTTP server, the pusher.

Start: the settings are checked (a bad broker URL, HTTP address or lichess setting is one line
and exit 2), the store is folded again, the HTTP port is bound (a port in use: one line, exit
2), then the broker: a refused login or subscription is one line and exit 2; an unreachable
broker is retried with backoff for ever. With lichess configured, the round's games are counted
once the broker's retained state has come: more than a lichess round holds is one line and
exit 2. Then everything runs until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Final

import msgspec
from aiohttp import web

from bridge import logs
from bridge.mqtt.session import check_tls
from bridge.mqtt.state_dir import default_state_dir
from bridge.relay import pgn
from bridge.relay.auth import SignIn
from bridge.relay.link import RefusedError, RelayLink
from bridge.relay.push import MAX_GAMES, LichessSettings, Pusher, count_games
from bridge.relay.room import Room
from bridge.relay.server import RelayServer
from bridge.relay.store import Store
from bridge.views.model import PayloadError
from bridge.wire import payloads
from bridge.wire.config import (
    ENV_LICHESS_TOKEN,
    BrokerSettings,
    Config,
    RelaySection,
    broker_settings,
)

log = logging.getLogger("chessbridge.relay")

EXIT_USAGE: Final = 2
STORE_EVERY: Final = 1.0
"""Seconds between two writes of what the relay received."""
SETTLE: Final = 1.0
"""Quiet seconds after connecting before the round is counted (the retained state has come)."""
SETTLE_MAX: Final = 10.0


class StartError(Exception):
    """The relay cannot start as configured; the message is the one line to print."""


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) as ``(host, port)``.

    Raises:
        StartError: not HOST:PORT with a port from 0 to 65535.
    """
    host, colon, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not colon or not host or not port.isdigit() or int(port) > 65535:
        raise StartError(f"--http must be HOST:PORT, e.g. 0.0.0.0:8080 or 127.0.0.1:8080: {text!r}")
    return host, int(port)


def lichess_settings(config: Config, env: Mapping[str, str]) -> LichessSettings | None:
    """The lichess push, with its token from the environment or the token file.

    Raises:
        StartError: a round id without a token, or a token file that cannot be read.
    """
    section = config.relay.lichess
    if section is None:
        return None
    token = env.get(ENV_LICHESS_TOKEN)
    if not token and section.token_file is not None:
        try:
            token = Path(section.token_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise StartError(
                f"cannot read the lichess token file {section.token_file}: {exc.strerror or exc}"
            ) from exc
    if not token:
        raise StartError(
            f"[relay.lichess] round_id is set but there is no token: put it in the file named "
            f"by token_file or in {ENV_LICHESS_TOKEN}"
        )
    return LichessSettings(
        round_id=section.round_id, token=token, url=section.url, debounce=section.debounce
    )


async def run_relay(
    *,
    broker: str,
    http: str,
    config: Config,
    state_dir: Path | None,
    stop: asyncio.Event,
    env: Mapping[str, str] | None = None,
    ready: Callable[[int], None] | None = None,
) -> int:
    """Run the relay until ``stop``; the exit code (0, or 2 for a start that cannot work).

    ``ready`` gets the bound HTTP port once the server listens (useful with port 0).
    """
    env = os.environ if env is None else env
    try:
        host, port = parse_http(http)
        settings = broker_settings(broker, config.broker)
        check_tls(settings)
        lichess = lichess_settings(config, env)
    except (StartError, ValueError) as exc:
        return _fail(str(exc))
    relay = config.relay
    broadcast = pgn.Broadcast(
        event=relay.event or "?", site=relay.site or "?", delay=relay.delay * 60.0
    )
    room = Room(broadcast, round_filter=relay.round)
    directory = state_dir or default_state_dir("relay", env)
    if relay.state_dir:
        directory = Path(relay.state_dir)
    try:
        store = Store(directory)
    except (OSError, sqlite3.Error) as exc:
        return _fail(f"cannot open the relay's state in {directory}: {exc}")
    try:
        _fold_again(room, store)
        return await _serve(room, store, settings, lichess, relay, host, port, stop, ready)
    finally:
        store.close()


async def _serve(
    room: Room,
    store: Store,
    settings: BrokerSettings,
    lichess: LichessSettings | None,
    relay: RelaySection,
    host: str,
    port: int,
    stop: asyncio.Event,
    ready: Callable[[int], None] | None,
) -> int:
    pusher = None if lichess is None else Pusher(room, lichess)
    signin = SignIn(relay.password)
    server = RelayServer(room, None, signin, pusher=pusher, secure_cookies=relay.secure_cookies)

    def changed(table: str) -> None:
        server.changed(table)
        if pusher is not None:
            pusher.changed()

    link = RelayLink(settings, room, store=store, changed=changed)
    server.link = link
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            return _fail(
                f"cannot listen on {host}:{port} ({exc.strerror or exc}): use another --http"
            )
        bound = _bound_port(runner) or port
        _say(
            f"serving http://{host}:{bound}/ (the arbiters' page), /round.pgn and "
            f"/table/ID.pgn; following MQTT broker {settings.address}"
            + ("" if relay.round is None else f", round {relay.round}")
            + ("" if lichess is None else f", pushing to lichess round {lichess.round_id}")
        )
        if ready is not None:
            ready(bound)
        tasks = [
            asyncio.create_task(link.run(stop), name="relay mqtt"),
            asyncio.create_task(_keep(store, stop), name="relay store"),
        ]
        if pusher is not None:
            tasks.append(asyncio.create_task(_push(link, room, pusher, stop), name="relay push"))
        stopper = asyncio.create_task(stop.wait(), name="relay stop")
        try:
            done, _ = await asyncio.wait({*tasks, stopper}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        except (RefusedError, _TooManyGamesError) as exc:
            return _fail(str(exc))
        finally:
            stop.set()
            for task in (*tasks, stopper):
                task.cancel()
            await asyncio.gather(*tasks, stopper, return_exceptions=True)
        return 0
    finally:
        await runner.cleanup()


class _TooManyGamesError(Exception):
    pass


async def _push(link: RelayLink, room: Room, pusher: Pusher, stop: asyncio.Event) -> None:
    """Count the round once the broker's retained state came, then push on every change."""
    await link.connected.wait()
    started = time.monotonic()
    seen = -1
    while time.monotonic() - started < SETTLE_MAX and link.messages != seen:
        seen = link.messages
        await asyncio.sleep(SETTLE)
    now = time.time()
    games = count_games(room.round_document(now, now).text)
    if games > MAX_GAMES:
        raise _TooManyGamesError(
            f"the round has {games} games and a lichess broadcast round holds at most "
            f"{MAX_GAMES}: set [relay] round in the config so that each relay pushes one round"
        )
    pusher.changed()
    await pusher.run(stop)


async def _keep(store: Store, stop: asyncio.Event) -> None:
    """Write what was received, every :data:`STORE_EVERY` seconds, off the event loop."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), STORE_EVERY)
        rows = store.take()
        if rows:
            try:
                await asyncio.to_thread(store.write, rows)
            except sqlite3.Error as exc:  # a full disk, say: the relay goes on
                log.warning("cannot keep %d received payloads on disk (%s)", len(rows), exc)


def _fold_again(room: Room, store: Store) -> None:
    """Fold what the relay received before its restart, as it came."""
    rows = store.load()
    for row in rows:
        try:
            envelope = payloads.decode_envelope(row.payload)
            room.apply(
                row.table, envelope, suffix=row.suffix, received=row.received, retained=row.retained
            )
        except (msgspec.DecodeError, msgspec.ValidationError, PayloadError, OverflowError):
            continue
    for table in room.tables.values():
        table.gaps.settle()
    if rows:
        log.info("%d tables known again from %d stored payloads", len(room.tables), len(rows))


def _bound_port(runner: web.AppRunner) -> int | None:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return None


def _say(message: str) -> None:
    print(f"chessbridge relay: {message}", file=sys.stderr, flush=True)


def _fail(message: str) -> int:
    logs.fatal(message, prog="chessbridge relay")
    return EXIT_USAGE
