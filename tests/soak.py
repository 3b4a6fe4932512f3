"""A soak: tables play random games in real time while SIGKILLs, a broker outage, an unplugged
board and overlapping hands pile up; every table's events and retained game are then compared
with the moves played.

Each table is an emulated DGT board with its clock (:class:`~drivers.dgt.emulator.DgtEmulator`
on a pseudo-terminal) and ``chessbridge run`` as a subprocess with a state directory of its
own; all tables share one Mosquitto with persistence. A :class:`Plan` is drawn from one seed
(``random.Random(seed)``): each table's random legal game, played as ``tests.hands.timeline``
lays it out (about half the replies begun before the mover's piece lands, each move pressed on
the clock), and the faults at their moments on the soak's clock:

- each daemon SIGKILLed once or twice, 0.2-0.8 s after a press, and started again on the same
  state directory 1-3 s later while the players go on;
- the broker stopped (SIGTERM: it saves its sessions and retained messages) for 2-4 s, from
  shortly before one of those kills: that daemon dies, and may start again, while it is down;
- one board unplugged 0.2-0.8 s after a press and plugged back 1-2.5 s later, the players
  going on on the unplugged board.

The same plan without its faults (:meth:`Plan.without_faults`) is the baseline: the same
tables, games and timelines. The timing of a run is real time, so a seed fixes the games and
the moments of the faults, not how the daemons' work interleaves with them.

A :class:`Consumer` with a persistent session (MQTT 3.1.1, ``clean_session`` off, QoS 1)
collects the tables' events. aiomqtt hands messages over through a queue that its iterator
drops when the connection drops, though paho has already acknowledged them: the consumer's
queue records each message the moment paho receives it, before paho sends its PUBACK, so
nothing the broker delivered is lost. Copies are dropped by ``(game, epoch, seq)`` (copies of
one key must be the same payload); each table's moves, in ply order (a move that ``supersedes``
replacing its ply's), and its retained ``game`` read afresh at the end must equal the moves
played; every move a daemon recorded (its log) must have arrived; no alert may name a player
(``color``); every daemon must exit 0 on SIGTERM at the end.

An :class:`Arbiter` at the tables settles what no fact of a table can tell: on a board whose
memory holds nothing, two moves of one side made while no daemon listened may lead to the same
board in either order. A ``board_mismatch`` that names nobody and lists such lines, the moves
played among them, is answered at once with ``reconstruct`` and those moves, as an arbiter who
asks the players does (docs/commands.md); anything else is left as it is.

Used by ``bench/soak_bench.py`` (against the same tables without faults); its short form (four
tables of 30 plies, about a minute) is meant for the test suite once the engine passes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import aiomqtt
import chess

from bridge.demo.game import press_side
from drivers.choreography import Lift, Style
from drivers.dgt.emulator import DgtEmulator, Memory
from tests.conftest import SUBSCRIBER_LOGGER, Mosquitto, subscribed_in_background
from tests.hands import Overlap, Ply, Timed, timeline
from tests.integration.test_faults import Daemon

PACE: Final = 0.2
"""Seconds between two steps of a move: brisk, above the engine's 0.15 s flicker window with
room for a loaded machine's jitter (the engine alone keeps up at 0.15 s)."""
THINK: Final = 0.4
"""Seconds between a move (its press) and a reply that does not overlap it."""
EARLY: Final = 0.5
"""The share of replies begun before the mover's piece lands."""
KILL_AFTER_PRESS: Final = (0.2, 0.8)
DOWN: Final = (1.0, 3.0)
"""Seconds a killed daemon stays down before it is started again."""
OUTAGE: Final = (2.0, 4.0)
UNPLUGGED: Final = (1.0, 2.5)
APART: Final = 3.0
"""Seconds between the end of one fault of a table and the start of its next, at least."""
SETTLE: Final = 90.0
"""Seconds to wait, after the last move and the last fault, for every table's moves and
retained game (generous: two shared cores, a daemon's reconnect backoff). A wait, not a bar."""
START: Final = 40.0
"""Seconds to wait for every table to be online with its board connected."""

Payload = dict[str, Any]


