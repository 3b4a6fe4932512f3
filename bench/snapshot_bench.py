"""What a move costs a table late in a game against early: MQTT bytes and the daemon's CPU.

One process holds the emulated DGT board (on a pty), an aiomqtt subscriber of everything the
table publishes (``chessbridge/1/table/{id}/#``) and a tap (tests.mqtt_tap) that relays the
daemon's connection to the broker and reads every packet the daemon sends; ``chessbridge run`` is
a subprocess between the board and a local Mosquitto. A random legal game (seeded, drawn so
that it lasts ``--plies`` plies without ending) is played on the board by hand, a move at a
time: lifts and places ``STEP_PAUSE`` apart, the clock pressed ``PRESS_AFTER`` after the last
place, then a wait until the retained ``game`` published after the press has arrived (so that
every move gets its own publications, as at a human pace: the move's and the press's, not one
coalesced for several moves), then ``SETTLE`` of quiet.

* **Bytes per move**: every byte the daemon sent the broker (all its packets, as the tap read
  them: PUBLISH with their topics or topic aliases, PUBACK, PINGREQ), from the first move's
  first lift to the end, over the number of plies; its PUBLISH by topic; and, beside it, what
  a subscriber receives of the table (each PUBLISH as MQTT 5 frames it to a subscriber, topic
  whole), by ply window and by topic.
* **CPU per move**: the daemon's CPU time (the sum of its threads' ``sum_exec_runtime`` from
  ``/proc/<pid>/task/*/schedstat``, nanoseconds) from the start of one move to the start of the
  next: the move, its press, its retained game and the quiet after it. Compared between the
  window around ply 20 (plies 11-30) and the one around ply 200 (191-210), medians and means.

Bars: bytes per move averaged over a 200-ply game at most 3 kB; the CPU per move at ply 200
within 1.2x of ply 20. Both are printed as ratios measured in the run: the bytes against the
3 kB, and a move's bytes and CPU late in the game against early in it. ``--cpu-quota 25`` runs
the daemon under 25% of one CPU, a Raspberry Pi stand-in (bench.quota). Figures only: this
program asserts nothing.

    python -m bench.snapshot_bench [--plies N] [--seed S] [--broker URL]
                                   [--cpu-quota PCT [--cpu-period MS]]
                                   [--no-touch-events] [--table ID]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import statistics
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import aiomqtt
import chess
import msgspec

from bench import quota
from bench.latency_bench import (
    Wrap,
    compile_bytecode,
    daemon_command,
    do,
    mosquitto_version,
    pick_move,
    private_broker,
    running_daemon,
    split_url,
    unwrapped,
)
from drivers.choreography import steps
from drivers.dgt.emulator import DgtEmulator
from tests.mqtt_tap import MqttTap

STEP_PAUSE: Final = 0.1
PRESS_AFTER: Final = 0.3
SETTLE: Final = 0.05
TIMEOUT: Final = 10.0
BYTES_BAR: Final = 3000.0
CPU_BAR: Final = 1.2
EARLY: Final = (11, 30)
LATE: Final = (191, 210)
WHITE_SIDE: Final = "right"


def publish_size(topic: str, payload: bytes) -> int:
    """Bytes of an MQTT 5 QoS 1 PUBLISH without properties, as a subscriber receives it."""
    remaining = 2 + len(topic.encode()) + 2 + 1 + len(payload)
    length = 1
    while remaining >= 128**length:
        length += 1
    return 1 + length + remaining


def draw_game(plies: int, seed: int) -> tuple[list[chess.Move], int]:
    """A random legal game of ``plies`` plies that no move ends (the first seed from ``seed``
    that gives one), and that seed."""
    while True:
        rng = random.Random(seed)
        board = chess.Board()
        moves: list[chess.Move] = []
        while len(moves) < plies:
            move = pick_move(board, rng)
            if move is None:
                break
            moves.append(move)
            board.push(move)
        if len(moves) == plies:
            return moves, seed
        seed += 1


def cpu_ns(pid: int) -> int:
    """The process's CPU time so far, its threads summed (nanoseconds)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            total += int((task / "schedstat").read_text().split()[0])
    return total


_TYPE: Final = msgspec.json.Decoder(dict[str, object])


