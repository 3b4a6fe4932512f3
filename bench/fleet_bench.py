"""Many tables on one host and one broker or cluster: start after a power cut, CPU, latency.

For each size N (``--sizes``, default 10 50 100), on a private broker of its own: one
Mosquitto, or (``--brokers cluster``) three NATS Server nodes with every table given the three
nodes' list starting at a node of its own (bench/brokers.py); ``--brokers mosquitto cluster``
measures both in one invocation and prints them side by side:

0. **One daemon alone**: spawned, timed to its ``online`` and stopped: the baseline the power
   on and the power cut are divided by.
1. **Power on**: N emulated DGT boards (on ptys, in this process), then N ``chessbridge run``
   spawned at once (new state directories); the time until a subscriber holds every table's
   ``status`` = ``online``.
2. **Play** for ``--play`` seconds: every table makes a move every ``--interval`` seconds
   (2 by default; the tables' first moves spread over one interval), random legal games, lifts
   and places 50 ms apart and the clock pressed 0.1 s after. For every move that completes on
   its release (not ambiguous), its latency: the emulator writing its last place → the
   subscriber holding the ``event/move``, and beside it, every 0.5 s, a bare QoS 1 publish →
   receive of a move's size on the same broker and subscriber: the moves' p50 and p99 are
   printed as ratios to the bare ones (the subscriber and the bare publisher on the first node of
   a cluster, whatever node a table is on). CPU per move: the daemons' CPU time over the play
   (``/proc/<pid>/task/*/schedstat``) over the moves made; the broker's (all its nodes') and
   this process's CPU over the play, in % of one core.
3. **Power cut**: every daemon killed at once (SIGKILL), then N started again at once on their
   state directories (a restart resumes its game): the time until every table is ``online``
   again (each ``online`` counted only if it arrived after the restart began).

A daemon that exits with an error is started again 5 s later, as the systemd unit does
(``Restart=on-failure``, ``RestartSec=5s``); those restarts are counted, with the reasons the
daemons' logs give.

The N boards are emulated in this process, which therefore runs ``--boards-ahead`` (default 10)
nice steps ahead of the daemons and the broker (it needs the right to raise its priority, as
root; without it, it says so and shares the CPU with them). Real boards answer from their own
hardware, however busy the host: sharing the CPU equally with a hundred starting daemons, the
emulation can answer a board's identification request later than the daemon's 3 s wait, and
that daemon exits and is restarted for a reason no real board gives. The subscriber that times the
moves runs in this process, ahead too, as a display on another machine would. ``--boards-ahead
0`` measures the shared way.

``--jitter S`` sets ``[broker] connect_jitter = S`` in the daemons' config (the first
connection waits a random time up to S): compare with 0, the default. Everything runs on this
machine: the daemons, the broker and the boards' emulation share its cores, so at large N this
measures what the host can carry. Figures only: this program asserts nothing.

    python -m bench.fleet_bench [--sizes N ...] [--play S] [--interval S] [--jitter S]
                                [--boards-ahead STEPS] [--brokers mosquitto cluster]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import platform
import random
import signal
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import aiomqtt
import chess
import msgspec

from bench import brokers
from bench.latency_bench import compile_bytecode, daemon_command, do, pick_move
from bench.snapshot_bench import cpu_ns
from bridge.arbiter.positions import is_ambiguous
from drivers.choreography import steps
from drivers.dgt.emulator import DgtEmulator

STEP_PAUSE: Final = 0.05
PRESS_AFTER: Final = 0.1
ONLINE_TIMEOUT: Final = 300.0
MAX_PLIES: Final = 150
WHITE_SIDE: Final = "right"
TICKS: Final = os.sysconf("SC_CLK_TCK")


class _Envelope(msgspec.Struct):
    table: str
    data: dict[str, object]


_DECODER: Final = msgspec.json.Decoder(_Envelope)


@dataclass
class Seen:
    """What the subscriber received: each table's latest ``online`` and each move's arrival."""

    online: dict[str, float] = field(default_factory=dict)
    moves: dict[tuple[str, int], float] = field(default_factory=dict)
    bare: dict[str, float] = field(default_factory=dict)
    """Arrival of each bare publish (``bench/bare/{n}``), by ``n``."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def collect(self, client: aiomqtt.Client) -> None:
        loop = asyncio.get_running_loop()
        async for message in client.messages:
            at = loop.time()
            if message.topic.value.startswith("bench/bare/"):
                self.bare[message.topic.value.rsplit("/", 1)[1]] = at
                continue
            envelope = _DECODER.decode(message.payload)
            if message.topic.value.endswith("/status"):
                if envelope.data.get("state") == "online":
                    self.online[envelope.table] = at
                    self.changed.set()
            else:
                ply = envelope.data.get("ply")
                if isinstance(ply, int):
                    self.moves[(envelope.table, ply)] = at

    async def all_online(self, tables: list[str], since: float) -> tuple[float, list[str]]:
        """Loop time at which the last of ``tables`` was online (each after ``since``), and
        the tables still not online after ``ONLINE_TIMEOUT`` seconds."""

        def missing() -> list[str]:
            return [table for table in tables if self.online.get(table, -1.0) <= since]

        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(ONLINE_TIMEOUT):
                while missing():
                    self.changed.clear()
                    await self.changed.wait()
        online = [self.online[table] for table in tables if table not in missing()]
        return max(online, default=since), missing()


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a process (seconds, clock-tick resolution)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Table:
    name: str
    emu: DgtEmulator
    state_dir: Path
    broker: str = ""
    """Its ``--broker`` value (on a cluster, the nodes starting at its own)."""
    proc: asyncio.subprocess.Process | None = None
    board: chess.Board = field(default_factory=chess.Board)
    rng: random.Random = field(default_factory=random.Random)
    restarts: int = 0
    """Daemons of this table that exited with an error and were started again."""
    failures: list[str] = field(default_factory=list)
    """Why they exited: the exit status and the last line of the log, one per exit."""
    behind: int = 0
    """Nice steps the daemon runs behind this process (``boards_ahead``)."""