# --- the plan ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kill:
    """A SIGKILL at ``at`` (the soak's clock), the daemon started again ``down`` s later."""

    at: float
    down: float


@dataclass(frozen=True)
class Unplug:
    """The board unplugged at ``at`` (the soak's clock), plugged back ``out`` s later."""

    at: float
    out: float


@dataclass(frozen=True)
class Outage:
    """The broker stopped at ``at`` (the soak's clock), started again ``down`` s later."""

    at: float
    down: float


@dataclass(frozen=True)
class TablePlan:
    """One table: its game, how it is played, and its faults."""

    index: int
    plies: tuple[Ply, ...]
    timed: tuple[Timed, ...]
    """The game in time, from the table's own start (``offset`` on the soak's clock)."""
    offset: float
    memory: Memory
    """How the board's memory answers the restarted daemon (its log, or nothing)."""
    kills: tuple[Kill, ...] = ()
    unplug: Unplug | None = None

    @property
    def moves(self) -> list[str]:
        """The moves played, in UCI."""
        return [ply.move.uci() for ply in self.plies]

    @property
    def end(self) -> float:
        """The last step or press, on the soak's clock."""
        return self.offset + self.timed[-1].at

    def made_by(self, at: float) -> int:
        """How many plies were complete on the board at ``at`` (the soak's clock)."""
        return sum(1 for t in self.timed if t.ends is not None and self.offset + t.at <= at)


@dataclass(frozen=True)
class Plan:
    """Every table of a soak and the broker's outage, drawn from ``seed``."""

    seed: int
    tables: tuple[TablePlan, ...]
    outage: Outage | None = None

    def without_faults(self) -> Plan:
        """The same tables, games and timelines, with no fault: the baseline."""
        tables = tuple(dataclasses.replace(t, kills=(), unplug=None) for t in self.tables)
        return Plan(self.seed, tables, None)

    @property
    def end(self) -> float:
        """When the last move is made and the last fault is over (the soak's clock)."""
        ends = [t.end for t in self.tables]
        ends += [k.at + k.down for t in self.tables for k in t.kills]
        ends += [t.unplug.at + t.unplug.out for t in self.tables if t.unplug is not None]
        if self.outage is not None:
            ends.append(self.outage.at + self.outage.down)
        return max(ends)

    def describe(self) -> str:
        """The plan in a few lines: each table's faults, with the plies made by then."""
        lines = [f"seed {self.seed}: {len(self.tables)} tables"]
        if self.outage is not None:
            o = self.outage
            lines.append(f"  broker stopped at {o.at:.2f} s for {o.down:.2f} s")
        for t in self.tables:
            faults = [
                f"kill at {k.at:.2f} s (after ply {t.made_by(k.at)}), down {k.down:.2f} s "
                f"({_plies(t.made_by(k.at) + 1, t.made_by(k.at + k.down))} made meanwhile)"
                for k in t.kills
            ]
            if t.unplug is not None:
                u = t.unplug
                faults.append(
                    f"unplugged at {u.at:.2f} s (after ply {t.made_by(u.at)}) for {u.out:.2f} s"
                )
            lines.append(
                f"  table {t.index} (memory {t.memory}, {len(t.plies)} plies, "
                f"{sum(p.overlap is not Overlap.NONE for p in t.plies)} replies begun early, "
                f"from {t.offset:.2f} s to {t.end:.2f} s): {'; '.join(faults) or 'no fault'}"
            )
            lines.append(f"    moves: {' '.join(t.moves)}")
        return "\n".join(lines)


def _plies(first: int, last: int) -> str:
    if last < first:
        return "no ply"
    return f"ply {first}" if last == first else f"plies {first}-{last}"


def random_game(rng: random.Random, plies: int) -> list[Ply]:
    """A random legal game of ``plies`` that is not over before its end; each ply in a random
    style, about :data:`EARLY` of the replies begun before the mover's piece lands."""
    while True:
        board = chess.Board()
        out: list[Ply] = []
        while len(out) < plies and not board.is_game_over():
            move = rng.choice(list(board.legal_moves))
            overlap = Overlap.NONE
            if rng.random() < EARLY:
                overlap = rng.choice((Overlap.FIRST_LIFT, Overlap.WHOLE))
            out.append(Ply(move, rng.choice(list(Style)), overlap, rng.uniform(0.05, 0.25)))
            board.push(move)
        if len(out) == plies:
            return out


