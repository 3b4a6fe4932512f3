"""A move's way from the board to a LiveChess websocket client, next to its way to an MQTT
subscriber, in the same run.

One process holds the emulated DGT board (on a pty), an aiomqtt subscriber of the tables'
``event/move`` and two websocket clients of the LiveChess API (aiohttp), subscribed to the
table as the lichess page subscribes (a ``setup`` of the start position first): one of
``chessbridge run --livechess``, the table's own API, fed by the daemon in its own process, and
one of ``chessbridge livechess --broker``, a venue's API, fed through the broker. The daemon and
the venue's API are subprocesses; a private Mosquitto is between them. Both ends of every
interval are read from this process's event loop clock: from the emulator writing the last byte
of the message that completes an unambiguous move (the emulator's ``on_write`` hook) to

* the MQTT subscriber holding its ``event/move`` (the baseline: docs/product.md §4's board →
  subscriber);
* each websocket client holding the first feed whose ``san`` holds the move.

Random legal games are played move by move with lifts and places (a new game, daemon and table
when one ends; the venue's API follows every table). Ambiguous moves (a piece that could still
go further) are completed by the clock press and not timed. Each run prints the three, and the
ratios of each websocket to the MQTT subscriber at p50 and p99. Figures only: this program
asserts nothing about time.

    python -m bench.livechess_bench [--runs R] [--samples N] [--seed S]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import tempfile
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import aiohttp
import aiomqtt
import chess

from bench.latency_bench import (
    WHITE_SIDE,
    Inbox,
    WriteTap,
    compile_bytecode,
    daemon_command,
    do,
    field_update,
    free_port,
    header,
    pick_move,
    private_broker,
    quantiles,
    running_daemon,
    split_url,
)
from bridge.arbiter.positions import is_ambiguous
from drivers.choreography import steps
from drivers.dgt.emulator import DgtEmulator

STEP_PAUSE: Final = 0.05
"""Seconds between the lifts and places of one move (a quick hand)."""
SETTLE: Final = 0.03
"""Seconds of quiet before each timed move, so the previous one's traffic is done."""
MAX_PLIES: Final = 120
TIMEOUT: Final = 10.0


