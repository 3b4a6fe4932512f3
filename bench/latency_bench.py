"""Board → subscriber latency of ``chessbridge run``, next to a bare MQTT publish → receive.

One process holds the emulated DGT board (on a pty), an aiomqtt subscriber and an aiomqtt
publisher; ``chessbridge run`` is a subprocess between the board and a local Mosquitto. Both
ends of every interval are read from this process's event loop clock (``time.monotonic``):

* board → subscriber: from the emulator writing the last byte of the message that completes a
  move (the emulator's ``on_write`` hook) to the subscriber holding that ``event/move``;
* bare MQTT: from calling ``publish`` (QoS 1, a payload the size of a move) to the subscriber
  holding it, same broker, same subscriber, taken right after each move sample (during the
  games, so that both see the same machine).

Random legal games are played move by move with lifts and places (a new game, daemon and table
when one ends). Unambiguous moves complete on the release (the engine waits for nothing);
ambiguous ones (a slider or pawn that could still go further) complete either after the dwell
(0.4 s, nothing pressed) or at the clock press, and are reported apart.

The bar (docs/product.md §4): the move completed on its release, p50 within 2x and p99 within
3x the bare MQTT figures of the same run, in every one of ``--runs`` runs (5 by default; each
run plays its own games, seed ``S + run``, with a new daemon). Each run's verdict is printed,
and a summary of all. Figures only: this program asserts nothing about time.

``--cpu-quota 25`` runs the daemon (only it: the broker and this process stand for the venue's
other machines) under 25% of one CPU, a Raspberry Pi stand-in (bench.quota).

    python -m bench.latency_bench [--runs R] [--samples N] [--ambiguous M] [--seed S]
                                  [--broker URL] [--no-touch-events]
                                  [--cpu-quota PCT [--cpu-period MS]]
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import contextlib
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import aiomqtt
import chess
import msgspec

from bench import quota
from bridge.arbiter.positions import is_ambiguous
from drivers.choreography import Lift, Place, Step, steps
from drivers.dgt.emulator import DgtEmulator

WHITE_SIDE: Final = "right"
STEP_PAUSE: Final = 0.05
"""Seconds between the lifts and places of one move (a quick hand)."""
SETTLE: Final = 0.03
"""Seconds of quiet before each timed interval, so the previous one's traffic is done."""
PRESS_AFTER: Final = 0.1
"""Seconds between the last place of an ambiguous move and the press that completes it."""
MAX_PLIES: Final = 120
"""A game longer than this is put away and a new one started."""
TIMEOUT: Final = 10.0
PHASES: Final = ((1, 40), (41, 80), (81, MAX_PLIES))

_FIELD_UPDATE: Final = 0x8E
_BWTIME_HEADER: Final = bytes([0x8D, 0x00, 0x0A])
_PIECE_CODES: Final = {symbol: code for code, symbol in enumerate("PRNBKQprnbkq", start=1)}