def _window(at: float, length: float) -> tuple[float, float]:
    return at - APART, at + length + APART


def _free(window: tuple[float, float], taken: list[tuple[float, float]]) -> bool:
    return all(window[1] <= a or b <= window[0] for a, b in taken)


def _after_presses(table: TablePlan, rng: random.Random) -> list[float]:
    """The table's presses (the soak's clock) but its first two and last two, shuffled."""
    presses = [table.offset + t.at for t in table.timed if t.press is not None][2:-2]
    return rng.sample(presses, len(presses))


def plan(seed: int, tables: int, plies: int) -> Plan:
    """Draw a soak of ``tables`` tables, each a game of ``plies``, and its faults from ``seed``."""
    rng = random.Random(seed)
    drawn: list[TablePlan] = []
    for index in range(tables):
        game = random_game(rng, plies)
        timed = timeline(chess.Board(), game, pace=PACE, think=THINK, clock=True)
        memory: Memory = "empty" if index % 2 == 0 else "log"
        drawn.append(TablePlan(index, tuple(game), tuple(timed), rng.uniform(0.0, 1.0), memory))
    unplugged = rng.randrange(tables)
    for index, table in enumerate(drawn):
        taken: list[tuple[float, float]] = []
        unplug: Unplug | None = None
        if index == unplugged:
            at = _after_presses(table, rng)[0]
            unplug = Unplug(at + rng.uniform(*KILL_AFTER_PRESS), rng.uniform(*UNPLUGGED))
            taken.append(_window(unplug.at, unplug.out))
        count = rng.choice((1, 2))
        kills: list[Kill] = []
        for at in _after_presses(table, rng):
            kill = Kill(at + rng.uniform(*KILL_AFTER_PRESS), rng.uniform(*DOWN))
            if _free(_window(kill.at, kill.down), taken):
                taken.append(_window(kill.at, kill.down))
                kills.append(kill)
            if len(kills) == count:
                break
        kills.sort(key=lambda k: k.at)
        drawn[index] = dataclasses.replace(table, kills=tuple(kills), unplug=unplug)
    victim = drawn[rng.randrange(tables)].kills[0]
    outage = Outage(victim.at - rng.uniform(0.2, 1.0), rng.uniform(*OUTAGE))
    return Plan(seed, tuple(drawn), outage)


# --- what a consumer receives ------------------------------------------------------------------

TOPICS: Final = (
    "event/move",
    "event/alert",
    "event/touch",
    "event/clock",
    "status",
    "board",
    "game",
    "response/reconstruct",
)
"""What the consumer subscribes to, under every table."""


