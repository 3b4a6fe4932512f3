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
  says so (at the next write); space freed → ``status`` clears it;
* **configuration error** (an unknown board type; a missing TLS ``ca_file``) and **board missing
  at start** (no such device; a port where nothing answers): start → exit, with the exit status
  and how many lines it wrote;
* **SIGTERM**: the signal → the retained ``status`` ``offline``, and → the exit;
* **second daemon** for the same table (another board, another state directory): its start →
  its exit, and the first one still playing;
* **the same request twice** (one ``takeback``, the same transaction): each → its response, and
  how many plies were taken back;
* **hostile requests** (23 kinds, ten of each, one at a time): each → its refusal; the game, the
  alerts and the log afterwards;
* **garbage** on the serial line mid-game: 1 MB of random runs and mutated messages (none a
  message that changes the position or the clock) in four bursts, a move after each: the time to
  get each burst through, each such move's last place → its publication, and whether every move
  was kept.

Where a fault has a baseline in the same run, it is printed as a ratio to it: a restart, a
replug and the broker's return against the same table's first start → ``online``, and a move
delayed by a fault against a move of the same table in quiet play, each from the moment it was
complete on the board (its last place, or the press for a move the dwell would wait for) to
its publication.
Besides the times, each fault reports what was seen (exit statuses, counts): the same value in
every run is printed once. Figures only: this program asserts nothing about time.

    python -m bench.faults_bench [--runs N] [--fault NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import aiomqtt
import chess

from bench.latency_bench import daemon_command, mosquitto_version
from bridge.arbiter.positions import is_ambiguous
from bridge.demo.game import make, press_side
from drivers.choreography import Style, steps
from drivers.dgt.emulator import DgtEmulator, Memory
from tests.conftest import Mosquitto, SmallDisk
from tests.emulated import until
from tests.integration.test_faults import garbage

PACE: Final = 5.0
"""The hands move this many times faster than ``perform``'s human pace (about 0.2 s a step)."""
TIMEOUT: Final = 30.0
OPENING: Final = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "c3", "Nf6", "d4", "exd4", "cxd4"]

