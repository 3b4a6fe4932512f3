"""Resident memory of ``chessbridge run`` after a whole game, and its time from start to online.

* Memory: one daemon reads an emulated DGT board while Morphy's Opera Game is played on it by
  hand (lifts, places, clock presses); when the result is out, ``VmRSS`` and ``VmHWM`` are read
  from ``/proc/<pid>/status``.
* Start → online: the time from spawning ``chessbridge run`` (new table, new state directory)
  to an aiomqtt subscriber in this process holding the retained ``status`` = ``online`` from a
  local broker; the median of ``--starts`` starts. This includes the interpreter start, the
  imports, opening the board (the emulator answers at once) and the MQTT connection. Next to
  it, interleaved start by start, the floor: spawning an interpreter that imports the daemon's
  dependencies (chess, aiomqtt, serial, serial_asyncio_fast, msgspec) and exits. Bar: start →
  online within 1.3× of that floor (medians), and within 1 s.
* The same two as CPU time: the daemon's threads' time on a CPU until its ``online`` arrives
  (``/proc/<pid>/task/*/schedstat``), and the floor's user and system time to its exit
  (``wait4``). Waiting (the broker, the board, a CPU taken by other work) is not in it, so on a
  shared machine it tells the daemon's own work apart from the machine's noise better than the
  wall-clock ratio does; the bar is the wall-clock one.
* For comparison, the same figures for a bare interpreter (``python -c pass``: spawn to exit,
  peak RSS) and for importing the daemon's modules only.
* ``--cpu-quota 25``: every process started (daemon, floor) runs under 25% of one CPU, a
  Raspberry Pi stand-in (bench.quota).

Figures only: this program asserts nothing about time or memory.

    python -m bench.daemon_bench [--starts N] [--speed X] [--broker URL]
                                 [--cpu-quota PCT [--cpu-period MS]]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Final, NamedTuple

import aiomqtt
import chess

from bench import quota
from bench.latency_bench import (
    Wrap,
    compile_bytecode,
    daemon_command,
    mosquitto_version,
    private_broker,
    running_daemon,
    split_url,
    unwrapped,
)
from bench.snapshot_bench import cpu_ns
from bridge.demo.game import OPERA_GAME, perform, press_side
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator

TIMEOUT: Final = 15.0
RSS_TARGET_MB: Final = 45.0
ONLINE_TARGET_S: Final = 1.0
FLOOR_TARGET: Final = 1.3
"""docs/product.md §4: start → online within this many times the import floor (medians)."""


def proc_status(pid: int) -> dict[str, int]:
    """The ``kB`` fields of ``/proc/<pid>/status`` (VmRSS, VmHWM, RssAnon, RssFile...)."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        match = re.fullmatch(r"(\w+):\s+(\d+) kB", line)
        if match:
            out[match.group(1)] = int(match.group(2))
    return out


class Statuses:
    """Arrival time of the first retained ``online`` of each table."""

    def __init__(self) -> None:
        self.online: dict[str, float] = {}
        self.results: set[str] = set()
        self._changed = asyncio.Event()

    async def collect(self, client: aiomqtt.Client) -> None:
        loop = asyncio.get_running_loop()
        async for message in client.messages:
            at = loop.time()
            table, suffix = message.topic.value.split("/", 4)[3:]
            if suffix == "status" and b'"state":"online"' in message.payload:
                self.online.setdefault(table, at)
            elif suffix == "event/result":
                self.results.add(table)
            self._changed.set()

    async def wait(self, table: str, *, result: bool = False) -> float:
        async with asyncio.timeout(TIMEOUT):
            while table not in self.online or (result and table not in self.results):
                self._changed.clear()
                await self._changed.wait()
        return self.online[table]


async def whole_game_memory(
    statuses: Statuses, broker: str, tmp: Path, speed: float, wrap: Wrap = unwrapped
) -> dict[str, int]:
    """Play the Opera Game against one daemon; its /proc status at the end."""
    table = f"bench{uuid.uuid4().hex[:8]}"
    rng = random.Random(1858)
    async with (
        DgtEmulator(speed=speed) as emu,
        running_daemon(f"dgt:{emu.path}", table, broker, tmp / table, wrap=wrap) as proc,
    ):
        await statuses.wait(table)
        emu.set_clock(300, 300, running=press_side(chess.WHITE))
        board = chess.Board()
        for san in OPERA_GAME.moves.split():
            move = board.parse_san(san)
            await perform(emu, board, move, rng.choice(list(Style)), rng, speed)
            mover = board.turn
            board.push(move)
            if not board.is_game_over():
                await emu.press(press_side(mover))
            await asyncio.sleep(0.4 / speed)
        await statuses.wait(table, result=True)
        await asyncio.sleep(0.5)  # the last payloads drained
        return proc_status(proc.pid)


DEPENDENCIES: Final = "import chess, aiomqtt, serial, serial_asyncio_fast, msgspec"
"""What the daemon cannot start without: the floor of its start."""


