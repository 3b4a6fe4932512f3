"""The relay at scale: N simulated tables on one Mosquitto, the relay, 200 HTTP pollers.

For each size (100, 500, 1,000 tables by default), on a private broker: one Mosquitto, or
(``--brokers cluster``) three NATS Server nodes, the relay and the bare subscriber on the first
node, the tables' publishers spread over the three (bench/brokers.py); ``--brokers mosquitto
cluster`` measures both in one invocation and prints them side by side:

1. *round start*: every table publishes its status, board and game (retained), each game a few
   moves into its opening; timed until the relay serves all N games in ``/round.pgn``;
2. *play*: for ``--play`` seconds every table makes a move at human pace (every 10 to 50 s,
   30 s on average), each as a table publishes it: two touches, the move, the clock press, the
   retained game. Meanwhile 200 pollers each fetch ``/round.pgn`` every 2 s with the ETag of
   their last answer;
3. *quiet*: ``--quiet`` seconds more of polling with nothing moving (the ``304`` answers).

Measured, as ratios in the same run: a move's way from its publish to the relay having folded
it, over the same move's way to a bare aiomqtt subscriber of the same broker (p50, p99), and a
``304`` answer of ``/round.pgn`` over a ``200``. As figures: the relay's lag behind the broker
(for each ``move``: when the relay had folded it, minus when a bare aiomqtt subscriber of the
same broker received it; both stamped with ``time.time()`` on this machine), ``/round.pgn``
response times (200 during play, 304 when quiet), the relay process's CPU (user + system over
the play phase, % of one core) and its memory (VmRSS at the end, VmHWM). The bare subscriber
shares this process with the publishers and the pollers, so it can be the slower of the two.
The relay runs in a process of its own
(``python -m bench.relay_bench --serve``): ``run_relay`` with a stamp taken after each move it
folds. Tables are published by 20 MQTT clients (a venue has one per table; the relay's work is
the same). Figures only: nothing is asserted.

    python -m bench.relay_bench [--tables 100 500 1000] [--play 45] [--quiet 10]
                                [--pollers 200] [--seed S] [--brokers mosquitto cluster]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import random
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import aiohttp
import aiomqtt
import chess

from bench import brokers
from bench.latency_bench import free_port, split_url
from bridge.wire import payloads
from tests.relay_feed import TableFeed

PUBLISHERS: Final = 20
POLL_EVERY: Final = 2.0
MOVE_EVERY: Final = (10.0, 50.0)
OPENING: Final = (8, 30)
"""Plies already played when the round's snapshot is published (random in this range)."""
TIMEOUT: Final = 120.0
_QUIET: Final = logging.getLogger("bench.relay.mqtt")
_QUIET.setLevel(logging.ERROR)  # aiomqtt's "pending publish calls" notes: expected here


# --- the relay process ---------------------------------------------------------------------


def serve(broker: str, http: str, state: str, stamps: str) -> int:
    """``run_relay`` with a stamp after each ``move`` folded; the stamps go to ``stamps``."""
    from bridge.relay import link as link_module
    from bridge.relay.run import run_relay
    from bridge.wire.config import Config

    seen: list[tuple[str, int, float]] = []
    handle = link_module.RelayLink.handle

    def stamped(
        self: link_module.RelayLink, topic: str, raw: object, *, retained: bool = False
    ) -> bool:
        changed = handle(self, topic, raw, retained=retained)
        if changed and topic.endswith("/event/move") and isinstance(raw, bytes | bytearray):
            envelope = payloads.decode_envelope(bytes(raw))
            seen.append((envelope.table, envelope.seq, time.time()))
        return changed

    link_module.RelayLink.handle = stamped  # type: ignore[method-assign]

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        return await run_relay(
            broker=broker, http=http, config=Config(), state_dir=Path(state), stop=stop
        )

    code = asyncio.run(main())
    Path(stamps).write_text(json.dumps(seen))
    return code


# --- the tables ----------------------------------------------------------------------------


