"""``chessbridge demo``: a whole table in one process, needing nothing else installed.

An embedded MQTT broker (amqtt, the ``demo`` extra) on a loopback port that the demo prints, so
``chessbridge watch``, ``mosquitto_sub`` or a relay can join it (or, with ``--broker URL``, a
broker of your own), an emulated DGT board with a DGT 3000 clock on a pseudo-terminal, the real
daemon reading it, and the live view subscribed to the broker. A real master game is played on
the emulated board by hand-like lifts, places and clock presses, with the two staged
irregularities announced on screen before they happen; the demo exits 0 when the daemon has
published the result, or when it is stopped (SIGTERM, Ctrl-C).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import chess
import msgspec

from bridge.demo.broker import (
    DEFAULT_PORT,
    BrokerError,
    BrokerMissingError,
    EmbeddedBroker,
    start_local,
)
from bridge.demo.game import (
    ILLEGAL_BEFORE,
    OPERA_GAME,
    STAGED,
    TOUCH_MOVE_BEFORE,
    WHITE_SIDE,
    DemoGame,
    hand,
    perform,
    press_side,
)
from bridge.mqtt.session import check_tls
from bridge.table.daemon import DaemonOptions, TableDaemon
from bridge.views.shell import Caption
from bridge.wire import payloads
from bridge.wire.config import DEFAULT_RULES, BrokerSettings, Config, broker_settings
from drivers import BoardUri
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator

log = logging.getLogger("chessbridge.demo")

CONNECT_WITHIN: Final = 10.0
"""Seconds the daemon may take to open the board and reach the broker."""


class DemoError(Exception):
    """The demo cannot start; the message says why and what to do."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DemoOptions:
    """What ``chessbridge demo`` was asked to do."""

    speed: float = 1.0
    table: str = "demo"
    view: bool = True
    broker: str | None = None
    """A broker of one's own; ``None``: the embedded one."""
    port: int = DEFAULT_PORT
    """The embedded broker's port (0: any free one); if taken, a free one is used."""
    config: Config = field(default_factory=Config)
    """Credentials and TLS files for ``broker``."""


async def run_demo(
    options: DemoOptions, *, stop: asyncio.Event | None = None, game: DemoGame = OPERA_GAME
) -> int:
    """Run the demo; 0 when the daemon published the game's result or ``stop`` was set.

    Returns:
        0, or 1 when the daemon did not record the whole game.

    Raises:
        DemoError: the broker URL is unusable, the embedded broker cannot start or is not
            installed, or the daemon did not reach the broker.
    """
    stop = stop if stop is not None else asyncio.Event()
    embedded = None
    if options.broker is None:
        embedded = await _start_embedded(options.port)
        url = embedded.url
    else:
        url = options.broker
    try:
        settings = _settings(url, options.config)
        return await _run(options, url, settings, embedded is not None, stop, game)
    finally:
        if embedded is not None:
            await embedded.close()


async def _run(
    options: DemoOptions,
    url: str,
    settings: BrokerSettings,
    embedded: bool,
    stop: asyncio.Event,
    game: DemoGame,
) -> int:
    caption = Caption()
    join = _join_hint(url, settings, embedded)
    title = f"demo: {game.white} - {game.black}, {game.event}  (Ctrl-C stops)"
    print(f"chessbridge demo: {join}", file=sys.stderr, flush=True)
    caption.show(title, join)
    finished = asyncio.Event()
    with tempfile.TemporaryDirectory(prefix="chessbridge-demo-") as state:
        async with DgtEmulator(speed=options.speed) as emu:
            daemon = TableDaemon(
                DaemonOptions(
                    board=BoardUri("dgt", emu.path),
                    table=options.table,
                    broker=_daemon_broker(settings, embedded),
                    rules=DEFAULT_RULES,
                    state_dir=Path(state),
                    config=options.config,
                )
            )
            # The players, for the headers of the PGN a relay makes of the demo's game.
            daemon.assignment = payloads.Assignment(
                white=game.white, black=game.black, event=game.event, round="1", board=1
            )
            tasks = [
                asyncio.create_task(daemon.run(finished), name="daemon"),
                asyncio.create_task(_view(options, caption, finished, settings), name="view"),
            ]
            player = asyncio.create_task(
                _play(emu, daemon, game, options.speed, caption, title, url), name="player"
            )
            stopper = asyncio.create_task(stop.wait(), name="stop")
            ok = stopped = False
            try:
                await asyncio.wait({player, stopper, tasks[0]}, return_when=asyncio.FIRST_COMPLETED)
                stopped = stop.is_set() and not player.done()
                player.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    ok = await player
            finally:
                stopper.cancel()
                finished.set()
                await asyncio.gather(*tasks, stopper, return_exceptions=True)
            crash = tasks[0].exception() if not tasks[0].cancelled() else None
            if crash is not None:
                raise DemoError(f"the daemon stopped: {crash}") from crash
    if stopped:
        print("chessbridge demo: stopped", file=sys.stderr)
        return 0
    if ok:
        print(f"chessbridge demo: game over, {game.result}", file=sys.stderr)
        return 0
    print("chessbridge demo: the daemon did not record the whole game", file=sys.stderr)
    return 1