class Start(NamedTuple):
    """One start: seconds from spawn to ``online`` (or to exit, for the floor), and CPU seconds."""

    wall: float
    cpu: float


async def start_to_online(
    statuses: Statuses, broker: str, state_dir: Path, board: str, wrap: Wrap
) -> Start:
    """From spawning the daemon to holding its retained ``online`` (a restart of the table
    whose state is in ``state_dir``: each run has a table name of its own)."""
    table = f"bench{uuid.uuid4().hex[:8]}"
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with running_daemon(board, table, broker, state_dir, wrap=wrap) as proc:
        online = await statuses.wait(table)
        # The threads' schedstat: one that has ended is not counted (none ends before online).
        cpu = cpu_ns(proc.pid) / 1e9
    return Start(online - started, cpu)


async def floor_and_starts(
    statuses: Statuses, broker: str, tmp: Path, wrap: Wrap, starts: int
) -> tuple[list[Start], list[Start]]:
    """Interleaved: spawn → exit of the dependencies' import, and start → online.

    The daemon restarts on one state directory, as after a power cut (its first start, which
    creates the database, is not counted)."""
    floor: list[Start] = []
    online: list[Start] = []
    async with DgtEmulator() as emu:
        board = f"dgt:{emu.path}"
        await start_to_online(statuses, broker, tmp / "restarts", board, wrap)
        for _ in range(starts):
            floor.append(
                await asyncio.to_thread(spawn_once, wrap([sys.executable, "-c", DEPENDENCIES]))
            )
            online.append(await start_to_online(statuses, broker, tmp / "restarts", board, wrap))
    return floor, online


def spawn_once(argv: list[str]) -> Start:
    t0 = time.perf_counter()
    with subprocess.Popen(argv) as proc:
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return Start(wall, usage.ru_utime + usage.ru_stime)


def spawn_to_exit(argv: list[str], runs: int) -> float:
    """Median seconds from spawning ``argv`` to its exit."""
    return statistics.median(spawn_once(argv).wall for _ in range(runs))


def peak_rss_kb(code: str) -> int:
    """VmHWM (kB) of a fresh interpreter that runs ``code``, read by itself at the end.

    Read from inside: a parent's ``ru_maxrss`` of the child also counts the pages the child
    shared with the parent between fork and exec."""
    report = "print(open('/proc/self/status').read())"
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{report}"], capture_output=True, text=True, check=True
    ).stdout
    match = re.search(r"^VmHWM:\s+(\d+) kB$", out, re.MULTILINE)
    if match is None:
        raise SystemExit("no VmHWM in /proc/self/status")
    return int(match.group(1))


GC_PROBE: Final = """
import gc, time
spent, began = [0, 0.0], [0.0]
def probe(phase, info):
    if phase == "start":
        began[0] = time.perf_counter()
    else:
        spent[0] += 1
        spent[1] += time.perf_counter() - began[0]
gc.callbacks.append(probe)
import bridge.__main__
x = [[] for _ in range(10_000)]  # enough allocations for the young generation's next collection
print(spent[0], spent[1])
"""


def import_collections() -> tuple[int, float]:
    """The garbage collections run while ``bridge.__main__`` is imported (and just after it),
    and their seconds: a share of the start that the floor's imports pay too."""
    out = subprocess.run(
        [sys.executable, "-c", GC_PROBE], capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), float(out[1])