# --- a private broker --------------------------------------------------------------------------


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto")
    for candidate in (found, "/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("mosquitto not found: install it or pass --broker mqtt://HOST:PORT")


def mosquitto_version() -> str:
    try:
        out = subprocess.run(
            [mosquitto_binary(), "-h"], capture_output=True, text=True, timeout=5, check=False
        ).stdout
    except (OSError, subprocess.TimeoutExpired, SystemExit):
        return "unknown"
    first = out.splitlines()[0] if out else ""
    return first.removeprefix("mosquitto version ").strip() or "unknown"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def private_broker() -> Iterator[str]:
    """A Mosquitto of our own on a free loopback port, no persistence; yields its URL."""
    with private_broker_process() as (url, _):
        yield url


@contextlib.contextmanager
def private_broker_process(extra_config: str = "") -> Iterator[tuple[str, int]]:
    """:func:`private_broker`, yielding its URL and its process id; ``extra_config``: lines
    added to its configuration."""
    with tempfile.TemporaryDirectory(prefix="bench-mosquitto-") as directory:
        port = free_port()
        config = Path(directory) / "mosquitto.conf"
        config.write_text(
            f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n{extra_config}"
        )
        proc = subprocess.Popen(
            [mosquitto_binary(), "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + TIMEOUT
            while True:
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                        break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("the private mosquitto did not start") from None
                    time.sleep(0.02)
            yield f"mqtt://127.0.0.1:{port}", proc.pid
        finally:
            proc.terminate()
            proc.wait(TIMEOUT)


def split_url(url: str) -> tuple[str, int]:
    rest = url.removeprefix("mqtt://")
    host, _, port = rest.partition(":")
    return host, int(port or 1883)


# --- the daemon --------------------------------------------------------------------------------


def compile_bytecode() -> None:
    """Write the project's bytecode, as an install does (pip compiles what it installs):
    without it every start compiles the sources again (``PYTHONDONTWRITEBYTECODE``, a
    read-only tree) and is measured slower than any real start."""
    root = Path(__file__).resolve().parents[1]
    for package in ("bridge", "drivers"):
        compileall.compile_dir(root / package, quiet=1)


def daemon_command() -> list[str]:
    """``chessbridge`` as installed next to this interpreter, else ``python -m bridge``."""
    script = Path(sys.executable).with_name("chessbridge")
    if os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-m", "bridge"]


Wrap = Callable[[list[str]], list[str]]
"""Turns a command line into the one to spawn (e.g. under a CPU quota: bench.quota)."""


def unwrapped(argv: list[str]) -> list[str]:
    return argv


@contextlib.asynccontextmanager
async def running_daemon(
    board: str, table: str, broker: str, state_dir: Path, *extra: str, wrap: Wrap = unwrapped
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``chessbridge run`` with its log in ``state_dir``; SIGTERM on exit."""
    await asyncio.to_thread(state_dir.mkdir, parents=True, exist_ok=True)
    with open(state_dir / "daemon.log", "ab") as sink:  # noqa: ASYNC230  # opening, no I/O wait
        argv = [
            *daemon_command(),
            "run",
            "--board",
            board,
            "--table",
            table,
            "--broker",
            broker,
            "--state-dir",
            str(state_dir),
            *extra,
        ]
        proc = await asyncio.create_subprocess_exec(
            *wrap(argv), stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=sink
        )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), TIMEOUT)
            except TimeoutError:
                proc.kill()
                await proc.wait()


# --- when the emulator wrote what --------------------------------------------------------------


class WriteTap:
    """Every byte the emulator wrote to the pty, with the loop time of each write."""

    def __init__(self) -> None:
        self.stream = bytearray()
        self._ends: list[tuple[int, float]] = []  # (bytes written so far, loop time)
        self._wrote = asyncio.Event()

    def __call__(self, chunk: bytes, at: float) -> None:
        self.stream += chunk
        self._ends.append((len(self.stream), at))
        self._wrote.set()

    @property
    def total(self) -> int:
        return len(self.stream)

    async def written_at(self, needle: bytes, size: int, start: int) -> float:
        """Loop time at which the first message starting with ``needle`` after byte ``start``
        had all its ``size`` bytes written."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                found = self.stream.find(needle, start)
                if found >= 0 and self.total >= found + size:
                    last = found + size - 1
                    return next(at for end, at in self._ends if end > last)
                self._wrote.clear()
                await self._wrote.wait()


def field_update(step: Step) -> bytes:
    """The FIELD_UPDATE message the emulator sends for ``step`` (unrotated board)."""
    index = (7 - chess.square_rank(step.square)) * 8 + chess.square_file(step.square)
    code = _PIECE_CODES[step.piece.symbol()] if isinstance(step, Place) else 0
    return bytes([_FIELD_UPDATE, 0x00, 0x05, index, code])


# --- the subscriber ----------------------------------------------------------------------------


class _Envelope(msgspec.Struct):
    type: str
    table: str
    data: dict[str, object]


_DECODER: Final = msgspec.json.Decoder(_Envelope)


@dataclass
class Inbox:
    """Arrival times (loop clock) of what the subscriber received, by key."""

    arrivals: dict[tuple[str, ...], tuple[float, bytes, dict[str, object]]] = field(
        default_factory=dict
    )
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def collect(self, client: aiomqtt.Client) -> None:
        loop = asyncio.get_running_loop()
        async for message in client.messages:
            at = loop.time()
            payload = message.payload
            topic = message.topic.value
            if topic.startswith("bench/bare/"):
                key: tuple[str, ...] = ("bare", topic.rsplit("/", 1)[1])
                self.arrivals[key] = (at, payload, {})
            else:
                envelope = _DECODER.decode(payload)
                data = envelope.data
                if envelope.type == "move":
                    key = ("move", envelope.table, str(data["ply"]))
                elif envelope.type == "status":
                    key = ("status", envelope.table, str(data["state"]))
                else:
                    key = (envelope.type, envelope.table)
                self.arrivals.setdefault(key, (at, payload, data))
            self.changed.set()

    async def wait(self, *key: str) -> tuple[float, bytes, dict[str, object]]:
        async with asyncio.timeout(TIMEOUT):
            while key not in self.arrivals:
                self.changed.clear()
                await self.changed.wait()
        return self.arrivals[key]


# --- the run -----------------------------------------------------------------------------------


@dataclass
class Samples:
    bare: list[float] = field(default_factory=list)
    release: list[float] = field(default_factory=list)
    release_ply: list[int] = field(default_factory=list)
    dwell: list[float] = field(default_factory=list)
    press: list[float] = field(default_factory=list)
    discarded: int = 0
    games: int = 0
    plies: int = 0


class GameOverError(Exception):
    """The daemon published a result: this game is done."""


def pick_move(board: chess.Board, rng: random.Random) -> chess.Move | None:
    """A random legal move that does not end the game."""
    moves = list(board.legal_moves)
    rng.shuffle(moves)
    for move in moves:
        board.push(move)
        over = board.is_game_over()
        board.pop()
        if not over:
            return move
    return None


async def run(args: argparse.Namespace, broker: str, seed: int, wrap: Wrap) -> Samples:
    rng = random.Random(seed)
    samples = Samples()
    host, port = split_url(broker)
    inbox = Inbox()
    extra: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        if args.no_touch_events:
            config = Path(tmp) / "chessbridge.toml"
            config.write_text("[engine]\ntouch_events = false\n")
            extra = ["--config", str(config)]
        async with (
            aiomqtt.Client(host, port, identifier=f"bench-sub-{uuid.uuid4().hex[:8]}") as sub,
            aiomqtt.Client(host, port, identifier=f"bench-pub-{uuid.uuid4().hex[:8]}") as pub,
        ):
            for suffix in ("event/move", "event/result", "status"):
                await sub.subscribe(f"chessbridge/1/table/+/{suffix}", qos=1)
            await sub.subscribe("bench/bare/#", qos=1)
            collector = asyncio.create_task(inbox.collect(sub))
            try:
                while not enough(samples, args):
                    samples.games += 1
                    table = f"bench{uuid.uuid4().hex[:8]}"
                    await play_game(
                        args,
                        rng,
                        samples,
                        inbox,
                        pub,
                        broker,
                        table,
                        Path(tmp) / table,
                        extra,
                        wrap,
                    )
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector
    return samples


def enough(samples: Samples, args: argparse.Namespace) -> bool:
    wanted: int = args.samples
    ambiguous: int = args.ambiguous
    return (
        len(samples.release) >= wanted
        and len(samples.dwell) >= ambiguous
        and len(samples.press) >= ambiguous
    )


async def play_game(
    args: argparse.Namespace,
    rng: random.Random,
    samples: Samples,
    inbox: Inbox,
    pub: aiomqtt.Client,
    broker: str,
    table: str,
    state_dir: Path,
    extra: list[str],
    wrap: Wrap,
) -> None:
    loop = asyncio.get_running_loop()
    tap = WriteTap()
    async with DgtEmulator(speed=1.0) as emu:
        emu.on_write = tap
        async with running_daemon(f"dgt:{emu.path}", table, broker, state_dir, *extra, wrap=wrap):
            await inbox.wait("status", table, "online")
            emu.set_clock(3600, 3600, running=WHITE_SIDE)
            await asyncio.sleep(0.2)
            board = chess.Board()
            bare_no = 0
            while board.ply() < MAX_PLIES and not enough(samples, args):
                move = pick_move(board, rng)
                if move is None:
                    break
                ambiguous = is_ambiguous(board, move)
                how = "release"
                if ambiguous:
                    how = "dwell" if len(samples.dwell) <= len(samples.press) else "press"
                try:
                    latency, payload = await make_move(emu, tap, inbox, table, board, move, how)
                except GameOverError:
                    break
                mover = board.turn
                board.push(move)
                samples.plies += 1
                if latency is None:
                    samples.discarded += 1
                elif how == "release":
                    samples.release.append(latency)
                    samples.release_ply.append(board.ply())
                elif how == "dwell":
                    samples.dwell.append(latency)
                else:
                    samples.press.append(latency)
                if how == "release" and latency is not None:
                    # The bare MQTT sample, same payload size, right after.
                    await asyncio.sleep(SETTLE)
                    bare_no += 1
                    name = f"{table}-{bare_no}"
                    t0 = loop.time()
                    await pub.publish(f"bench/bare/{name}", payload, qos=1)
                    received, _, _ = await inbox.wait("bare", name)
                    samples.bare.append(received - t0)
                if how != "press":
                    await asyncio.sleep(SETTLE)
                    await emu.press(WHITE_SIDE if mover == chess.WHITE else "left")
                await asyncio.sleep(SETTLE)
                if ("result", table) in inbox.arrivals:
                    break


async def make_move(
    emu: DgtEmulator,
    tap: WriteTap,
    inbox: Inbox,
    table: str,
    board: chess.Board,
    move: chess.Move,
    how: str,
) -> tuple[float | None, bytes]:
    """Make ``move`` with the hands; the interval from the completing message to the
    subscriber holding the move (``None`` if it was not completed as ``how`` expects)."""
    sequence = steps(board, move)
    ply = str(board.ply() + 1)
    for step in sequence[:-1]:
        await do(emu, step)
        await asyncio.sleep(STEP_PAUSE)
    await asyncio.sleep(SETTLE)
    last = sequence[-1]
    start = tap.total
    await do(emu, last)
    written = await tap.written_at(field_update(last), 5, start)
    if how == "press":
        await asyncio.sleep(PRESS_AFTER)
        start = tap.total
        await emu.press(WHITE_SIDE if board.turn == chess.WHITE else "left")
        written = await tap.written_at(_BWTIME_HEADER, 10, start)
    try:
        received, payload, data = await inbox.wait("move", table, ply)
    except TimeoutError:
        if ("result", table) in inbox.arrivals:
            raise GameOverError from None
        raise SystemExit(f"ply {ply} ({move.uci()}) never reached the subscriber") from None
    expected = "clock" if how == "press" else "release"
    if data.get("completed_by") != expected or data.get("uci") != move.uci():
        return None, payload
    return received - written, payload


async def do(emu: DgtEmulator, step: Step) -> None:
    square = chess.square_name(step.square)
    if isinstance(step, Lift):
        await emu.lift(square)
    else:
        await emu.place(square, step.piece.symbol())


# --- the report --------------------------------------------------------------------------------


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p90, p99 in milliseconds."""
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49] * 1e3, cuts[89] * 1e3, cuts[98] * 1e3


P50_BAR: Final = 2.0
P99_BAR: Final = 3.0


@dataclass(frozen=True)
class Verdict:
    """One run against the bar: the unambiguous move's p50 and p99 over the bare MQTT ones."""

    bare_p50: float
    bare_p99: float
    move_p50: float
    move_p99: float

    @property
    def p50_ratio(self) -> float:
        return self.move_p50 / self.bare_p50

    @property
    def p99_ratio(self) -> float:
        return self.move_p99 / self.bare_p99

    @property
    def met(self) -> bool:
        return self.p50_ratio <= P50_BAR and self.p99_ratio <= P99_BAR

    def line(self) -> str:
        return (
            f"p50 {self.move_p50:.2f} / {self.bare_p50:.2f} ms = {self.p50_ratio:.2f} "
            f"(bar {P50_BAR:g}), p99 {self.move_p99:.2f} / {self.bare_p99:.2f} ms = "
            f"{self.p99_ratio:.2f} (bar {P99_BAR:g}): {'met' if self.met else 'MISSED'}"
        )


def verdict(samples: Samples) -> Verdict | None:
    if len(samples.bare) < 2 or len(samples.release) < 2:
        return None
    bare, move = quantiles(samples.bare), quantiles(samples.release)
    return Verdict(bare[0], bare[2], move[0], move[2])


def header(broker: str) -> str:
    return (
        f"chessbridge latency bench: {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, mosquitto {mosquitto_version()} at {broker}"
    )


def report(samples: Samples, args: argparse.Namespace) -> None:
    print(
        f"{samples.games} games, {samples.plies} plies, {samples.discarded} discarded "
        f"(not completed as intended); touch events {'off' if args.no_touch_events else 'on'}"
    )
    rows = [
        ("bare MQTT publish -> receive (QoS 1)", samples.bare),
        ("board -> subscriber, unambiguous move", samples.release),
        ("ambiguous move, completed by the dwell", samples.dwell),
        ("ambiguous move, completed by the press", samples.press),
    ]
    print(f"{'milliseconds':42}{'N':>6}{'p50':>9}{'p90':>9}{'p99':>9}")
    for label, values in rows:
        if len(values) < 2:
            print(f"{label:42}{len(values):>6}")
            continue
        p50, p90, p99 = quantiles(values)
        print(f"{label:42}{len(values):>6}{p50:9.2f}{p90:9.2f}{p99:9.2f}")
    print("unambiguous moves by game phase (plies):")
    for low, high in PHASES:
        phase = [
            v
            for v, ply in zip(samples.release, samples.release_ply, strict=True)
            if low <= ply <= high
        ]
        if len(phase) >= 2:
            p50, p90, p99 = quantiles(phase)
            label = f"  plies {low}-{high}"
            print(f"{label:42}{len(phase):>6}{p50:9.2f}{p90:9.2f}{p99:9.2f}")
    if len(samples.dwell) >= 2:
        excess = [v - args.dwell for v in samples.dwell]
        p50, p90, p99 = quantiles(excess)
        print(
            f"dwell moves beyond the {args.dwell:g} s dwell: "
            f"p50 {p50:.2f}, p90 {p90:.2f}, p99 {p99:.2f} ms"
        )
    result = verdict(samples)
    if result is not None:
        print(f"unambiguous move against bare MQTT: {result.line()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--samples", type=int, default=200, help="unambiguous moves to time (default 200)"
    )
    parser.add_argument(
        "--ambiguous", type=int, default=40, help="ambiguous moves to time each way (default 40)"
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed of run 1 (default 1)")
    parser.add_argument("--runs", type=int, default=5, help="independent runs (default 5)")
    parser.add_argument("--broker", help="mqtt://HOST:PORT (default: a private mosquitto)")
    parser.add_argument(
        "--no-touch-events", action="store_true", help="run the daemon with touch_events = false"
    )
    quota.add_arguments(parser, "the daemon")
    args = parser.parse_args()
    args.dwell = 0.4
    compile_bytecode()
    verdicts: list[Verdict | None] = []
    with contextlib.ExitStack() as stack:
        broker = args.broker or stack.enter_context(private_broker())
        wrap: Wrap = unwrapped
        print(header(broker))
        limit = quota.from_arguments(args, stack)
        if limit is not None:
            wrap = limit.argv
            print(f"the daemon under a CPU quota: {limit.label()}")
        for number in range(1, args.runs + 1):
            print(f"--- run {number} of {args.runs} (seed {args.seed + number - 1})", flush=True)
            samples = asyncio.run(run(args, broker, args.seed + number - 1, wrap))
            report(samples, args)
            verdicts.append(verdict(samples))
    print(f"summary, unambiguous move against bare MQTT, {len(verdicts)} runs:")
    for number, result in enumerate(verdicts, start=1):
        print(f"  run {number}: {'no samples' if result is None else result.line()}")
    met = sum(1 for result in verdicts if result is not None and result.met)
    print(
        f"bar met in {met} of {len(verdicts)} runs"
        + (" (every run)" if met == len(verdicts) else "")
    )


if __name__ == "__main__":
    main()