@dataclass
class Table:
    feed: TableFeed
    rng: random.Random

    def opening(self) -> None:
        for _ in range(self.rng.randint(*OPENING)):
            move = self.pick()
            if move is None:
                return
            san = self.feed.board.san(move)
            self.feed.board.push(move)
            self.feed.pushed.append((move.uci(), san))

    def pick(self) -> chess.Move | None:
        moves = list(self.feed.board.legal_moves)
        if not moves:
            return None
        board = self.feed.board
        for move in self.rng.sample(moves, len(moves)):
            after = board.copy(stack=False)
            after.push(move)
            if not after.is_game_over():
                return move
        return None

    def move_items(self) -> list[tuple[str, payloads.Envelope]]:
        """Two touches, the move, the press, the retained game (as a table publishes them)."""
        move = self.pick()
        if move is None:
            return []
        feed = self.feed
        piece = feed.board.piece_at(move.from_square)
        color = payloads.color_name(feed.board.turn)
        ply = feed.board.ply() + 1
        touches = [
            payloads.TouchData(
                action=action,
                square=chess.square_name(square),
                piece=None if piece is None else piece.symbol(),
                meaning="own piece touched" if action == "lift" else "piece placed",
                ply=ply,
            )
            for action, square in _touches(move)
        ]
        items = [("event/touch", feed.envelope("touch", t)) for t in touches]
        items.append(feed.move(feed.board.san(move), spent=self.rng.randint(5, 60)))
        items.append(feed.press(color))
        items.append(feed.snapshot())
        return items


def _touches(move: chess.Move) -> tuple[tuple[Literal["lift", "place"], chess.Square], ...]:
    return (("lift", move.from_square), ("place", move.to_square))


@dataclass
class Run:
    tables: int
    broker: str
    """The broker's label: one Mosquitto, or the NATS nodes."""
    moves: int = 0
    messages: int = 0
    start_seconds: float = 0.0
    lags: list[float] = field(default_factory=list)
    published: dict[tuple[str, int], float] = field(default_factory=dict)
    """When each ``move`` was handed to its publisher (``time.time()``)."""
    relay_hops: list[float] = field(default_factory=list)
    """Each move from its publish to the relay having folded it."""
    bare_hops: list[float] = field(default_factory=list)
    """The same move from its publish to the bare subscriber holding it: the baseline."""
    full: list[float] = field(default_factory=list)
    not_modified: list[float] = field(default_factory=list)
    size: int = 0
    cpu: float = 0.0
    rss: float = 0.0
    hwm: float = 0.0
    missed: int = 0
    quiet: bool = False
    """The quiet phase: 304s are counted, 200s not."""


QUEUE: Final = "max_queued_messages 1000000\nmax_inflight_messages 100\n"
"""Mosquitto's queue as a relay of many tables needs it (NATS keeps QoS 1 in JetStream)."""