class Feeds:
    """One websocket client of the API: when each length of each feed's ``san`` first came."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.arrivals: dict[tuple[int, int], float] = {}
        """(feed id, length of ``san``) -> when it came."""
        self.answers: dict[int, dict[str, object]] = {}
        self._changed = asyncio.Event()

    async def read(self) -> None:
        loop = asyncio.get_running_loop()
        async for message in self.ws:
            at = loop.time()
            decoded = json.loads(message.data)
            param = decoded["param"]
            if decoded["response"] != "feed":
                self.answers[decoded["id"]] = decoded
            elif isinstance(param.get("san"), list):
                self.arrivals.setdefault((decoded["id"], len(param["san"])), at)
            self._changed.set()

    async def _until(self, key: object, found: dict[object, object]) -> None:
        async with asyncio.timeout(TIMEOUT):
            while key not in found:
                self._changed.clear()
                await self._changed.wait()

    async def san(self, feed: int, length: int) -> float:
        """When feed ``feed`` first carried a ``san`` of ``length`` moves."""
        await self._until((feed, length), self.arrivals)  # type: ignore[arg-type]
        return self.arrivals[feed, length]

    async def call(self, call: int, name: str, param: dict[str, object]) -> bool:
        """Whether the call was answered (not refused)."""
        self.answers.pop(call, None)
        await self.ws.send_str(json.dumps({"id": call, "call": name, "param": param}))
        await self._until(call, self.answers)  # type: ignore[arg-type]
        return self.answers[call]["response"] == "call"

    async def follow(self, table: str, feed: int) -> None:
        """Subscribe to ``table`` as feed ``feed`` and set up the start position, as the
        lichess page does (again until the API knows the table and its game)."""
        subscribe = {"feed": "eboardevent", "id": feed, "param": {"serialnr": table}}
        setup = {"id": feed, "method": "setup", "param": {"fen": chess.STARTING_FEN}}
        async with asyncio.timeout(TIMEOUT):
            for call, name, param in ((feed, "subscribe", subscribe), (feed + 1, "call", setup)):
                while not await self.call(call, name, param):  # noqa: ASYNC110  # asks again
                    await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def feeds(port: int) -> AsyncIterator[Feeds]:
    async with aiohttp.ClientSession() as http:
        for _ in range(100):  # the API listens a moment after its process starts
            try:
                ws = await http.ws_connect(f"ws://127.0.0.1:{port}/api/v1.0")
                break
            except aiohttp.ClientConnectionError:
                await asyncio.sleep(0.1)
        else:
            raise SystemExit(f"the LiveChess API on port {port} never answered")
        client = Feeds(ws)
        reader = asyncio.create_task(client.read())
        try:
            yield client
        finally:
            reader.cancel()
            await ws.close()


@contextlib.asynccontextmanager
async def venue_api(broker: str, port: int, log: Path) -> AsyncIterator[None]:
    """``chessbridge livechess --broker`` on ``port``; stopped at the end."""
    with log.open("ab") as sink:
        proc = await asyncio.create_subprocess_exec(
            *daemon_command(),
            "livechess",
            "--broker",
            broker,
            "--listen",
            f"127.0.0.1:{port}",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
        )
    try:
        yield
    finally:
        proc.terminate()
        await proc.wait()


@dataclass
class Samples:
    mqtt: list[float] = field(default_factory=list)
    table_api: list[float] = field(default_factory=list)
    venue_api: list[float] = field(default_factory=list)
    games: int = 0
    plies: int = 0


async def run(broker: str, seed: int, wanted: int) -> Samples:
    rng = random.Random(seed)
    samples = Samples()
    host, port = split_url(broker)
    inbox = Inbox()
    with tempfile.TemporaryDirectory(prefix="bench-livechess-") as tmp:
        venue_port = free_port()
        async with (
            aiomqtt.Client(host, port, identifier=f"bench-sub-{uuid.uuid4().hex[:8]}") as sub,
            venue_api(broker, venue_port, Path(tmp) / "venue.log"),
            feeds(venue_port) as venue,
        ):
            for suffix in ("event/move", "event/result", "status"):
                await sub.subscribe(f"chessbridge/1/table/+/{suffix}", qos=1)
            collector = asyncio.create_task(inbox.collect(sub))
            try:
                while len(samples.mqtt) < wanted:
                    samples.games += 1
                    table = f"bench{uuid.uuid4().hex[:8]}"
                    state = Path(tmp) / table
                    await play_game(rng, wanted, samples, inbox, venue, broker, table, state)
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector
    return samples


async def play_game(
    rng: random.Random,
    wanted: int,
    samples: Samples,
    inbox: Inbox,
    venue: Feeds,
    broker: str,
    table: str,
    state_dir: Path,
) -> None:
    tap = WriteTap()
    api_port = free_port()
    async with DgtEmulator(speed=1.0) as emu:
        emu.on_write = tap
        async with running_daemon(
            f"dgt:{emu.path}", table, broker, state_dir, "--livechess", f"127.0.0.1:{api_port}"
        ):
            await inbox.wait("status", table, "online")
            async with feeds(api_port) as own:
                await own.follow(table, 1)  # a table id is taken for its serialnr
                feed = 10 * samples.games
                await venue.follow(table, feed)
                emu.set_clock(3600, 3600, running=WHITE_SIDE)
                await asyncio.sleep(0.2)
                board = chess.Board()
                while board.ply() < MAX_PLIES and len(samples.mqtt) < wanted:
                    move = pick_move(board, rng)
                    if move is None or ("result", table) in inbox.arrivals:
                        break
                    timed = not is_ambiguous(board, move)
                    written = await make_move(emu, tap, board, move)
                    mover = board.turn
                    ply = board.ply() + 1
                    if timed:
                        await asyncio.sleep(SETTLE)  # the retained game's wait is no move's
                    await emu.press(WHITE_SIDE if mover == chess.WHITE else "left")
                    board.push(move)
                    samples.plies += 1
                    received, _, _ = await inbox.wait("move", table, str(ply))
                    at_own = await own.san(1, ply)
                    at_venue = await venue.san(feed, ply)
                    if timed:
                        samples.mqtt.append(received - written)
                        samples.table_api.append(at_own - written)
                        samples.venue_api.append(at_venue - written)
                    await asyncio.sleep(SETTLE)


async def make_move(emu: DgtEmulator, tap: WriteTap, board: chess.Board, move: chess.Move) -> float:
    """Make ``move`` by hand; when the emulator wrote the last byte of its last place."""
    sequence = steps(board, move)
    for step in sequence[:-1]:
        await do(emu, step)
        await asyncio.sleep(STEP_PAUSE)
    await asyncio.sleep(SETTLE)
    start = tap.total
    await do(emu, sequence[-1])
    return await tap.written_at(field_update(sequence[-1]), 5, start)


def report(samples: Samples) -> None:
    print(f"{samples.games} games, {samples.plies} plies, {len(samples.mqtt)} timed")
    print(f"{'milliseconds, unambiguous moves':46}{'N':>6}{'p50':>9}{'p90':>9}{'p99':>9}")
    rows = [
        ("board -> MQTT subscriber (event/move)", samples.mqtt),
        ("board -> websocket, run --livechess", samples.table_api),
        ("board -> websocket, livechess --broker", samples.venue_api),
    ]
    for label, values in rows:
        p50, p90, p99 = quantiles(values)
        print(f"{label:46}{len(values):>6}{p50:9.2f}{p90:9.2f}{p99:9.2f}")
    base = quantiles(samples.mqtt)
    for label, values in rows[1:]:
        mine = quantiles(values)
        print(
            f"{label.removeprefix('board -> ')} / MQTT subscriber: "
            f"p50 {mine[0] / base[0]:.2f}, p99 {mine[2] / base[2]:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--samples", type=int, default=200, help="unambiguous moves to time (default 200)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed of run 1 (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="independent runs (default 3)")
    parser.add_argument("--broker", help="mqtt://HOST:PORT (default: a private mosquitto)")
    args = parser.parse_args()
    compile_bytecode()
    with contextlib.ExitStack() as stack:
        broker = args.broker or stack.enter_context(private_broker())
        print(header(broker).replace("latency bench", "LiveChess bench"))
        for number in range(1, args.runs + 1):
            print(f"--- run {number} of {args.runs} (seed {args.seed + number - 1})", flush=True)
            report(asyncio.run(run(broker, args.seed + number - 1, args.samples)))


if __name__ == "__main__":
    main()