RESTART_SEC: Final = 5.0
"""As the systemd unit's ``Restart=on-failure`` with ``RestartSec=5s``."""


async def supervise(table: Table, config: Path | None) -> None:
    """Start the table's daemon and, like systemd, start it again 5 s after it fails (until
    cancelled: a power cut or the end cancel this first)."""
    while True:
        await spawn(table, config)
        assert table.proc is not None
        code = await table.proc.wait()
        if code == 0:
            return
        table.failures.append(f"exit {code}: {last_words(table)}")
        await asyncio.sleep(RESTART_SEC)
        table.restarts += 1


async def power_off(tables: list[Table], supervisors: list[asyncio.Task[None]]) -> None:
    """Every daemon killed at once (SIGKILL), with its supervisor."""
    for task in supervisors:
        task.cancel()
    await asyncio.gather(*supervisors, return_exceptions=True)
    for table in tables:
        if table.proc is not None and table.proc.returncode is None:
            table.proc.send_signal(signal.SIGKILL)
    await asyncio.gather(*(t.proc.wait() for t in tables if t.proc is not None))


async def spawn(table: Table, config: Path | None) -> None:
    argv = [
        *(["nice", "-n", str(table.behind)] if table.behind else []),
        *daemon_command(),
        "run",
        "--board",
        f"dgt:{table.emu.path}",
        "--table",
        table.name,
        "--broker",
        table.broker,
        "--state-dir",
        str(table.state_dir),
    ]
    if config is not None:
        argv += ["--config", str(config)]
    with open(table.state_dir / "daemon.log", "ab") as sink:  # noqa: ASYNC230  # opening only
        table.proc = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink
        )


@dataclass
class Play:
    moves: int = 0
    latencies: list[float] = field(default_factory=list)
    missing: int = 0