Payload = dict[str, Any]
Result = dict[str, float | str]
"""A fault's figures (seconds) and what was seen (text), by name."""


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
                        try:
                            payload = json.loads(bytes(message.payload) or b"{}")
                        except (ValueError, RecursionError):  # a hostile request, seen too
                            payload = {}
                        if not isinstance(payload, dict):
                            payload = {}
                        self.seen.append((time.monotonic(), suffix, payload))
                        self._changed.set()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.05)

    async def when(self, test: Callable[[str, Payload], bool], after: float = 0.0) -> float:
        """The arrival time of the first payload after ``after`` that passes ``test``."""
        at, _ = await self.first(test, after)
        return at

    async def first(
        self, test: Callable[[str, Payload], bool], after: float = 0.0, within: float = TIMEOUT
    ) -> tuple[float, Payload]:
        """The first payload after ``after`` that passes ``test``, with its arrival time."""
        async with asyncio.timeout(within):
            while True:
                for at, suffix, payload in self.seen:
                    if at >= after and test(suffix, payload):
                        return at, payload
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

    def __init__(
        self, emu: DgtEmulator, broker: Mosquitto, state_dir: Path, table: str | None = None
    ) -> None:
        self.emu = emu
        self.broker = broker
        self.state_dir = state_dir
        self.table = f"b{uuid.uuid4().hex[:10]}" if table is None else table
        self.board = chess.Board()
        self.rng = random.Random(1)
        self.proc: asyncio.subprocess.Process | None = None
        self.placed = 0.0
        """When the last piece of the last move played was put down."""
        self.completed = 0.0
        """When the last move played was complete on the board: its last piece put down, or
        the clock's press for a move the dwell would otherwise wait for (the engine's
        ``is_ambiguous``)."""
        self.first_online = 0.0
        """Seconds from the first start to ``online``: the baseline of a restart."""
        self.a_move = 0.0
        """Seconds from a move's completion (:attr:`completed`) to its publication in quiet
        play: the baseline of a move delayed by a fault."""

    @property
    def log(self) -> Path:
        """The daemon's stderr."""
        return self.state_dir.with_name(self.state_dir.name + ".log")

    async def start(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as sink:
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
        """The next ``plies`` of the opening, each with its clock press; when the hands were
        done with the last one (its last piece put down and the pause after it); the moment
        that piece was put down is :attr:`placed`."""
        done = time.monotonic()
        for _ in range(plies):
            move = self.board.parse_san(OPENING[self.board.ply()])
            mover = self.board.turn
            moments: list[float] = []

            def pause(moments: list[float] = moments) -> float:  # as perform() pauses
                moments.append(time.monotonic())
                return self.rng.uniform(0.12, 0.3) / PACE

            ambiguous = is_ambiguous(self.board, move)
            await make(self.emu, steps(self.board, move, Style.PLAIN), pause)
            self.placed = self.completed = moments[-1]
            done = time.monotonic()
            self.board.push(move)
            await asyncio.sleep(0.1)
            if ambiguous:
                self.completed = time.monotonic()
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
            started = time.monotonic()
            await table.start()
            try:
                table.first_online = await watch.when(is_state("status", "online")) - started
                await watch.when(is_state("board", "connected"))
                emu.set_clock(600, 600, running=press_side(chess.WHITE))
                await table.play(4)
                table.a_move = await watch.when(move_published(4)) - table.completed
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
        "kill -> online / first start -> online": (online - killed) / table.first_online,
        "move made at connect / a move in play": (published - table.completed) / table.a_move,
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
        "plug -> board connected / first start -> online": (back - plugged) / table.first_online,
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
    return {
        "broker start -> online": online - started,
        "broker start -> online / first start -> online": (online - started) / table.first_online,
    }


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


# --- a failed start, a clean stop, a second daemon ----------------------------------------------


async def exits(*args: str) -> tuple[float, int | None, str]:
    """``chessbridge ARGS`` from its start to its exit: seconds, exit status, stderr."""
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *daemon_command(), *args,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    _, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    return time.monotonic() - started, proc.returncode, err.decode(errors="replace")


def said(err: str) -> str:
    """How many lines a failed start wrote on stderr."""
    lines = [line for line in err.splitlines() if line.strip()]
    return f"{len(lines)} line(s)"


async def config_error(broker: Mosquitto, tmp: Path) -> Result:
    await asyncio.to_thread(tmp.mkdir, parents=True)
    state = str(tmp / "state")
    took, code, err = await exits(
        "run", "--board", "foo:/x", "--table", "t1", "--broker", broker.url, "--state-dir", state
    )
    config = tmp / "chessbridge.toml"
    await asyncio.to_thread(config.write_text, f'[broker]\nca_file = "{tmp / "no-such-ca.pem"}"\n')
    tls_took, tls_code, tls_err = await exits(
        "run", "--board", "dgt:/dev/null", "--table", "t1", "--broker", "mqtts://127.0.0.1:8883",
        "--config", str(config), "--state-dir", state,
    )  # fmt: skip
    return {
        "unknown board type: start -> exit": took,
        "unknown board type: exit status, stderr": f"{code}, {said(err)}",
        "ca_file missing: start -> exit": tls_took,
        "ca_file missing: exit status, stderr": f"{tls_code}, {said(tls_err)}",
    }


async def board_missing(broker: Mosquitto, tmp: Path) -> Result:
    await asyncio.to_thread(tmp.mkdir, parents=True)
    state = str(tmp / "state")
    took, code, err = await exits(
        "run", "--board", "dgt:/dev/no-such-board", "--table", "t1", "--broker", broker.url,
        "--state-dir", state,
    )  # fmt: skip
    master, slave = os.openpty()  # a port where nothing answers
    try:
        silent_took, silent_code, silent_err = await exits(
            "run", "--board", f"dgt:{os.ttyname(slave)}", "--table", "t1",
            "--broker", broker.url, "--state-dir", state,
        )  # fmt: skip
    finally:
        os.close(master)
        os.close(slave)
    return {
        "no such device: start -> exit": took,
        "no such device: exit status, stderr": f"{code}, {said(err)}",
        "a port where no board answers: start -> exit": silent_took,
        "a port where no board answers: exit status, stderr": f"{silent_code}, {said(silent_err)}",
    }


async def sigterm(broker: Mosquitto, tmp: Path) -> Result:
    async with table_running(broker, tmp / "sigterm") as (table, watch):
        assert table.proc is not None
        stopped = time.monotonic()
        table.proc.send_signal(signal.SIGTERM)
        offline = await watch.when(is_state("status", "offline"), after=stopped)
        code = await asyncio.wait_for(table.proc.wait(), TIMEOUT)
        gone = time.monotonic()
        lost = any(is_state("status", "lost")(x, p) for at, x, p in watch.seen if at >= stopped)
    return {
        "SIGTERM -> retained status offline": offline - stopped,
        "SIGTERM -> exit": gone - stopped,
        "exit status; Will lost sent": f"{code}; {'yes' if lost else 'no'}",
    }


async def second_daemon(broker: Mosquitto, tmp: Path) -> Result:
    async with (
        table_running(broker, tmp / "first") as (table, watch),
        DgtEmulator() as other_board,
    ):
        second = Table(other_board, broker, tmp / "second", table=table.table)
        started = time.monotonic()
        await second.start()
        assert second.proc is not None
        code = await asyncio.wait_for(second.proc.wait(), TIMEOUT)
        gone = time.monotonic()
        await table.play(1)
        published = await watch.when(move_published(table.board.ply()), after=gone)
        made = table.placed
        first_runs = table.proc is not None and table.proc.returncode is None
        lines = [x for x in second.log.read_text().splitlines() if "already runs table" in x]
    return {
        "second daemon: start -> exit": gone - started,
        "second daemon: exit status, its 'already runs' lines": f"{code}, {len(lines)}",
        "first daemon: next move's last place -> published": published - made,
        "first daemon still running": "yes" if first_runs else "no",
    }


# --- requests ----------------------------------------------------------------------------------


async def ask(
    client: aiomqtt.Client, watch: Watch, table: str, command: str, raw: bytes
) -> tuple[float, Payload | None]:
    """Publish ``request/COMMAND``; seconds to its response, and the response's ``data``."""
    suffix = f"response/{command}"
    sent = time.monotonic()
    await client.publish(f"chessbridge/1/table/{table}/request/{command}", raw, qos=1)
    try:
        at, payload = await watch.first(lambda x, _: x == suffix, after=sent, within=5.0)
    except TimeoutError:
        return time.monotonic() - sent, None
    data: Payload = payload.get("data", {})
    return at - sent, data


def game_moves(watch: Watch) -> list[str]:
    """The moves of the last retained ``game`` seen."""
    games = [payload for _, suffix, payload in watch.seen if suffix == "game"]
    moves: list[str] = games[-1]["data"]["moves"]["uci"]
    return moves


async def repeated_request(broker: Mosquitto, tmp: Path) -> Result:
    async with (
        table_running(broker, tmp / "repeat") as (table, watch),
        aiomqtt.Client(broker.host, broker.port) as client,
    ):
        before = game_moves(watch)
        raw = json.dumps({"transaction": uuid.uuid4().hex, "expires_at": time.time() + 60})
        first, answer = await ask(client, watch, table.table, "takeback", raw.encode())
        again, repeat = await ask(client, watch, table.table, "takeback", raw.encode())
        await asyncio.sleep(0.5)  # a second takeback would have changed the game by now
        after = game_moves(watch)
    return {
        "takeback -> response": first,
        "the same takeback again -> response": again,
        "same response; plies taken back": (
            f"{'yes' if answer == repeat and answer is not None else 'no'}; "
            f"{len(before) - len(after)}"
        ),
    }


def hostile_requests(rng: random.Random) -> list[tuple[str, bytes]]:
    """Requests a client may send by mistake or in malice, each kind ten times."""

    def body(**fields: object) -> bytes:
        request = {"transaction": uuid.uuid4().hex, "expires_at": time.time() + 60, **fields}
        return json.dumps(request).encode()

    forged = "\nchessbridge: ERROR board lost, call the arbiter\x1b[1A\x1b[2K\x07"
    kinds: list[Callable[[], tuple[str, bytes]]] = [
        lambda: ("takeback", b'{"transaction": "x", '),
        lambda: ("takeback", b"[]"),
        lambda: ("takeback", b"null"),
        lambda: ("takeback", b"[" * 10_000 + b"]" * 10_000),
        lambda: ("takeback", rng.randbytes(200)),
        lambda: ("takeback", body(pad="x" * 5000)),
        lambda: ("takeback", body(expires_at=time.time() - 5)),
        lambda: ("takeback", body(expires_at=time.time() + 86_400)),
        lambda: ("takeback", body(plies=99)),
        lambda: ("takeback", body(plies=-1)),
        lambda: ("takeback", body(plies=10**30)),
        lambda: ("takeback", body(plies="1")),
        lambda: ("takeback", body(**{forged: 1})),
        lambda: ("takeback", json.dumps({"transaction": forged, "expires_at": 1e300}).encode()),
        lambda: ("takeback", json.dumps({"expires_at": time.time() + 60}).encode()),
        lambda: ("set_position", body(fen="8/8/8/8/8/8/8/8 w - - 0 1")),
        lambda: ("correct_move", body(ply=1, uci="e2e5")),
        lambda: ("ack_alert", body(id=99)),
        lambda: ("set_result", body(result="2-0", reason=forged)),
        lambda: ("adjust_clock", body(white=-5, black=10**9)),
        lambda: ("resign", body()),
        lambda: ("assign", body(white="x" * 10_000)),
        # A command name no table has (no C0 controls: the broker itself refuses those): the
        # daemon logs it and does not answer, as it could not on such a topic.
        lambda: (UNUSABLE, body()),
    ]
    return [kind() for _ in range(10) for kind in kinds]


UNUSABLE: Final = "takeback\u202e\u2028chessbridge: ERROR b"
"""A command name with a right-to-left override and a line separator in it."""


async def hostile(broker: Mosquitto, tmp: Path) -> Result:
    requests = hostile_requests(random.Random(8))
    async with (
        table_running(broker, tmp / "hostile") as (table, watch),
        aiomqtt.Client(broker.host, broker.port) as client,
    ):
        before = game_moves(watch)
        times: list[float] = []
        refused = unanswered = ignored = 0
        for command, raw in requests:
            if command == UNUSABLE:  # no answer to wait for
                topic = f"chessbridge/1/table/{table.table}/request/{command}"
                await client.publish(topic, raw, qos=1)
                ignored += 1
                continue
            took, data = await ask(client, watch, table.table, command, raw)
            if data is None:
                unanswered += 1
                continue
            times.append(took)
            refused += data.get("status") == "error"
        before_move = time.monotonic()
        await table.play(1)  # the game goes on
        published = await watch.when(move_published(table.board.ply()), after=before_move)
        made = table.placed
        after = game_moves(watch)
    log = table.log.read_text(errors="replace")
    forged_lines = [line for line in log.splitlines() if line.startswith("chessbridge: ERROR b")]
    alerts = sum(1 for _, suffix, _ in watch.seen if suffix == "event/alert")
    return {
        "request -> its refusal (median of the run)": statistics.median(times),
        "request -> its refusal (slowest of the run)": max(times),
        "then a move: its last place -> published": published - made,
        "sent; refused; unusable names ignored, said in the log; unanswered": (
            f"{len(requests)}; {refused}; {ignored}, {log.count('unusable command name')}; "
            f"{unanswered}"
        ),
        "game changed; alerts; forged log lines, ESC/BEL in the log": (
            f"{'yes' if after[: len(before)] != before or len(after) != len(before) + 1 else 'no'}"
            f"; {alerts}; {len(forged_lines)}, {sum(log.count(c) for c in chr(27) + chr(7))}"
        ),
    }


# --- the serial line ---------------------------------------------------------------------------

GARBAGE: Final = 1_000_000
BURSTS: Final = 4
CHUNK: Final = 16_384


async def garbage_mid_game(broker: Mosquitto, tmp: Path) -> Result:
    noise = random.Random(1858)
    bursts = [garbage(noise, GARBAGE // BURSTS) for _ in range(BURSTS)]
    async with table_running(broker, tmp / "garbage") as (table, watch):
        await asyncio.sleep(1.0)  # the board's identity all in (its model comes last)
        identity = [p["data"] for _, x, p in watch.seen if x == "board"][-1]
        began = time.monotonic()
        delays: list[float] = []
        completing: list[float] = []
        written = 0.0
        for burst in bursts:
            start = time.monotonic()
            for i in range(0, len(burst), CHUNK):
                # Never more than the pty keeps (nothing dropped): the next chunk once it took
                # the last, as fast as the daemon reads.
                await until(lambda: not table.emu.pending, within=TIMEOUT, every=0.001)
                await table.emu.inject(burst[i : i + CHUNK])
            await until(lambda: not table.emu.pending, within=TIMEOUT, every=0.001)
            read = time.monotonic()
            written += read - start
            await table.play(1)
            published = await watch.when(move_published(table.board.ply()), after=read)
            delays.append(published - table.placed)
            completing.append(published - table.completed)
        ended = time.monotonic()
        await table.play(2)
        await watch.when(move_published(table.board.ply()), after=ended)
        plies = table.board.ply()
    moved = [p for _, x, p in watch.seen if x == "event/move"]
    kept = sorted({(p["epoch"], p["seq"]): p["data"]["uci"] for p in moved}.items())
    expected = [m.uci() for m in table.board.move_stack]
    alerts = sum(1 for _, suffix, _ in watch.seen if suffix == "event/alert")
    boards = [p["data"] for _, x, p in watch.seen if x == "board"]
    states = {board["state"] for board in boards}
    real = (identity["serial"], identity["firmware"], identity["model"])
    during = [p["data"] for at, x, p in watch.seen if x == "board" and at >= began]
    mutated = sum(1 for b in during if (b["serial"], b["firmware"], b["model"]) != real)
    last = during[-1] if during else identity
    restored = (last["serial"], last["firmware"], last["model"]) == real
    return {
        f"{GARBAGE // 1000} kB in {BURSTS} bursts: written and read": written,
        "  (first burst -> last move after it published)": ended - began,
        "a move after a burst: last place -> published (slowest)": max(delays),
        "a move after a burst (slowest) / a move in play": max(completing) / table.a_move,
        "moves kept, in order; alerts; board states": (
            f"{'yes' if [uci for _, uci in kept] == expected else 'no'} ({plies} plies); "
            f"{alerts}; {'/'.join(sorted(states))}"
        ),
        "board republished with a mutated identity (of those since)": (
            f"{mutated} (of {len(during)}); the last one the board's own: "
            f"{'yes' if restored else 'no'}"
        ),
    }


def report(name: str, runs: Sequence[Mapping[str, float | str]]) -> None:
    print(f"\n{name}")
    for key in runs[0]:
        values = [run[key] for run in runs]
        numbers = sorted(v for v in values if isinstance(v, float))
        if len(numbers) == len(values) and " / " in key:  # a ratio of two intervals
            print(
                f"  {key:<52} median {statistics.median(numbers):6.2f}x  "
                f"range {numbers[0]:.2f}-{numbers[-1]:.2f}x"
            )
        elif len(numbers) == len(values):
            print(
                f"  {key:<52} median {statistics.median(numbers):6.2f} s  "
                f"range {numbers[0]:.2f}-{numbers[-1]:.2f} s"
            )
        else:  # what was seen, in each run: the same value once
            seen = list(dict.fromkeys(str(v) for v in values))
            print(f"  {key:<52} {' | '.join(seen)}")


Fault = Callable[[Mosquitto, Path], Awaitable[Result | None]]


def faults() -> dict[str, tuple[str, Fault]]:
    """Each fault by its ``--fault`` name: its heading and one run of it."""

    def restarting(memory: Memory) -> Fault:
        async def one(broker: Mosquitto, tmp: Path) -> Result:
            return dict(await restart(broker, tmp, memory))

        return one

    async def outage(_: Mosquitto, tmp: Path) -> Result:
        return dict(await broker_outage(tmp))

    async def unplugged(broker: Mosquitto, tmp: Path) -> Result:
        return dict(await unplug(broker, tmp))

    async def disk(broker: Mosquitto, tmp: Path) -> Result | None:
        figures = await full_disk(broker, tmp)
        return None if figures is None else dict(figures)

    count = len(hostile_requests(random.Random(8)))
    return {
        "config": ("configuration error", config_error),
        "board-missing": ("board missing at start", board_missing),
        "sigterm": ("SIGTERM (systemctl stop)", sigterm),
        "second-daemon": ("a second daemon for the table", second_daemon),
        "repeat": ("the same request twice", repeated_request),
        "hostile": (f"hostile requests ({count} a run)", hostile),
        "garbage": (
            f"{GARBAGE // 1000} kB of garbage on the serial line mid-game",
            garbage_mid_game,
        ),
        **{
            f"restart-{memory}": (f"restart (SIGKILL), board memory: {memory}", restarting(memory))
            for memory in ("log", "empty", "silent")
        },
        "unplug": ("unplug", unplugged),
        "broker": ("broker outage", outage),
        "disk": ("full disk", disk),
    }


async def run(runs: int, only: Sequence[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-faults-") as directory:
        tmp = Path(directory)
        broker = Mosquitto(tmp / "broker")
        await broker.astart()
        try:
            for name, (heading, fault) in faults().items():
                if only and name not in only:
                    continue
                results = [await fault(broker, tmp / f"{name}-{i}") for i in range(runs)]
                kept = [result for result in results if result is not None]
                if len(kept) < len(results):
                    print(f"\n{heading}: skipped (cannot mount a tmpfs here)")
                else:
                    report(heading, kept)
        finally:
            await broker.astop()


def commit() -> str:
    """The checkout's commit (``+`` if it has changes), or ``?`` outside one."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="repetitions of each fault")
    parser.add_argument(
        "--fault",
        action="append",
        choices=list(faults()),
        help="only this fault (repeatable; default: all)",
    )
    args = parser.parse_args()
    print(
        f"faults_bench: {platform.node()} {platform.machine()}, Python {sys.version.split()[0]}, "
        f"{mosquitto_version()}, commit {commit()}, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"runs {args.runs}"
    )
    if shutil.which("mount") is None:
        print("(no mount command: the full-disk fault will be skipped)")
    asyncio.run(run(args.runs, args.fault or []))


if __name__ == "__main__":
    main()