def import_tree(min_ms: float = 10.0, depth: int = 4) -> list[tuple[int, str, float]]:
    """``import bridge.__main__`` as a tree: (depth, module, cumulative ms) of the modules
    taking at least ``min_ms``, down to ``depth`` levels, in import order."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import bridge.__main__"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows: list[tuple[int, str, float]] = []
    for line in result.stderr.splitlines():
        match = re.fullmatch(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)", line)
        if match is None:
            continue
        level = (len(match.group(2)) - 1) // 2
        cumulative = int(match.group(1)) / 1000
        if level < depth and cumulative >= min_ms:
            rows.append((level, match.group(3), cumulative))
    # importtime prints a module when its import ends, after its children: put parents first.
    pending: dict[int, list[tuple[int, str, float]]] = {}
    for row in rows:
        children = pending.pop(row[0] + 1, [])
        pending.setdefault(row[0], []).extend([row, *children])
    return pending.get(0, [])


async def run(args: argparse.Namespace, broker: str, wrap: Wrap) -> None:
    host, port = split_url(broker)
    statuses = Statuses()
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as directory:
        tmp = Path(directory)
        async with aiomqtt.Client(host, port, identifier=f"bench-{uuid.uuid4().hex[:8]}") as sub:
            await sub.subscribe("chessbridge/1/table/+/status", qos=1)
            await sub.subscribe("chessbridge/1/table/+/event/result", qos=1)
            collector = asyncio.create_task(statuses.collect(sub))
            try:
                floor, starts = await floor_and_starts(statuses, broker, tmp, wrap, args.starts)
                memory = await whole_game_memory(statuses, broker, tmp, args.speed, wrap)
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector
    base_time = spawn_to_exit([sys.executable, "-c", "pass"], args.starts)
    base_peak = peak_rss_kb("pass")
    import_time = spawn_to_exit([sys.executable, "-c", "import bridge.__main__"], args.starts)
    import_peak = peak_rss_kb("import bridge.__main__")

    print(
        f"chessbridge daemon bench: {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, mosquitto {mosquitto_version()} at {broker}; "
        f"daemon = {' '.join(Path(part).name for part in daemon_command())} run"
    )
    rss, hwm = memory.get("VmRSS", 0) / 1024, memory.get("VmHWM", 0) / 1024
    anon, files = memory.get("RssAnon", 0) / 1024, memory.get("RssFile", 0) / 1024
    print(f"{'':44}{'value':>10}{'target':>10}")
    print(f"{'RSS after the Opera Game (VmRSS), MB':44}{rss:10.1f}{RSS_TARGET_MB:10.0f}")
    print(f"{'  peak (VmHWM), MB':44}{hwm:10.1f}")
    print(f"{'  of which anonymous / file-backed, MB':44}{f'{anon:.1f} / {files:.1f}':>10}")
    walls = [start.wall for start in starts]
    median = statistics.median(walls)
    print(
        f"{f'start -> online, median of {len(starts)}, s':44}{median:10.3f}{ONLINE_TARGET_S:10.1f}"
    )
    print(f"{'  min / max, s':44}{f'{min(walls):.3f} / {max(walls):.3f}':>10}")
    floors = [start.wall for start in floor]
    base = statistics.median(floors)
    print(f"{'floor: spawn -> exit of the import of deps, s':44}{base:10.3f}")
    print(f"{'  min / max, s':44}{f'{min(floors):.3f} / {max(floors):.3f}':>10}")
    ratio = median / base
    print(f"{'start -> online / floor (medians)':44}{ratio:10.2f}{FLOOR_TARGET:10.1f}")
    cpu = statistics.median(start.cpu for start in starts)
    cpu_floor = statistics.median(start.cpu for start in floor)
    print(f"{'CPU until online, median, s':44}{cpu:10.3f}")
    print(f"{'CPU of the floor, median, s':44}{cpu_floor:10.3f}")
    print(f"{'CPU until online / CPU of the floor':44}{cpu / cpu_floor:10.2f}")
    print(f"{'python -c pass: spawn -> exit, median, s':44}{base_time:10.3f}")
    print(f"{'python -c pass: peak RSS, MB':44}{base_peak / 1024:10.1f}")
    print(f"{'import bridge.__main__: spawn -> exit, s':44}{import_time:10.3f}")
    print(f"{'import bridge.__main__: peak RSS, MB':44}{import_peak / 1024:10.1f}")
    collections, collecting = import_collections()
    print(f"{'  garbage collections in it, ms':44}{f'{collections} / {collecting * 1e3:.2f}':>10}")
    print("import bridge.__main__, modules taking 10 ms or more (cumulative, ms):")
    for level, name, millis in import_tree():
        print(f"  {'  ' * level}{name:{40 - 2 * level}}{millis:8.1f}")
    print(verdict(ratio, median, rss))


def verdict(ratio: float, online_s: float, rss_mb: float) -> str:
    """The bars, one line: start → online against the floor and in seconds, and the memory."""
    parts = [
        f"start -> online {ratio:.2f}x the floor (bar {FLOOR_TARGET:g}x): "
        + ("met" if ratio <= FLOOR_TARGET else "MISSED"),
        f"{online_s:.2f} s (bar {ONLINE_TARGET_S:g} s): "
        + ("met" if online_s <= ONLINE_TARGET_S else "MISSED"),
        f"RSS {rss_mb:.1f} MB (bar {RSS_TARGET_MB:g} MB): "
        + ("met" if rss_mb <= RSS_TARGET_MB else "MISSED"),
    ]
    return "bars: " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--starts", type=int, default=30, help="daemon starts to time (default 30)")
    parser.add_argument(
        "--speed", type=float, default=8.0, help="the game is played X times faster (default 8)"
    )
    parser.add_argument("--broker", help="mqtt://HOST:PORT (default: a private mosquitto)")
    quota.add_arguments(parser, "every process")
    args = parser.parse_args()
    compile_bytecode()
    with contextlib.ExitStack() as stack:
        broker = args.broker or stack.enter_context(private_broker())
        wrap: Wrap = unwrapped
        limit = quota.from_arguments(args, stack)
        if limit is not None:
            wrap = limit.argv
            print(f"daemon bench under a CPU quota: {limit.label()}")
        asyncio.run(run(args, broker, wrap))


if __name__ == "__main__":
    main()