def _daemon_broker(settings: BrokerSettings, embedded: bool) -> BrokerSettings:
    """The embedded broker (amqtt) speaks MQTT 3.1.1 only and does not answer an MQTT 5
    connection at all: the daemon is told so."""
    if not embedded:
        return settings
    return msgspec.structs.replace(settings, mqtt5=False)


async def _play(
    emu: DgtEmulator,
    daemon: TableDaemon,
    game: DemoGame,
    speed: float,
    caption: Caption,
    title: str,
    url: str,
) -> bool:
    """Play ``game`` by hand on the emulator; true when the daemon recorded it all (its
    broker at ``url``).

    Two irregularities are staged, as docs/product.md promises of the demo, and announced first: a
    touch-move breach and an illegal move completed by the clock (then taken back and replaced
    by the real move).

    Raises:
        DemoError: the daemon did not open the board or reach the broker in time.
    """
    try:
        await asyncio.wait_for(daemon.first_open.wait(), CONNECT_WITHIN)
        await asyncio.wait_for(daemon.publisher.connected.wait(), CONNECT_WITHIN)
    except TimeoutError:
        raise DemoError(
            f"the daemon did not reach the MQTT broker {url} within "
            f"{CONNECT_WITHIN:.0f} s: check the URL, the network and the credentials"
        ) from None
    rng = random.Random(1858)
    board = chess.Board()
    emu.set_clock(300, 300, running=WHITE_SIDE)
    await asyncio.sleep(1.0 / speed)
    join = caption.lines
    for san in game.moves.split():
        await asyncio.sleep(rng.uniform(0.6, 1.6) / speed)  # thinking
        if san in STAGED:
            caption.show(title, STAGED[san])
            await asyncio.sleep(max(2.0, 4.0 / speed))  # time to read it
        if san == TOUCH_MOVE_BEFORE:
            await hand(emu, speed, ("lift", "b8"), ("place", "b8", "n"))
        if san == ILLEGAL_BEFORE:
            await hand(emu, speed, ("lift", "f1"), ("place", "c5", "B"))
            await emu.press(press_side(chess.WHITE))
            await asyncio.sleep(1.0 / speed)  # the arbiter steps in
            await hand(emu, speed, ("lift", "c5"), ("place", "f1", "B"))
            await emu.press(press_side(chess.BLACK))  # White's clock runs again
        move = board.parse_san(san)
        await perform(emu, board, move, rng.choice(list(Style)), rng, speed)
        mover = board.turn
        board.push(move)
        if not board.is_game_over():
            await asyncio.sleep(rng.uniform(0.1, 0.3) / speed)
            await emu.press(press_side(mover))
        if san in STAGED:
            await asyncio.sleep(max(1.0, 2.0 / speed))
            caption.show(*join)
    for _ in range(100):
        if daemon.arbiter.result is not None:
            break
        await asyncio.sleep(0.05)
    return daemon.arbiter.board.move_stack == board.move_stack and daemon.arbiter.result is not None


async def _view(
    options: DemoOptions, caption: Caption, stop: asyncio.Event, settings: BrokerSettings
) -> None:
    from bridge.views.shell import watch

    await watch(settings, table=options.table, plain=not options.view, stop=stop, caption=caption)


def _settings(url: str, config: Config) -> BrokerSettings:
    try:
        settings = broker_settings(url, config.broker)
        check_tls(settings)
    except ValueError as exc:
        raise DemoError(str(exc)) from exc
    return settings


def _join_hint(url: str, settings: BrokerSettings, embedded: bool) -> str:
    if not embedded:
        return f"publishing to {url}; watch it with: chessbridge watch --broker {url}"
    return (
        f"embedded MQTT broker at {url}; join it from another terminal: chessbridge watch "
        f"--broker {url}  or  mosquitto_sub -h {settings.host} -p {settings.port} "
        "-t 'chessbridge/1/#' -v"
    )


async def _start_embedded(port: int) -> EmbeddedBroker:
    """The embedded broker on ``127.0.0.1:port`` (a free port if that one is taken)."""
    try:
        return await start_local(port, prog="chessbridge demo")
    except BrokerMissingError as exc:
        raise DemoError(
            "the demo's embedded MQTT broker is not installed: pip install 'chessbridge[demo]', "
            "or give the demo a broker of your own with --broker URL"
        ) from exc
    except BrokerError as exc:
        raise DemoError(f"{exc}; try another --port") from exc