@dataclass
class Consumer:
    """A consumer of every table with a persistent session (MQTT 3.1.1, ``clean_session``
    off, a fixed client id, QoS 1) that reconnects on its own while the broker is away and
    subscribes again on every connection, as a careful one does.

    aiomqtt puts each message paho receives on a queue that its iterator reads; when the
    connection drops the iterator raises, and what the queue still held is dropped, though paho
    acknowledged it (PUBACK) as it received it and the broker will not send it again. Here the
    queue records each message at once, inside paho's receive and so before its PUBACK: nothing
    the broker delivered can be lost. The iterator is read only to learn that the connection
    dropped.
    """

    broker: Mosquitto
    identifier: str
    received: list[tuple[str, str, Payload]] = field(default_factory=list)
    """(table, topic suffix, payload) in arrival order."""
    arrived: list[float] = field(default_factory=list)
    """When each of :attr:`received` arrived (the event loop's clock)."""
    connections: int = 0
    last_at: float = 0.0
    """When the last message arrived (the event loop's clock)."""
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)
    _subscribed: asyncio.Event = field(default_factory=asyncio.Event)

    def _record(self, message: aiomqtt.Message) -> None:
        # chessbridge/1/table/{table}/{suffix}
        _, _, _, table, suffix = message.topic.value.split("/", 4)
        raw = bytes(message.payload)
        if not raw:  # a retained topic cleared
            return
        self.received.append((table, suffix, json.loads(raw)))
        self.last_at = asyncio.get_running_loop().time()
        self.arrived.append(self.last_at)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    def _client(self) -> aiomqtt.Client:
        record = self._record

        class Recording(asyncio.Queue[aiomqtt.Message]):
            """Records each message as paho hands it over; holds none."""

            def put_nowait(self, item: aiomqtt.Message) -> None:
                record(item)

        return aiomqtt.Client(
            self.broker.host,
            self.broker.port,
            identifier=self.identifier,
            clean_session=False,
            logger=SUBSCRIBER_LOGGER,
            queue_type=Recording,
        )

    async def _run(self) -> None:
        while True:
            try:
                async with self._client() as client:
                    self.connections += 1
                    await client.subscribe([(f"chessbridge/1/table/+/{s}", 1) for s in TOPICS])
                    self._subscribed.set()
                    async for _ in client.messages:  # nothing: it raises once disconnected
                        pass
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[Consumer]:
        """Connected and subscribed within the context."""
        async with subscribed_in_background(self._run(), self._subscribed, START):
            yield self

    async def changed(self, seen: int) -> None:
        """Return once more than ``seen`` messages were received."""
        while len(self.received) <= seen:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    async def wait_for(self, condition: Callable[[], bool], within: float) -> bool:
        """Wait until ``condition()`` holds (True) or ``within`` s have passed (False)."""
        try:
            async with asyncio.timeout(within):
                while not condition():
                    await self.changed(len(self.received))
        except TimeoutError:
            return False
        return True

    def payloads(self, table: str, suffix: str) -> list[Payload]:
        """The payloads of ``table`` on ``suffix``, in arrival order."""
        return [p for t, s, p in self.received if t == table and s == suffix]


def unique(received: Sequence[Payload]) -> tuple[list[Payload], list[str]]:
    """Copies dropped by ``(game, epoch, seq)``, in order of first arrival; and what is wrong
    with them (two payloads for one key)."""
    first: dict[tuple[str, int, int], Payload] = {}
    problems: list[str] = []
    for payload in received:
        key = (payload["game"], payload["epoch"], payload["seq"])
        if key in first:
            if payload != first[key]:
                problems.append(
                    f"two payloads for (game, epoch, seq) {key}: {first[key]} {payload}"
                )
            continue
        first[key] = payload
    return list(first.values()), problems


def line(moves: Sequence[Payload]) -> dict[int, Payload]:
    """The move of each ply as the events say it: the last published for it (``supersedes``)."""
    out: dict[int, Payload] = {}
    for payload in moves:
        out[payload["data"]["ply"]] = payload
    return out


def is_online_and_connected(consumer: Consumer, table: str) -> bool:
    """Whether the table said it is online and its board connected."""
    statuses = [p["data"]["state"] for p in consumer.payloads(table, "status")]
    boards = [p["data"]["state"] for p in consumer.payloads(table, "board")]
    return "online" in statuses and "connected" in boards


# --- the arbiter -------------------------------------------------------------------------------


def settles(alert: Payload, plan: TablePlan) -> list[str] | None:
    """The line an arbiter sends as ``reconstruct`` for ``alert``, or None when there is none
    to send: only a ``board_mismatch`` that names nobody, on a board whose memory holds nothing,
    listing two or more lines that lead to the board, one of them the moves played from its
    ply. Then no fact the table has tells the lines apart (the order of two moves of one side,
    made while no daemon listened); a board whose memory holds the moves is not helped."""
    data = alert["data"]
    if data["kind"] != "board_mismatch" or data.get("color") is not None:
        return None
    lines: list[str] = data["details"].get("lines") or []
    if plan.memory != "empty" or len(lines) < 2:
        return None
    first = data["ply"] - 1
    for text in lines:
        line_ = text.split()
        if line_ == plan.moves[first : first + len(line_)]:
            return line_
    return None


