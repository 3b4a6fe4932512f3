"""``chessbridge demo``: a whole table in one process, needing nothing else installed.

An embedded MQTT broker (amqtt) on a free loopback port, an emulated DGT board with a DGT 3000
clock on a pseudo-terminal, the real daemon reading it, and the live view subscribed to the
broker. A real master game is played on the emulated board by hand-like lifts, places and clock
presses; the demo exits 0 when the daemon has published the result.
"""

from __future__ import annotations

import asyncio
import logging
import random
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

import chess

from bridge.demo.game import (
    ILLEGAL_BEFORE,
    OPERA_GAME,
    TOUCH_MOVE_BEFORE,
    WHITE_SIDE,
    DemoGame,
    hand,
    perform,
    press_side,
)
from bridge.table.daemon import DaemonOptions, TableDaemon
from bridge.wire.config import DEFAULT_RULES
from drivers import BoardUri
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator

log = logging.getLogger("chessbridge.demo")


class DemoError(Exception):
    """The demo cannot start; the message says why and what to do."""


async def run_demo(*, speed: float, table: str, view: bool, game: DemoGame = OPERA_GAME) -> int:
    """Run the demo; 0 when the daemon published the game's result, 1 otherwise."""
    port = _free_port()
    broker = await _start_broker(port)
    url = f"mqtt://127.0.0.1:{port}"
    stop = asyncio.Event()
    ok = False
    try:
        with tempfile.TemporaryDirectory(prefix="chessbridge-demo-") as state:
            async with DgtEmulator(speed=speed) as emu:
                print(
                    f"chessbridge demo: broker {url}, board dgt:{emu.path}, table {table!r}; "
                    f"{game.white} - {game.black}, {game.event}",
                    file=sys.stderr,
                )
                daemon = TableDaemon(
                    DaemonOptions(
                        board=BoardUri("dgt", emu.path),
                        table=table,
                        broker=url,
                        rules=DEFAULT_RULES,
                        state_dir=Path(state),
                    )
                )
                tasks = [asyncio.create_task(daemon.run(stop), name="daemon")]
                tasks.append(asyncio.create_task(_view(url, table, view, stop), name="view"))
                try:
                    await asyncio.wait_for(daemon.first_open.wait(), 10)
                    await asyncio.wait_for(daemon.publisher.connected.wait(), 10)
                    ok = await _play(emu, daemon, game, speed)
                    await asyncio.sleep(1.5)  # let the view show the final position
                finally:
                    stop.set()
                    await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await broker.shutdown()
    if ok:
        print(f"chessbridge demo: game over, {game.result}", file=sys.stderr)
        return 0
    print("chessbridge demo: the daemon did not record the whole game", file=sys.stderr)
    return 1


async def _play(emu: DgtEmulator, daemon: TableDaemon, game: DemoGame, speed: float) -> bool:
    """Play ``game`` by hand on the emulator; true when the daemon recorded it all.

    Two irregularities are staged, as PRODUCT promises of the demo: a touch-move breach and an
    illegal move completed by the clock (then taken back and replaced by the real move).
    """
    rng = random.Random(1858)
    board = chess.Board()
    emu.set_clock(300, 300, running=WHITE_SIDE)
    await asyncio.sleep(1.0 / speed)
    for san in game.moves.split():
        await asyncio.sleep(rng.uniform(0.6, 1.6) / speed)  # thinking
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
    for _ in range(100):
        if daemon.arbiter.result is not None:
            break
        await asyncio.sleep(0.05)
    return daemon.arbiter.board.move_stack == board.move_stack and daemon.arbiter.result is not None


async def _view(url: str, table: str, view: bool, stop: asyncio.Event) -> None:
    from bridge.views.shell import watch  # the view is optional

    await watch(url, table=table, plain=not view, username=None, password=None, stop=stop)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def _start_broker(port: int) -> Any:  # amqtt ships no type hints
    try:
        from amqtt.broker import Broker  # only the demo needs it: the `demo` extra
    except ImportError as exc:
        raise DemoError(
            "the demo's embedded MQTT broker is not installed: pip install 'chessbridge[demo]', "
            "or give the demo a broker of your own with --broker URL"
        ) from exc

    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(logging.ERROR)
    config = {
        "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}},
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }
    broker = Broker(config)
    try:
        await broker.start()
    except Exception as exc:
        raise RuntimeError(f"the embedded MQTT broker could not start on 127.0.0.1:{port}") from exc
    return broker