def proc_stat(pid: int) -> tuple[float, float, float]:
    """(user + system seconds, VmRSS MB, VmHWM MB) of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    memory = {line.split(":")[0]: line.split()[1] for line in status if line.startswith("Vm")}
    return cpu, int(memory["VmRSS"]) / 1024, int(memory["VmHWM"]) / 1024


async def measure(count: int, kind: brokers.Kind, args: argparse.Namespace) -> Run:
    async with brokers.running(kind, QUEUE) as broker:
        return await measure_on(broker, count, args)


async def measure_on(broker: brokers.Broker, count: int, args: argparse.Namespace) -> Run:
    run = Run(tables=count, broker=broker.label)
    rng = random.Random(args.seed + count)
    tables = [
        Table(TableFeed(f"b{n}", f"b{n}-20260501T140000Z"), random.Random(rng.random()))
        for n in range(1, count + 1)
    ]
    for number, table in enumerate(tables, 1):
        table.feed.assign(white=f"White {number}", black=f"Black {number}", round="1", board=number)
        table.opening()
    with tempfile.TemporaryDirectory(prefix="bench-relay-") as directory:
        http_port = free_port()
        stamps = Path(directory) / "stamps.json"
        relay = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.relay_bench",
            "--serve",
            broker.url_for(0),
            f"127.0.0.1:{http_port}",
            str(Path(directory) / "state"),
            str(stamps),
            stderr=asyncio.subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{http_port}"
        host, port = broker.first
        probe: dict[tuple[str, int], float] = {}
        try:
            async with (
                aiohttp.ClientSession(
                    connector=aiohttp.TCPConnector(limit=0),
                    timeout=aiohttp.ClientTimeout(total=TIMEOUT),
                ) as http,
                aiomqtt.Client(host, port, max_queued_incoming_messages=0) as listener,
            ):
                await until_up(http, base)
                await listener.subscribe(f"{payloads.TOPIC_ROOT}/table/+/event/move", qos=1)
                listening = asyncio.create_task(listen(listener, probe))
                clients = [
                    aiomqtt.Client(*split_url(broker.nodes[i % len(broker.nodes)]), logger=_QUIET)
                    for i in range(PUBLISHERS)
                ]
                async with contextlib.AsyncExitStack() as stack:
                    for client in clients:
                        await stack.enter_async_context(client)
                    started = time.monotonic()
                    await asyncio.gather(
                        *(
                            publish(clients[i % PUBLISHERS], t, start_items(t), run)
                            for i, t in enumerate(tables)
                        )
                    )
                    await until_games(http, base, count)
                    run.start_seconds = time.monotonic() - started
                    cpu_before, _, _ = proc_stat(relay.pid)
                    play_started = time.monotonic()
                    stop = asyncio.Event()
                    pollers = [
                        asyncio.create_task(poll(http, base, stop, run, i, args.pollers))
                        for i in range(args.pollers)
                    ]
                    await asyncio.gather(
                        *(
                            play(clients[i % PUBLISHERS], t, args.play, run)
                            for i, t in enumerate(tables)
                        )
                    )
                    played = time.monotonic() - play_started
                    cpu_after, _, _ = proc_stat(relay.pid)
                    run.cpu = 100 * (cpu_after - cpu_before) / played
                    await asyncio.sleep(2.0)  # the last moves reach the relay
                    run.quiet = True
                    await asyncio.sleep(args.quiet)
                    stop.set()
                    await asyncio.gather(*pollers)
                    _, run.rss, run.hwm = proc_stat(relay.pid)
                listening.cancel()
        finally:
            relay.send_signal(signal.SIGTERM)
            await asyncio.wait_for(relay.wait(), TIMEOUT)
        folded = {(t, s): at for t, s, at in json.loads(stamps.read_text())}
        for key, got in probe.items():
            at = folded.get(key)
            if at is None:
                run.missed += 1
            else:
                run.lags.append(at - got)
                sent = run.published.get(key)
                if sent is not None:
                    run.relay_hops.append(at - sent)
                    run.bare_hops.append(got - sent)
    return run


def start_items(table: Table) -> list[tuple[str, payloads.Envelope]]:
    feed = table.feed
    board = payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/ttyACM0")
    return [feed.status(), ("board", feed.envelope("board", board)), feed.snapshot()]


async def publish(
    client: aiomqtt.Client, table: Table, items: list[tuple[str, payloads.Envelope]], run: Run
) -> None:
    for suffix, envelope in items:
        retain = suffix in ("status", "board", "game")
        topic = payloads.topic(table.feed.table, suffix)
        if suffix == "event/move":
            run.published[(table.feed.table, envelope.seq)] = time.time()
        await client.publish(topic, table.feed.raw[envelope.seq], qos=1, retain=retain)
        run.messages += 1


async def play(client: aiomqtt.Client, table: Table, seconds: float, run: Run) -> None:
    end = time.monotonic() + seconds
    await asyncio.sleep(table.rng.uniform(0, MOVE_EVERY[1] - MOVE_EVERY[0]))
    while time.monotonic() < end:
        items = table.move_items()
        if not items:
            return
        await publish(client, table, items, run)
        run.moves += 1
        await asyncio.sleep(table.rng.uniform(*MOVE_EVERY))


async def listen(client: aiomqtt.Client, probe: dict[tuple[str, int], float]) -> None:
    async for message in client.messages:
        got = time.time()
        envelope = payloads.decode_envelope(bytes(message.payload))
        probe[(envelope.table, envelope.seq)] = got


async def poll(
    http: aiohttp.ClientSession, base: str, stop: asyncio.Event, run: Run, i: int, n: int
) -> None:
    await asyncio.sleep(POLL_EVERY * i / n)
    etag = ""
    while not stop.is_set():
        started = time.perf_counter()
        headers = {"If-None-Match": etag} if etag else {}
        async with http.get(f"{base}/round.pgn", headers=headers) as response:
            body = await response.read()
            took = time.perf_counter() - started
            if response.status == 200:
                etag = response.headers["ETag"]
                run.size = len(body)
                if not run.quiet:
                    run.full.append(took)
            elif response.status == 304 and run.quiet:
                run.not_modified.append(took)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), POLL_EVERY)


async def until_up(http: aiohttp.ClientSession, base: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientError):
            async with http.get(f"{base}/api/state") as response:
                if response.status == 200:
                    return
        await asyncio.sleep(0.1)
    raise SystemExit("the relay did not start")


async def until_games(http: aiohttp.ClientSession, base: str, count: int) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        async with http.get(f"{base}/round.pgn") as response:
            text = await response.text()
        if text.count('[Event "') >= count:
            return
        await asyncio.sleep(0.2)
    raise SystemExit(f"the relay did not serve {count} games in {TIMEOUT} s")


def ms(values: list[float], q: float) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]:.1f}"


def ratio(values: list[float], baseline: list[float], q: float) -> str:
    """The ``q`` quantile of ``values`` over that of ``baseline``."""
    if not values or not baseline:
        return "-"
    return f"{float(ms(values, q)) / float(ms(baseline, q)):.2f}"


def report(runs: list[Run], args: argparse.Namespace) -> None:
    python = sys.version.split()[0]
    software = "; ".join(brokers.describe(kind) for kind in args.brokers)
    print(f"relay_bench: {software}, Python {python}, {os.cpu_count()} cores")
    every = f"{args.pollers} pollers every {POLL_EVERY:g} s"
    print(f"play {args.play:g} s, quiet {args.quiet:g} s, {every}")
    print()
    print(
        "| broker | tables | moves | msgs | round start s | lag p50 ms | lag p99 ms | missed "
        "| 200 p50 ms | 200 p99 ms | round.pgn KB | 304 p50 ms | 304 p99 ms "
        "| CPU % | RSS MB | peak MB |"
    )
    print("|---|" + "---:|" * 15)
    for r in runs:
        print(
            f"| {r.broker} | {r.tables} | {r.moves} | {r.messages} | {r.start_seconds:.1f} "
            f"| {ms(r.lags, 0.5)} | {ms(r.lags, 0.99)} | {r.missed} "
            f"| {ms(r.full, 0.5)} | {ms(r.full, 0.99)} | {r.size / 1024:.0f} "
            f"| {ms(r.not_modified, 0.5)} | {ms(r.not_modified, 0.99)} "
            f"| {r.cpu:.0f} | {r.rss:.1f} | {r.hwm:.1f} |"
        )
    print()
    print(
        "as ratios measured in the same run: a move from its publish to the relay having folded "
        "it, over the same move to a bare subscriber of the same broker; a 304 over a 200"
    )
    print(
        "| broker | tables | relay / bare p50 | relay / bare p99 | 304 / 200 p50 | 304 / 200 p99 |"
    )
    print("|---|" + "---:|" * 5)
    for r in runs:
        print(
            f"| {r.broker} | {r.tables} | {ratio(r.relay_hops, r.bare_hops, 0.5)} "
            f"| {ratio(r.relay_hops, r.bare_hops, 0.99)} "
            f"| {ratio(r.not_modified, r.full, 0.5)} | {ratio(r.not_modified, r.full, 0.99)} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--play", type=float, default=45.0)
    parser.add_argument("--quiet", type=float, default=10.0)
    parser.add_argument("--pollers", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    brokers.add_option(parser)
    parser.add_argument("--serve", nargs=4, metavar=("BROKER", "HTTP", "STATE", "STAMPS"))
    args = parser.parse_args()
    if args.serve:
        return serve(*args.serve)
    runs = [
        asyncio.run(measure(count, kind, args)) for count in args.tables for kind in args.brokers
    ]
    report(runs, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