@dataclass
class Arbiter:
    """Settles what a board cannot tell (:func:`settles`) as an arbiter at the table does:
    ``reconstruct`` with the moves played, at once (the players do not wait for him)."""

    broker: Mosquitto
    settled: dict[str, list[Payload]] = field(default_factory=dict)
    """The alerts settled, by table."""

    async def send(self, table: str, alert: Payload, moves: list[str]) -> None:
        """Publish the ``reconstruct`` (again and again while the broker is away)."""
        request = {
            "transaction": f"soak-{alert['epoch']}-{alert['seq']}",
            "expires_at": time.time() + 600,
            "moves": moves,
        }
        topic = f"chessbridge/1/table/{table}/request/reconstruct"
        while True:
            try:
                async with aiomqtt.Client(
                    self.broker.host, self.broker.port, logger=SUBSCRIBER_LOGGER
                ) as client:
                    await client.publish(topic, json.dumps(request).encode(), qos=1)
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)
                continue
            self.settled.setdefault(table, []).append(alert)
            return

    async def watch(self, consumer: Consumer, tables: Sequence[SoakTable]) -> None:
        """Answer every alert that :func:`settles` as it arrives (until cancelled)."""
        plans = {t.table: t.plan for t in tables}
        answered: set[tuple[str, str, int, int]] = set()
        seen = 0
        while True:
            await consumer.changed(seen)
            fresh, seen = consumer.received[seen:], len(consumer.received)
            for table, suffix, alert in fresh:
                key = (table, alert["game"], alert["epoch"], alert["seq"])
                if suffix == "event/alert" and table in plans and key not in answered:
                    answered.add(key)
                    moves = settles(alert, plans[table])
                    if moves is not None:
                        await self.send(table, alert, moves)


# --- a soak's run --------------------------------------------------------------------------------


@dataclass
class TableOutcome:
    """What one table published, against what was played on it."""

    plan: TablePlan
    table: str
    events: list[Payload]
    """Its ``event/move`` payloads, copies dropped, in arrival order."""
    retained: list[str] | None
    """The moves of its retained ``game`` read afresh at the end (None: none retained)."""
    alerts: list[Payload]
    exits: list[int | None]
    """Exit statuses of its daemons: each killed one's (None: alive when killed), the last's."""
    log: str
    problems: list[str] = field(default_factory=list)
    kills: int = 0
    unplugs: int = 0
    settled: list[Payload] = field(default_factory=list)
    """The alerts the arbiter settled with a ``reconstruct`` (:func:`settles`)."""
    responses: list[Payload] = field(default_factory=list)
    """The table's responses to them."""
    complete_at: float | None = None
    """When the consumer held all its moves and its game (s from the first move), or None."""
    published: list[str] = field(default_factory=list)
    """Everything it published, a line each, copies dropped, with its arrival (the soak's
    clock): for the report."""

    @property
    def exact(self) -> bool:
        return not self.problems

    @property
    def lost(self) -> int:
        """Plies played of which no move was published."""
        published = line(self.events)
        return sum(1 for ply in range(1, len(self.plan.plies) + 1) if ply not in published)

    @property
    def undelivered(self) -> list[tuple[int, str]]:
        """Moves a daemon recorded (its log says ``ply N: SAN``, written once the move's
        events are on disk) whose ``event/move`` never arrived: the delivery's share of what
        was lost, not the engine's."""
        delivered = {(p["data"]["ply"], p["data"]["san"]) for p in self.events}
        recorded = [(int(m[1]), m[2]) for m in _RECORDED.finditer(self.log)]
        return [move for move in dict.fromkeys(recorded) if move not in delivered]

    @property
    def wrong(self) -> int:
        """Plies whose move, as published last, is not the one played (or was never played)."""
        played = self.plan.moves
        return sum(
            1
            for ply, payload in line(self.events).items()
            if ply > len(played) or payload["data"]["uci"] != played[ply - 1]
        )

    def judge(self) -> None:
        """Fill :attr:`problems`: every way in which what was published differs from play."""
        played = self.plan.moves
        published = line(self.events)
        for ply in range(1, max([len(played), *published]) + 1):
            got = published.get(ply)
            want = played[ply - 1] if ply <= len(played) else None
            if got is None:
                self.problems.append(f"ply {ply}: played {want}, never published")
            elif got["data"]["uci"] != want:
                self.problems.append(
                    f"ply {ply}: played {want}, published {got['data']['uci']} ({_event(got)})"
                )
        for ply, san in self.undelivered:
            self.problems.append(
                f"ply {ply}: {san} recorded by a daemon (its log) but its event/move never arrived"
            )
        games = {p["game"] for p in self.events}
        if len(games) > 1:
            self.problems.append(f"moves of {len(games)} games: {sorted(games)}")
        keys = [(p["epoch"], p["seq"]) for p in self.events]
        if keys != sorted(keys):
            self.problems.append(f"moves arrived out of (epoch, seq) order: {keys}")
        if self.retained is None:
            self.problems.append("no retained game")
        elif self.retained != played:
            at = next(
                (i for i, (a, b) in enumerate(zip(self.retained, played, strict=False)) if a != b),
                min(len(self.retained), len(played)),
            )
            self.problems.append(
                f"retained game differs from ply {at + 1}: {len(self.retained)} moves, "
                f"{' '.join(self.retained[at:])} where {' '.join(played[at:])} was played"
            )
        for alert in self.alerts:
            data = alert["data"]
            if data.get("color") is not None:
                self.problems.append(
                    f"alert {data['kind']} at ply {data['ply']} blames {data['color']}: "
                    f"{data['message']}"
                )
        for code in self.exits:
            if code not in (None, 0):
                self.problems.append(f"a daemon exited {code} on its own")
        if self.exits and self.exits[-1] != 0:
            self.problems.append(f"the last daemon's exit status on SIGTERM: {self.exits[-1]}")

    def report(self) -> str:
        """The table's problems, its plan, what it published, its alerts and its log."""
        published = "\n".join(f"    {line_}" for line_ in self.published)
        alerts = "\n".join(f"    {p['data']}" for p in self.alerts) or "    none"
        return (
            f"table {self.plan.index} ({self.table}):\n  "
            + "\n  ".join(self.problems)
            + f"\n  moves played: {' '.join(self.plan.moves)}"
            + f"\n  retained game: {' '.join(self.retained or [])}"
            + f"\n  what it published, as received (s on the soak's clock):\n{published}"
            + f"\n  alerts:\n{alerts}"
            + f"\n  settled by the arbiter: {[a['data']['ply'] for a in self.settled]}"
            + f"\n  responses: {[r['data'] for r in self.responses]}"
            + f"\n  --- its daemons' log ---\n{self.log}"
        )


