"""What each fault costs a table, measured from outside, as a subscriber sees it.

``chessbridge run`` is a subprocess between an emulated DGT board (on a pty) and a Mosquitto of
this program's own; a subscriber in this process stamps every payload with this process's
monotonic clock when it arrives. Each fault is injected while a game is played at a quick human
pace (0.2 s between hand steps), and the intervals below are reported as the median and the
range over ``--runs`` repetitions:

* **restart** (for each board memory: its whole log, empty, no answer): SIGKILL, then a new
  daemon at once, as a supervisor would: kill → ``online``; kill → board ``connected``; and a
  move made the moment the board is seen connected → that move published (how long events are
  held while the memory is read);
* **unplug**: unplug → board ``disconnected``; plug → board ``connected``; plug → the move made
  on the unplugged board published;
* **broker**: the broker stopped for 2 s: its start → the daemon ``online`` again;
* **full disk** (only where a tmpfs can be mounted, e.g. as root): the disk filled → ``status``
  says so (at the next write); space freed → ``status`` clears it.

Figures only: this program asserts nothing about time.

    python -m bench.faults_bench [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Final

import aiomqtt
import chess

from bench.latency_bench import daemon_command, mosquitto_version
from bridge.demo.game import perform, press_side
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator, Memory
from tests.conftest import Mosquitto, SmallDisk

PACE: Final = 5.0
"""The hands move this many times faster than ``perform``'s human pace (about 0.2 s a step)."""
TIMEOUT: Final = 30.0
OPENING: Final = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d4", "exd4", "cxd4"]

Payload = dict[str, Any]