@dataclass
class Traffic:
    """Everything the table published: (arrival, kind, bytes); arrivals of ``game`` and
    ``result``."""

    messages: list[tuple[float, str, int]] = field(default_factory=list)
    game_sizes: dict[int, int] = field(default_factory=dict)
    """Payload bytes of the retained ``game`` by the number of its moves (the last seen)."""
    last_game_at: float = float("-inf")
    result: bool = False
    online: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def collect(self, client: aiomqtt.Client) -> None:
        loop = asyncio.get_running_loop()
        async for message in client.messages:
            at = loop.time()
            topic = message.topic.value
            payload = message.payload
            kind = topic.split("/", 4)[4]
            self.messages.append((at, kind, publish_size(topic, payload)))
            if kind == "game":
                self.last_game_at = at
                data = _TYPE.decode(payload).get("data")
                if isinstance(data, dict):
                    moves = data.get("moves")
                    if isinstance(moves, dict) and isinstance(moves.get("uci"), list):
                        self.game_sizes[len(moves["uci"])] = len(payload)
            elif kind == "event/result":
                self.result = True
            elif kind == "status" and b'"state":"online"' in payload:
                self.online = True
            self.changed.set()

    async def until(self, condition: str, after: float = 0.0) -> None:
        async with asyncio.timeout(TIMEOUT):
            while not (
                self.online if condition == "online" else self.last_game_at > after or self.result
            ):
                self.changed.clear()
                await self.changed.wait()


@dataclass
class Played:
    starts: list[float] = field(default_factory=list)
    """Loop time at which each ply's first hand step began (and, last, the end)."""
    cpu: list[int] = field(default_factory=list)
    """The daemon's CPU time (ns) at each of those moments."""
    sent: list[int] = field(default_factory=list)
    """The bytes the daemon had sent the broker (the tap's count) at each of those moments."""
    tap: MqttTap | None = None
    table: str = ""


async def play(
    args: argparse.Namespace, moves: list[chess.Move], broker: str, wrap: Wrap
) -> tuple[Traffic, Played]:
    host, port = split_url(broker)
    table = args.table or f"bench{uuid.uuid4().hex[:8]}"
    traffic, played = Traffic(), Played()
    tap = played.tap = MqttTap(host, port)
    played.table = table
    loop = asyncio.get_running_loop()
    with tempfile.TemporaryDirectory(prefix="bench-snapshot-") as tmp:
        extra: list[str] = []
        if args.no_touch_events:
            config = Path(tmp) / "chessbridge.toml"
            config.write_text("[engine]\ntouch_events = false\n")
            extra = ["--config", str(config)]
        async with (
            tap.running(),
            aiomqtt.Client(host, port, identifier=f"bench-{uuid.uuid4().hex[:8]}") as sub,
        ):
            await sub.subscribe(f"chessbridge/1/table/{table}/#", qos=1)
            collector = asyncio.create_task(traffic.collect(sub))
            try:
                async with (
                    DgtEmulator() as emu,
                    running_daemon(
                        f"dgt:{emu.path}", table, tap.url, Path(tmp) / table, *extra, wrap=wrap
                    ) as proc,
                ):
                    await traffic.until("online")
                    emu.set_clock(7200, 7200, running=WHITE_SIDE)
                    await asyncio.sleep(0.5)
                    board = chess.Board()
                    for move in moves:
                        played.starts.append(loop.time())
                        played.cpu.append(cpu_ns(proc.pid))
                        played.sent.append(tap.sent_bytes)
                        for step in steps(board, move):
                            await do(emu, step)
                            await asyncio.sleep(STEP_PAUSE)
                        mover = board.turn
                        board.push(move)
                        await asyncio.sleep(PRESS_AFTER)
                        pressed = loop.time()
                        await emu.press(WHITE_SIDE if mover == chess.WHITE else "left")
                        await traffic.until("game", after=pressed)
                        await asyncio.sleep(SETTLE)
                        if traffic.result:
                            break
                    played.starts.append(loop.time())
                    played.cpu.append(cpu_ns(proc.pid))
                    played.sent.append(tap.sent_bytes)
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector
    return traffic, played


def window(values: list[float], span: tuple[int, int]) -> list[float]:
    """The values of plies ``span`` (1-based, inclusive)."""
    return values[span[0] - 1 : span[1]]