_RECORDED: Final = re.compile(r"^chessbridge: INFO ply (\d+): (\S+) \(\w+\)$", re.MULTILINE)
"""A daemon's log line for a move it recorded (bridge/table/daemon.py)."""


def _event(payload: Payload) -> str:
    data = payload["data"]
    flags = " supersedes" if data.get("supersedes") else ""
    return (
        f"ply {data['ply']} {data['uci']} ({data['san']}) {data['completed_by']}{flags}, "
        f"epoch {payload['epoch']} seq {payload['seq']}"
    )


@dataclass
class Outcome:
    """A soak's run: each table's outcome and how long it took."""

    plan: Plan
    tables: list[TableOutcome]
    outages: int
    """Broker outages made."""
    connections: int
    """Connections the consumer made (more than one: it lived through the outage too)."""
    played: float
    """Seconds from the first move to the last move made and the last fault over."""
    settled: float
    """Seconds from the first move to every table's moves and retained game all published (or
    the wait given up)."""
    complete: bool
    """Whether every table's moves and game were all published before the wait gave up."""

    @property
    def problems(self) -> list[str]:
        return [f"table {t.plan.index}: {p}" for t in self.tables for p in t.problems]

    def report(self) -> str:
        """The plan, then every table that is not exact, in detail."""
        failed = [t.report() for t in self.tables if not t.exact]
        return "\n\n".join([self.plan.describe(), *failed])