class Watch:
    """A subscriber to one table; every payload with its arrival time."""

    def __init__(self, broker: Mosquitto, table: str) -> None:
        self.broker = broker
        self.table = table
        self.seen: list[tuple[float, str, Payload]] = []
        self._changed = asyncio.Event()

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Watch]:
        task = asyncio.create_task(self._run())
        try:
            yield self
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            client = aiomqtt.Client(self.broker.host, self.broker.port)
            try:
                async with client:
                    await client.subscribe(f"chessbridge/1/table/{self.table}/#", qos=1)
                    async for message in client.messages:
                        suffix = message.topic.value.split("/", 4)[4]
                        payload = json.loads(bytes(message.payload)) if message.payload else {}
                        self.seen.append((time.monotonic(), suffix, payload))
                        self._changed.set()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.05)

    async def when(self, test: Callable[[str, Payload], bool], after: float = 0.0) -> float:
        """The arrival time of the first payload after ``after`` that passes ``test``."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                for at, suffix, payload in self.seen:
                    if at >= after and test(suffix, payload):
                        return at
                self._changed.clear()
                await self._changed.wait()


def is_state(suffix: str, state: str, epoch: int | None = None) -> Callable[[str, Payload], bool]:
    def test(got: str, payload: Payload) -> bool:
        return (
            got == suffix
            and payload.get("data", {}).get("state") == state
            and (epoch is None or payload.get("epoch") == epoch)
        )

    return test


def move_published(ply: int) -> Callable[[str, Payload], bool]:
    return lambda suffix, payload: suffix == "event/move" and payload["data"]["ply"] == ply


class Table:
    """The daemon of one table as a subprocess, its board and the game played on it."""

    def __init__(self, emu: DgtEmulator, broker: Mosquitto, state_dir: Path) -> None:
        self.emu = emu
        self.broker = broker
        self.state_dir = state_dir
        self.table = f"b{uuid.uuid4().hex[:10]}"
        self.board = chess.Board()
        self.rng = random.Random(1)
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        log = self.state_dir.with_name(self.state_dir.name + ".log")
        with log.open("ab") as sink:
            self.proc = await asyncio.create_subprocess_exec(
                *daemon_command(), "run", "--board", f"dgt:{self.emu.path}",
                "--table", self.table, "--broker", self.broker.url,
                "--state-dir", str(self.state_dir),
                stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink,
            )  # fmt: skip

    async def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), TIMEOUT)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    async def play(self, plies: int = 1) -> float:
        """The next ``plies`` of the opening, each with its clock press; when the last piece
        of the last one was put down."""
        done = time.monotonic()
        for _ in range(plies):
            move = self.board.parse_san(OPENING[self.board.ply()])
            mover = self.board.turn
            await perform(self.emu, self.board, move, Style.PLAIN, self.rng, PACE)
            done = time.monotonic()
            self.board.push(move)
            await asyncio.sleep(0.1)
            await self.emu.press(press_side(mover))
            await asyncio.sleep(0.1)
        return done


@contextlib.asynccontextmanager
async def table_running(
    broker: Mosquitto, state_dir: Path, memory: Memory = "log"
) -> AsyncIterator[tuple[Table, Watch]]:
    async with DgtEmulator(memory=memory) as emu:
        table = Table(emu, broker, state_dir)
        async with Watch(broker, table.table).running() as watch:
            await table.start()
            try:
                await watch.when(is_state("status", "online"))
                await watch.when(is_state("board", "connected"))
                emu.set_clock(600, 600, running=press_side(chess.WHITE))
                await table.play(4)
                await watch.when(move_published(4))
                yield table, watch
            finally:
                await table.stop()


async def restart(broker: Mosquitto, tmp: Path, memory: Memory) -> dict[str, float]:
    async with table_running(broker, tmp / f"restart-{memory}", memory) as (table, watch):
        killed = time.monotonic()
        await table.kill()
        await table.start()
        online = await watch.when(is_state("status", "online", epoch=2), after=killed)
        connected = await watch.when(is_state("board", "connected", epoch=2), after=killed)
        made = await table.play(1)
        published = await watch.when(move_published(table.board.ply()), after=killed)
    return {
        "kill -> online": online - killed,
        "kill -> board connected": connected - killed,
        "move made at connect -> published": published - made,
        "   (board connected seen -> move made)": made - connected,
    }


async def unplug(broker: Mosquitto, tmp: Path) -> dict[str, float]:
    async with table_running(broker, tmp / "unplug") as (table, watch):
        pulled = time.monotonic()
        await table.emu.unplug()
        gone = await watch.when(is_state("board", "disconnected"), after=pulled)
        await table.play(1)  # on the unplugged board: into its memory only
        plugged = time.monotonic()
        await table.emu.plug()
        back = await watch.when(is_state("board", "connected"), after=plugged)
        recovered = await watch.when(move_published(table.board.ply()), after=plugged)
    return {
        "unplug -> board disconnected": gone - pulled,
        "plug -> board connected": back - plugged,
        "plug -> move made meanwhile published": recovered - plugged,
    }


async def broker_outage(tmp: Path) -> dict[str, float]:
    broker = Mosquitto(tmp / "outage-broker")
    await broker.astart()
    try:
        async with table_running(broker, tmp / "outage") as (table, watch):
            await broker.astop()
            await asyncio.sleep(2.0)
            started = time.monotonic()
            await broker.astart()
            online = await watch.when(is_state("status", "online"), after=started)
            await table.play(1)
    finally:
        await broker.astop()
    return {"broker start -> online": online - started}


async def full_disk(broker: Mosquitto, tmp: Path) -> dict[str, float] | None:
    where = tmp / "disk"
    where.mkdir(parents=True)
    mounted = await asyncio.to_thread(
        subprocess.run,
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        return None
    disk = SmallDisk(where, 4 * 1024 * 1024)
    try:
        async with table_running(broker, where / "state") as (table, watch):

            def has_error(suffix: str, payload: Payload) -> bool:
                return suffix == "status" and bool(payload["data"].get("error"))

            filled = time.monotonic()
            disk.fill()
            await table.play(1)  # the next write finds the disk full
            said = await watch.when(has_error, after=filled)
            freed = time.monotonic()
            disk.free()

            def cleared(suffix: str, payload: Payload) -> bool:
                return is_state("status", "online")(suffix, payload) and not payload["data"].get(
                    "error"
                )

            back = await watch.when(cleared, after=freed)
    finally:
        await asyncio.to_thread(
            subprocess.run, ["umount", "-l", str(where)], capture_output=True, check=False
        )
    return {
        "disk full -> status error (at the next write)": said - filled,
        "freed -> cleared": back - freed,
    }


def report(name: str, runs: list[dict[str, float]]) -> None:
    print(f"\n{name}")
    for key in runs[0]:
        values = sorted(run[key] for run in runs)
        print(
            f"  {key:<48} median {statistics.median(values):6.2f} s  "
            f"range {values[0]:.2f}-{values[-1]:.2f} s"
        )


async def run(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as directory:
        tmp = Path(directory)
        broker = Mosquitto(tmp / "broker")
        await broker.astart()
        try:
            for memory in ("log", "empty", "silent"):
                results = [await restart(broker, tmp / f"r{i}", memory) for i in range(runs)]
                report(f"restart (SIGKILL), board memory: {memory}", results)
            report("unplug", [await unplug(broker, tmp / f"u{i}") for i in range(runs)])
            report("broker outage", [await broker_outage(tmp / f"b{i}") for i in range(runs)])
            disks = [await full_disk(broker, tmp / f"d{i}") for i in range(runs)]
            if any(result is None for result in disks):
                print("\nfull disk: skipped (cannot mount a tmpfs here)")
            else:
                report("full disk", [result for result in disks if result is not None])
        finally:
            await broker.astop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of each fault")
    args = parser.parse_args()
    print(
        f"faults_bench: {platform.node()} {platform.machine()}, Python {sys.version.split()[0]}, "
        f"{mosquitto_version()}, {time.strftime('%Y-%m-%d %H:%M')}, runs {args.runs}"
    )
    if shutil.which("mount") is None:
        print("(no mount command: the full-disk fault will be skipped)")
    asyncio.run(run(args.runs))


if __name__ == "__main__":
    main()