def report(
    args: argparse.Namespace, seed: int, broker: str, traffic: Traffic, played: Played
) -> None:
    plies = len(played.starts) - 1
    print(
        f"chessbridge snapshot bench: {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs, mosquitto {mosquitto_version()} at {broker}; "
        f"daemon = {' '.join(Path(part).name for part in daemon_command())} run"
    )
    touches = "off" if args.no_touch_events else "on (the default)"
    print(
        f"a random game of {plies} plies (seed {seed}); touch events {touches}; "
        f"table {played.table!r}"
    )
    begin, end = played.starts[0], played.starts[-1]
    sent = played.sent[-1] - played.sent[0]
    assert played.tap is not None
    wire = [p for p in played.tap.publishes if begin <= p.at <= end]
    aliased = sum(1 for p in wire if not p.sent_topic)
    print(
        f"MQTT bytes per move, whole game, daemon -> broker: {sent / plies:,.0f} B ({sent:,} B "
        f"in all its packets; {sum(p.size for p in wire):,} B in {len(wire)} PUBLISH, "
        f"{aliased} of them by topic alias alone); {sent / plies / BYTES_BAR:.2f} of the bar of "
        f"{BYTES_BAR:,.0f} B: {'met' if sent / plies <= BYTES_BAR else 'MISSED'}"
    )
    wire_kind: dict[str, list[int]] = defaultdict(list)
    for p in wire:
        wire_kind[p.topic.split("/", 4)[4]].append(p.size)
    for kind, sizes in sorted(wire_kind.items(), key=lambda item: -sum(item[1])):
        print(
            f"  {kind:16} {len(sizes) / plies:5.2f} a move, {sum(sizes) / plies:7,.0f} B a move "
            f"({100 * sum(sizes) / sent:4.1f} %)"
        )
    in_game = [(at, kind, size) for at, kind, size in traffic.messages if begin <= at <= end]
    total = sum(size for _, _, size in in_game)
    per_move = total / plies
    print(
        f"as a subscriber of the table receives it: {per_move:,.0f} B a move ({total:,} B in "
        f"{len(in_game)} PUBLISH, {len(in_game) / plies:.1f} a move, topics whole)"
    )
    by_kind: dict[str, list[int]] = defaultdict(list)
    for _, kind, size in in_game:
        by_kind[kind].append(size)
    for kind, sizes in sorted(by_kind.items(), key=lambda item: -sum(item[1])):
        print(
            f"  {kind:16} {len(sizes) / plies:5.2f} a move, {sum(sizes) / plies:7,.0f} B a move "
            f"({100 * sum(sizes) / total:4.1f} %)"
        )
    per_ply = [0] * plies
    index = 0
    for at, _, size in in_game:
        while index + 1 < plies and at >= played.starts[index + 1]:
            index += 1
        per_ply[index] += size
    cpu_ms = [(b - a) / 1e6 for a, b in zip(played.cpu, played.cpu[1:], strict=False)]
    print(f"{'plies':12}{'bytes/move':>12}{'game payload':>14}{'CPU/move p50':>14}{'mean':>8}")
    rows = [(1, 10), EARLY, (91, 110), LATE]
    for low, high in rows:
        if high > plies:
            continue
        span_bytes = window([float(v) for v in per_ply], (low, high))
        span_cpu = window(cpu_ms, (low, high))
        game = traffic.game_sizes.get(high, 0)
        print(
            f"{f'{low}-{high}':12}{statistics.mean(span_bytes):12,.0f}{game:14,}"
            f"{statistics.median(span_cpu):14.2f}{statistics.mean(span_cpu):8.2f}"
        )
    if plies >= LATE[1]:
        early, late = window(cpu_ms, EARLY), window(cpu_ms, LATE)
        median_ratio = statistics.median(late) / statistics.median(early)
        mean_ratio = statistics.mean(late) / statistics.mean(early)
        late_bytes = statistics.mean(window([float(v) for v in per_ply], LATE))
        early_bytes = statistics.mean(window([float(v) for v in per_ply], EARLY))
        print(
            f"bytes per move at ply 200 / at ply 20 (as a subscriber receives them): "
            f"{late_bytes / early_bytes:.2f}"
        )
        print(
            f"CPU per move at ply 200 / at ply 20 (plies {LATE[0]}-{LATE[1]} against "
            f"{EARLY[0]}-{EARLY[1]}): medians {median_ratio:.2f}, means {mean_ratio:.2f}; "
            f"bar {CPU_BAR:g}: {'met' if median_ratio <= CPU_BAR else 'MISSED'} (medians)"
        )
    else:
        print(f"the game ended at ply {plies}, before ply {LATE[1]}: no CPU ratio")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--plies", type=int, default=LATE[1], help="plies to play (default 210)")
    parser.add_argument("--seed", type=int, default=1, help="first seed tried (default 1)")
    parser.add_argument("--broker", help="mqtt://HOST:PORT (default: a private mosquitto)")
    quota.add_arguments(parser, "the daemon")
    parser.add_argument(
        "--no-touch-events", action="store_true", help="run the daemon with touch_events = false"
    )
    parser.add_argument(
        "--table",
        help="the table id (default: bench and 8 random hex digits; a table's id is in every "
        "payload, so its length counts)",
    )
    args = parser.parse_args()
    compile_bytecode()
    moves, seed = draw_game(args.plies, args.seed)
    with contextlib.ExitStack() as stack:
        broker = args.broker or stack.enter_context(private_broker())
        wrap: Wrap = unwrapped
        limit = quota.from_arguments(args, stack)
        if limit is not None:
            wrap = limit.argv
            print(f"the daemon under a CPU quota: {limit.label()}")
        traffic, played = asyncio.run(play(args, moves, broker, wrap))
    report(args, seed, broker, traffic, played)


if __name__ == "__main__":
    main()