def published(consumer: Consumer, table: str, t0: float) -> list[str]:
    """What ``table`` published, a line a payload, copies dropped, in arrival order."""
    seen: set[tuple[str, str, int, int]] = set()
    out: list[str] = []
    for at, (name, suffix, payload) in zip(consumer.arrived, consumer.received, strict=True):
        key = (suffix, payload.get("game", ""), payload.get("epoch", 0), payload.get("seq", 0))
        if name != table or key in seen or suffix == "game":
            continue
        seen.add(key)
        data = payload.get("data", {})
        if suffix == "event/move":
            what = _event(payload)
        elif suffix == "event/touch":
            what = (
                f"{data['action']} {data['square']} {data['piece']} ({data['meaning']}), "
                f"ply {data['ply']}, hand {data.get('hand')}"
            )
        elif suffix == "event/clock":
            what = (
                f"{data['kind']} by {data['by']}, running {data['running']}, "
                f"completes ply {data['completes_ply']}"
            )
        elif suffix == "event/alert":
            what = f"{data['kind']} at ply {data['ply']}, {data['color']}: {data['message']}"
        elif suffix in ("status", "board"):
            what = str(data.get("state"))
        else:
            what = json.dumps(data)
        where = f"epoch {payload.get('epoch')} seq {payload.get('seq')}"
        out.append(f"{at - t0:7.2f} {suffix:<12} {what} [{where}]")
    return out


class SoakTable:
    """One table of a running soak: its board, its daemon and the player at it."""

    def __init__(self, plan: TablePlan, table: str, emu: DgtEmulator, daemon: Daemon) -> None:
        self.plan = plan
        self.table = table
        self.emu = emu
        self.daemon = daemon
        self.exits: list[int | None] = []
        self.kills = 0
        self.unplugs = 0
        self.complete_at: float | None = None
        """When its moves and game were all published (s from the first move), or None."""

    async def play(self, t0: float) -> None:
        """Every step and press of the table's timeline at its moment."""
        loop = asyncio.get_running_loop()
        for item in self.plan.timed:
            await asyncio.sleep(max(0.0, t0 + self.plan.offset + item.at - loop.time()))
            if item.press is not None:
                await self.emu.press(press_side(item.press))
                continue
            step = item.step
            assert step is not None
            name = chess.square_name(step.square)
            if isinstance(step, Lift):
                await self.emu.lift(name)
            else:
                await self.emu.place(name, step.piece.symbol())

    async def inject(self, t0: float) -> None:
        """The table's kills and its unplug, each at its moment."""
        loop = asyncio.get_running_loop()
        faults: list[Kill | Unplug] = [*self.plan.kills]
        if self.plan.unplug is not None:
            faults.append(self.plan.unplug)
        for fault in sorted(faults, key=lambda f: f.at):
            await asyncio.sleep(max(0.0, t0 + fault.at - loop.time()))
            if isinstance(fault, Kill):
                proc = self.daemon.proc
                if self.daemon.alive:
                    await self.daemon.kill()
                    self.exits.append(None)
                else:  # it exited on its own: say so, and start it again as systemd would
                    self.exits.append(None if proc is None else proc.returncode)
                self.kills += 1
                await asyncio.sleep(fault.down)
                await self.daemon.start()
            else:
                await self.emu.unplug()
                await asyncio.sleep(fault.out)
                await self.emu.plug()
                self.unplugs += 1


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _outage(broker: Mosquitto, outage: Outage, t0: float, done: list[Outage]) -> None:
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, t0 + outage.at - loop.time()))
    await broker.astop()
    await asyncio.sleep(outage.down)
    await broker.astart()
    done.append(outage)


async def retained_games(broker: Mosquitto, tables: Sequence[str]) -> dict[str, list[str]]:
    """Each table's retained ``game`` moves, as a subscriber that comes now reads them."""
    games: dict[str, list[str]] = {}
    client = aiomqtt.Client(broker.host, broker.port, logger=SUBSCRIBER_LOGGER)
    async with client:
        await client.subscribe([(f"chessbridge/1/table/{t}/game", 1) for t in tables])
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(10.0):
                async for message in client.messages:
                    table = message.topic.value.split("/")[3]
                    raw = bytes(message.payload)
                    if message.retain and raw:
                        games.setdefault(table, json.loads(raw)["data"]["moves"]["uci"])
                    if len(games) == len(tables):
                        break
    return games