async def play_table(table: Table, seen: Seen, interval: float, until: float, out: Play) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.sleep(table.rng.uniform(0, interval))
    next_at = loop.time()
    while loop.time() < until:
        board = table.board
        move = pick_move(board, table.rng) if board.ply() < MAX_PLIES else None
        if move is None:
            return  # this table's game is over for the bench
        sequence = steps(board, move)
        for step in sequence[:-1]:
            await do(table.emu, step)
            await asyncio.sleep(STEP_PAUSE)
        await do(table.emu, sequence[-1])
        written = table.emu.last_write_at
        ambiguous = is_ambiguous(board, move)
        mover = board.turn
        board.push(move)
        ply = board.ply()
        await asyncio.sleep(PRESS_AFTER)
        await table.emu.press(WHITE_SIDE if mover == chess.WHITE else "left")
        out.moves += 1
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - loop.time()))
        arrived = seen.moves.get((table.name, ply))
        if arrived is None:
            out.missing += 1
        elif not ambiguous and written is not None:
            out.latencies.append(arrived - written)


BARE_EVERY: Final = 0.5
"""Seconds between two bare publishes during the play."""
BARE_PAYLOAD: Final = b"x" * 600
"""About a move's payload."""


async def bare_mqtt(pub: aiomqtt.Client, seen: Seen, until: float) -> list[float]:
    """Bare QoS 1 publish → receive on the same broker and subscriber while the tables play:
    the baseline of the moves' latency, measured in the same run."""
    loop = asyncio.get_running_loop()
    sent: dict[str, float] = {}
    number = 0
    while loop.time() < until:
        number += 1
        sent[str(number)] = loop.time()
        await pub.publish(f"bench/bare/{number}", BARE_PAYLOAD, qos=1)
        await asyncio.sleep(BARE_EVERY)
    await asyncio.sleep(1.0)  # the last ones delivered
    return [seen.bare[n] - t0 for n, t0 in sent.items() if n in seen.bare]


async def alone(table: Table, seen: Seen, config: Path | None) -> float:
    """Seconds from spawning ``table``'s daemon, the only one, to its ``online``; stopped after.
    The baseline of a fleet's power on, measured in the same run on the same broker."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    await spawn(table, config)
    last, missing = await seen.all_online([table.name], began)
    assert table.proc is not None
    table.proc.send_signal(signal.SIGTERM)
    await table.proc.wait()
    if missing:
        raise SystemExit(f"the daemon alone did not come online: {last_words(table)}")
    return last - began


def log_lines(table: Table) -> list[str]:
    """The lines of the table's daemon log (every start of its daemon appends to it)."""
    return (table.state_dir / "daemon.log").read_text(errors="replace").splitlines()


def last_words(table: Table) -> str:
    """The last line of the table's daemon log, with the table's own names taken out."""
    lines = log_lines(table)
    line = lines[-1] if lines else "(an empty log)"
    return line.replace(table.emu.path, "<board>").replace(table.name, "<table>")


def why_restarted(tables: list[Table]) -> None:
    """Print why daemons exited with an error (and were started again), by count."""
    reasons = collections.Counter(reason for table in tables for reason in table.failures)
    for reason, count in reasons.most_common(3):
        print(f"  {count} exited: {reason}")


@contextlib.contextmanager
def boards_ahead(steps: int) -> Iterator[int]:
    """This process (the boards' emulation) ``steps`` nice steps ahead of what it starts next
    (the daemons are started under ``nice -n`` the steps it yields); back as it was after."""
    if steps <= 0:
        yield 0
        return
    was = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, was - steps)
    except PermissionError:
        print(
            "the boards' emulation cannot run ahead of the daemons (not allowed to raise its "
            "priority): it shares the CPU with them"
        )
        yield 0
        return
    try:
        yield steps
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, was)


def explain(tables: list[Table], missing: list[str]) -> None:
    """Print what the daemons of tables that did not come online say (their logs' last lines)."""
    for table in tables:
        if table.name in missing[:3]:
            code = None if table.proc is None else table.proc.returncode
            print(
                f"{table.name} not online (exit code {code}); its log ends:",
                *log_lines(table)[-5:],
                sep="\n  ",
            )