QUIET: Final = 20.0
"""Seconds without any message after which the wait for missing moves gives up early."""


async def run(plan: Plan, broker: Mosquitto, directory: Path, *, verbose: bool = False) -> Outcome:
    """Play ``plan`` on ``broker`` (Mosquitto with persistence, running): every table's board,
    daemon and player, its faults and the arbiter; then wait for what the tables publish and
    judge it. ``verbose``: the daemons log at DEBUG."""
    prefix = f"s{uuid.uuid4().hex[:8]}"
    names = [f"{prefix}t{t.index}" for t in plan.tables]
    consumer = Consumer(broker, f"{prefix}-consumer")
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(consumer.running())
        tables: list[SoakTable] = []
        for table_plan, name in zip(plan.tables, names, strict=True):
            emu = await stack.enter_async_context(DgtEmulator(memory=table_plan.memory))
            state = directory / f"table{table_plan.index}" / "state"
            state.parent.mkdir(parents=True, exist_ok=True)
            daemon = Daemon(f"dgt:{emu.path}", name, broker.url, state)
            if verbose:
                daemon.args.append("--verbose")
            tables.append(SoakTable(table_plan, name, emu, daemon))
            stack.push_async_callback(daemon.stop)
        arbiter = Arbiter(broker)
        watching = asyncio.create_task(arbiter.watch(consumer, tables))
        stack.push_async_callback(_cancelled, watching)
        for table in tables:
            await table.daemon.start()
        ready = await consumer.wait_for(
            lambda: all(is_online_and_connected(consumer, n) for n in names), START
        )
        if not ready:
            logs = "\n".join(t.daemon.log() for t in tables)
            raise RuntimeError(f"the tables did not come online within {START} s:\n{logs}")
        for table in tables:
            table.emu.set_clock(600, 600, running=press_side(chess.WHITE))

        outages: list[Outage] = []
        t0 = loop.time() + 0.5
        async with asyncio.TaskGroup() as group:
            for table in tables:
                group.create_task(table.play(t0))
                group.create_task(table.inject(t0))
            if plan.outage is not None:
                group.create_task(_outage(broker, plan.outage, t0, outages))
        played = loop.time() - t0

        def complete() -> bool:
            for table in tables:
                if table.complete_at is not None:
                    continue
                events, _ = unique(consumer.payloads(table.table, "event/move"))
                moves = line(events)
                if [
                    moves[p]["data"]["uci"] if p in moves else None
                    for p in range(1, len(table.plan.plies) + 1)
                ] != table.plan.moves:
                    continue
                games = consumer.payloads(table.table, "game")
                if games and games[-1]["data"]["moves"]["uci"] == table.plan.moves:
                    table.complete_at = consumer.last_at - t0
            return all(table.complete_at is not None for table in tables)

        deadline = loop.time() + SETTLE
        done = complete()
        while not done and loop.time() < deadline:
            done = await consumer.wait_for(complete, min(QUIET, deadline - loop.time()))
            if loop.time() - consumer.last_at >= QUIET:
                break
        settled = loop.time() - t0
        retained = await retained_games(broker, names)
        for table in tables:
            if not table.daemon.alive and table.daemon.proc is not None:
                table.exits.append(table.daemon.proc.returncode)
            table.exits.append(await table.daemon.stop())

    outcomes: list[TableOutcome] = []
    for table in tables:
        events, copies = unique(consumer.payloads(table.table, "event/move"))
        alerts, _ = unique(consumer.payloads(table.table, "event/alert"))
        outcome = TableOutcome(
            plan=table.plan,
            table=table.table,
            events=events,
            retained=retained.get(table.table),
            alerts=alerts,
            exits=table.exits,
            log=table.daemon.log(),
            kills=table.kills,
            unplugs=table.unplugs,
            settled=arbiter.settled.get(table.table, []),
            responses=consumer.payloads(table.table, "response/reconstruct"),
            published=published(consumer, table.table, t0),
            complete_at=table.complete_at,
        )
        outcome.problems.extend(copies)
        outcome.judge()
        outcomes.append(outcome)
    return Outcome(plan, outcomes, len(outages), consumer.connections, played, settled, done)