def quantile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


async def power_on(
    tables: list[Table], seen: Seen, config: Path | None, label: str, result: dict[str, float]
) -> list[asyncio.Task[None]]:
    """Start every table's daemon at once and wait until all are online; the figures go into
    ``result`` under ``label`` (against ``one daemon alone``); the supervisors returned."""
    began = asyncio.get_running_loop().time()
    supervisors = [asyncio.create_task(supervise(table, config)) for table in tables]
    last, missing = await seen.all_online([table.name for table in tables], began)
    result[f"{label}, all online (s)"] = last - began
    result[f"{label}, all online / one alone"] = (last - began) / result[
        "one daemon alone, online (s)"
    ]
    result[f"{label}, daemons restarted"] = sum(t.restarts for t in tables)
    result[f"{label}, not online"] = len(missing)
    why_restarted(tables)
    explain(tables, missing)
    return supervisors


def cpu_s(pids: tuple[int, ...]) -> float:
    return sum(proc_cpu_s(pid) for pid in pids)


async def fleet(size: int, kind: brokers.Kind, args: argparse.Namespace) -> dict[str, float]:
    async with brokers.running(kind) as broker:
        with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
            return await fleet_on(broker, Path(tmp), size, args)


async def fleet_on(
    broker: brokers.Broker, tmp: Path, size: int, args: argparse.Namespace
) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    result: dict[str, float] = {}
    host, port = broker.first
    config: Path | None = None
    if args.jitter:
        config = tmp / "chessbridge.toml"
        config.write_text(f"[broker]\nconnect_jitter = {args.jitter}\n")
    tables: list[Table] = []
    async with contextlib.AsyncExitStack() as stack:
        behind = stack.enter_context(boards_ahead(args.boards_ahead))  # the broker started
        emu = await stack.enter_async_context(DgtEmulator())
        (tmp / "solo").mkdir()
        solo = Table("solo", emu, tmp / "solo", broker.url_for(0), behind=behind)
        for number in range(size):
            emu = await stack.enter_async_context(DgtEmulator())
            name = f"f{number:03d}"
            state_dir = tmp / name
            state_dir.mkdir()
            table = Table(
                name,
                emu,
                state_dir,
                broker.url_for(number),
                rng=random.Random(number),
                behind=behind,
            )
            tables.append(table)
        sub = await stack.enter_async_context(
            aiomqtt.Client(host, port, identifier=f"bench-{uuid.uuid4().hex[:8]}")
        )
        await sub.subscribe("chessbridge/1/table/+/status", qos=1)
        await sub.subscribe("chessbridge/1/table/+/event/move", qos=1)
        await sub.subscribe("bench/bare/#", qos=1)
        pub = await stack.enter_async_context(
            aiomqtt.Client(host, port, identifier=f"bench-pub-{uuid.uuid4().hex[:8]}")
        )
        seen = Seen()
        collector = asyncio.create_task(seen.collect(sub))
        supervisors: list[asyncio.Task[None]] = []
        try:
            # 0. one daemon alone: the baseline of the power on
            result["one daemon alone, online (s)"] = await alone(solo, seen, config)
            # 1. power on
            supervisors = await power_on(tables, seen, config, "first start", result)
            for table in tables:
                table.emu.set_clock(3600, 3600, running=WHITE_SIDE)
            await asyncio.sleep(1.0)
            # 2. play
            pids = [table.proc.pid for table in tables if table.proc is not None]
            daemons_before = sum(cpu_ns(pid) for pid in pids)
            broker_before = cpu_s(broker.pids)
            self_before = time.process_time()
            started = loop.time()
            out = Play()
            until = started + args.play
            bare_task = asyncio.create_task(bare_mqtt(pub, seen, until))
            await asyncio.gather(
                *(play_table(table, seen, args.interval, until, out) for table in tables)
            )
            bare = await bare_task
            elapsed = loop.time() - started
            daemons = (sum(cpu_ns(pid) for pid in pids) - daemons_before) / 1e9
            broker_cpu = cpu_s(broker.pids) - broker_before
            self_cpu = time.process_time() - self_before
            result["moves"] = out.moves
            result["moves not received"] = out.missing
            result["daemons' CPU per move (ms)"] = 1e3 * daemons / max(out.moves, 1)
            result["daemons' CPU (% of a core)"] = 100 * daemons / elapsed
            result["broker CPU (% of a core)"] = 100 * broker_cpu / elapsed
            result["bench process CPU (% of a core)"] = 100 * self_cpu / elapsed
            if len(out.latencies) >= 2 and len(bare) >= 2:
                result["latency samples"] = len(out.latencies)
                result["latency p50 (ms)"] = 1e3 * quantile(out.latencies, 50)
                result["latency p99 (ms)"] = 1e3 * quantile(out.latencies, 99)
                result["bare MQTT p50 (ms)"] = 1e3 * quantile(bare, 50)
                result["bare MQTT p99 (ms)"] = 1e3 * quantile(bare, 99)
                result["latency / bare MQTT, p50"] = quantile(out.latencies, 50) / quantile(
                    bare, 50
                )
                result["latency / bare MQTT, p99"] = quantile(out.latencies, 99) / quantile(
                    bare, 99
                )
            # 3. power cut
            await power_off(tables, supervisors)
            for table in tables:
                table.restarts = 0
                table.failures.clear()
            supervisors = await power_on(tables, seen, config, "after a power cut", result)
        finally:
            for task in supervisors:
                task.cancel()
            await asyncio.gather(*supervisors, return_exceptions=True)
            for table in tables:
                if table.proc is not None and table.proc.returncode is None:
                    table.proc.send_signal(signal.SIGTERM)
            for table in tables:
                if table.proc is not None:
                    try:
                        await asyncio.wait_for(table.proc.wait(), 30)
                    except TimeoutError:
                        table.proc.kill()
                        await table.proc.wait()
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 100])
    parser.add_argument("--play", type=float, default=40.0, help="seconds of play (default 40)")
    parser.add_argument(
        "--interval", type=float, default=2.0, help="seconds between a table's moves (default 2)"
    )
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="[broker] connect_jitter of the daemons"
    )
    parser.add_argument(
        "--boards-ahead",
        type=int,
        default=10,
        metavar="STEPS",
        help="nice steps the boards' emulation runs ahead of the daemons (default 10; 0: shared)",
    )
    brokers.add_option(parser)
    args = parser.parse_args()
    compile_bytecode()
    with boards_ahead(args.boards_ahead) as steps:  # may it? (said once, here)
        args.boards_ahead = steps
    print(
        f"chessbridge fleet bench: {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {'; '.join(brokers.describe(kind) for kind in args.brokers)}; "
        f"a move every {args.interval:g} s per table for {args.play:g} s; "
        f"connect_jitter {args.jitter:g} s; the boards' emulation {args.boards_ahead} nice "
        "steps ahead of the daemons",
        flush=True,
    )
    results: dict[str, dict[str, float]] = {}
    for size in args.sizes:
        for kind in args.brokers:
            column = f"{size} {'M' if kind == 'mosquitto' else 'NATS'}"
            results[column] = asyncio.run(fleet(size, kind, args))
            print(
                f"N = {size} on {kind}: "
                + ", ".join(f"{k} {v:,.2f}" for k, v in results[column].items())
            )
            print(flush=True)
    keys = list(dict.fromkeys(key for result in results.values() for key in result))
    print("columns: tables and broker (M: one Mosquitto; NATS: three NATS nodes)")
    print(f"{'':44}" + "".join(f"{column:>12}" for column in results))
    for key in keys:
        print(
            f"{key:44}"
            + "".join(f"{results[column].get(key, float('nan')):12,.2f}" for column in results)
        )


if __name__ == "__main__":
    main()
