"""Faults injected into a running table: the broker goes away, the daemon is SIGKILLed, the board
is unplugged, the serial line carries garbage.

Each test plays Morphy's Opera Game by hand on the emulated board (lifts, places and clock
presses, at ``SPEED`` times human pace) against ``chessbridge run`` as a subprocess and a real
Mosquitto, injects one fault in the middle, and judges only what an outside consumer receives
over MQTT: after dropping copies by ``(epoch, seq)``, every move arrives exactly once, in order,
and the moves are the game's. Copies of one ``(epoch, seq)`` must be the same payload.

Malformed and unauthorised arbiter commands are covered by ``test_commands.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import re
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, Final, Protocol

import aiomqtt
import chess
import pytest

from bridge.demo.game import OPERA_GAME, press_side
from drivers.choreography import Lift, Style, steps
from drivers.dgt.emulator import DgtEmulator, Memory
from tests.conftest import (
    SUBSCRIBER_LOGGER,
    Mosquitto,
    MosquittoFactory,
    Received,
    SmallDisk,
    Subscribe,
    Subscription,
    subscribed_in_background,
)
from tests.emulated import until
from tests.integration.test_end_to_end import run_argv

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SPEED: Final = 8.0
"""The game is played this many times faster than people play (clock included)."""
GAME: Final = OPERA_GAME.moves.split()
WAIT: Final = 20.0
"""Seconds to wait for one thing the daemon should do promptly (generous: 2 shared cores)."""
RECONNECT_WAIT: Final = 40.0
"""Seconds to wait for something that follows a reconnection with capped backoff."""

Payload = dict[str, Any]


# --- the daemon ------------------------------------------------------------------------------


class Daemon:
    """``chessbridge run`` as a subprocess, its log in a file; can be killed and started again."""

    def __init__(
        self, board: str, table: str, broker: str, state_dir: Path, *, journal: bool = False
    ) -> None:
        self.args = run_argv(board, table, broker, state_dir)
        self.log_path = state_dir.with_name(state_dir.name + ".log")
        self.proc: asyncio.subprocess.Process | None = None
        self.journal = journal
        """Its log file is the journal's stream (``JOURNAL_STREAM``), as under systemd."""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> None:
        # A file, not a pipe: nobody reads a pipe here, and a full one would block the daemon.
        with self.log_path.open("ab") as log:
            env = None
            if self.journal:
                stat = os.fstat(log.fileno())
                env = {**os.environ, "JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"}
            self.proc = await asyncio.create_subprocess_exec(
                *self.args, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log, env=env
            )

    async def kill(self) -> None:
        """SIGKILL: no clean disconnect, no last word."""
        assert self.proc is not None
        assert self.alive, "the daemon already exited"
        self.proc.kill()
        await self.proc.wait()

    async def stop(self) -> int | None:
        """SIGTERM, then SIGKILL if it does not exit in time; its exit status."""
        proc = self.proc
        if proc is None:
            return None
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), WAIT)
            if proc.returncode is None:
                proc.send_signal(signal.SIGUSR1)  # its tasks and where they wait, into its log
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), 1.0)
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
        return proc.returncode

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""


@contextlib.asynccontextmanager
async def daemon(board: str, table: str, broker: str, state_dir: Path) -> AsyncIterator[Daemon]:
    """A started :class:`Daemon`, stopped on exit; its log is printed if the test fails."""
    running = Daemon(board, table, broker, state_dir)
    await running.start()
    try:
        yield running
    finally:
        await running.stop()
        print(f"--- daemon log ---\n{running.log()}")  # shown by pytest only on failure


# --- what a consumer sees ----------------------------------------------------------------------


class Waitable(Protocol):
    """Messages received by a subscriber, in arrival order (the fixture's or our own)."""

    messages: list[aiomqtt.Message]

    async def wait_for(
        self, predicate: Callable[[list[aiomqtt.Message]], bool], within: float = 20.0
    ) -> list[aiomqtt.Message]: ...


def suffix_of(message: aiomqtt.Message) -> str:
    """``event/move`` of ``chessbridge/1/table/{table}/event/move``."""
    return message.topic.value.split("/", 4)[4]


def payloads(messages: list[aiomqtt.Message], suffix: str | None = None) -> list[Payload]:
    """Decoded payloads in arrival order, of one topic suffix or of all."""
    return [
        json.loads(bytes(m.payload)) for m in messages if suffix is None or suffix_of(m) == suffix
    ]


def unique(received: list[Payload]) -> list[Payload]:
    """Drop copies by ``(epoch, seq)`` as a consumer does; copies must be the same payload."""
    first: dict[tuple[int, int], Payload] = {}
    out: list[Payload] = []
    for payload in received:
        key = (payload["epoch"], payload["seq"])
        if key in first:
            assert payload == first[key], f"two different payloads share (epoch, seq) {key}"
            continue
        first[key] = payload
        out.append(payload)
    return out


def moves(messages: list[aiomqtt.Message]) -> list[Payload]:
    """The ``event/move`` payloads a consumer keeps."""
    return unique(payloads(messages, "event/move"))


def states(messages: list[aiomqtt.Message], suffix: str) -> list[str]:
    """``data.state`` of the retained ``status`` or ``board`` payloads, repeats collapsed."""
    out: list[str] = []
    for payload in unique(payloads(messages, suffix)):
        state = payload["data"]["state"]
        if not out or out[-1] != state:
            out.append(state)
    return out


def has_moves(n: int) -> Callable[[list[aiomqtt.Message]], bool]:
    return lambda messages: len(moves(messages)) >= n


def in_state(suffix: str, state: str) -> Callable[[list[aiomqtt.Message]], bool]:
    return lambda messages: any(p["data"]["state"] == state for p in payloads(messages, suffix))


def assert_whole_game(messages: list[aiomqtt.Message], plies: int = len(GAME)) -> list[Payload]:
    """Every move once, in order, each the game's; events in increasing ``seq``."""
    received = moves(messages)
    board = chess.Board()
    expected = [board.push_san(san).uci() for san in GAME[:plies]]
    assert [m["data"]["uci"] for m in received] == expected
    assert [m["data"]["ply"] for m in received] == list(range(1, plies + 1))
    events = unique(payloads([m for m in messages if suffix_of(m).startswith("event/")]))
    seqs = [(p["epoch"], p["seq"]) for p in events]
    assert seqs == sorted(seqs), "events arrived out of order"
    return received


async def online_and_connected(sub: Waitable) -> None:
    await sub.wait_for(in_state("status", "online"), within=RECONNECT_WAIT)
    await sub.wait_for(in_state("board", "connected"), within=WAIT)


# --- playing -----------------------------------------------------------------------------------


Between = Callable[[], Awaitable[None]]


async def play(
    emu: DgtEmulator,
    board: chess.Board,
    rng: random.Random,
    *,
    between: Between | None = None,
    pace: float = SPEED,
) -> None:
    """Make the next move of the game by hand and press the clock (unless the game is over).

    ``between`` runs before each lift, place and press: garbage goes in between whole frames.
    ``pace`` is how many times faster than people the hands move (1: human pace).
    """
    move = board.parse_san(GAME[board.ply()])
    for step in steps(board, move, rng.choice(list(Style))):
        if between is not None:
            await between()
        square = chess.square_name(step.square)
        if isinstance(step, Lift):
            await emu.lift(square)
        else:
            await emu.place(square, step.piece.symbol())
        await asyncio.sleep(rng.uniform(0.12, 0.3) / pace)
    mover = board.turn
    board.push(move)
    if not board.is_game_over():
        if between is not None:
            await between()
        await emu.press(press_side(mover))
        await asyncio.sleep(rng.uniform(0.05, 0.15) / pace)


async def play_until(
    emu: DgtEmulator,
    board: chess.Board,
    rng: random.Random,
    plies: int,
    sub: Waitable | None = None,
    *,
    between: Between | None = None,
) -> None:
    """Play up to ``plies``; with ``sub``, wait for each move to reach it before the next."""
    while board.ply() < plies:
        await play(emu, board, rng, between=between)
        if sub is not None:
            await sub.wait_for(has_moves(board.ply()), within=WAIT)


def start_clock(emu: DgtEmulator) -> None:
    emu.set_clock(600, 600, running=press_side(chess.WHITE))


@contextlib.asynccontextmanager
async def playing(
    broker: Mosquitto, subscribe: Subscribe, table_id: str, directory: Path, *, clock: bool = True
) -> AsyncIterator[tuple[DgtEmulator, Subscription, Daemon]]:
    """An emulated DGT board, a subscriber to the table's topics and ``chessbridge run`` for
    them (state in ``directory``/state); yielded once the table is online with its board
    connected, the clock started."""
    async with (
        DgtEmulator(speed=SPEED) as emu,
        subscribe(broker, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, broker.url, directory / "state") as table,
    ):
        await online_and_connected(sub)
        if clock:
            start_clock(emu)
        yield emu, sub, table


# --- (a) the broker stops in the middle of a game ---------------------------------------------


class PersistentSubscriber(Received):
    """A consumer with a persistent session (clean_session False, fixed client id) that
    reconnects on its own while the broker is away, as a real consumer does."""

    def __init__(self, broker: Mosquitto, topic_filter: str, identifier: str) -> None:
        super().__init__()
        self.broker = broker
        self.topic_filter = topic_filter
        self.identifier = identifier
        self.connections = 0
        self._subscribed = asyncio.Event()

    async def _run(self) -> None:
        while True:
            client = aiomqtt.Client(
                self.broker.host,
                self.broker.port,
                identifier=self.identifier,
                clean_session=False,
                logger=SUBSCRIBER_LOGGER,
            )
            try:
                async with client:
                    self.connections += 1
                    if not self._subscribed.is_set():
                        # Once: afterwards the broker keeps the subscription in the session.
                        await client.subscribe(self.topic_filter, qos=1)
                        self._subscribed.set()
                    async for message in client.messages:
                        self.received(message)
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[PersistentSubscriber]:
        async with subscribed_in_background(self._run(), self._subscribed, WAIT):
            yield self


async def test_moves_made_while_the_broker_is_down_arrive_once_and_in_order(
    mosquitto_factory: MosquittoFactory, table_id: str, tmp_path: Path
) -> None:
    broker = mosquitto_factory(persistence=True)
    rng = random.Random(1)
    board = chess.Board()
    consumer = PersistentSubscriber(
        broker, f"chessbridge/1/table/{table_id}/#", identifier=f"{table_id}-consumer"
    )
    async with (
        DgtEmulator(speed=SPEED) as emu,
        consumer.running() as sub,
        daemon(f"dgt:{emu.path}", table_id, broker.url, tmp_path / "state") as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, 10, sub)

        # The broker stops (SIGTERM: it saves the consumer's session) right after move 10
        # arrived, while the daemon may still be sending its touch, clock and game payloads.
        await broker.astop()
        outage = asyncio.get_running_loop().time()
        await play_until(emu, board, rng, 18)  # eight plies nobody can publish
        await asyncio.sleep(max(0.0, outage + 4.0 - asyncio.get_running_loop().time()))
        assert table.alive, "the daemon must ride out a broker outage"
        await broker.astart()

        await sub.wait_for(has_moves(18), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert table.alive
        assert await table.stop() == 0

    assert consumer.connections >= 2, "the consumer should have lost the broker too"
    # The outbox drained eight plies at once: our in-flight window, not a warning.
    assert "pending publish calls" not in table.log()
    received = assert_whole_game(sub.messages)
    assert {m["epoch"] for m in received} == {1}, "the daemon did not restart"
    assert all(m["data"]["completed_by"] in ("release", "clock") for m in received), (
        "no move should need reconstructing: the board was read all along"
    )


# --- (b) the daemon is killed in the middle of a game ------------------------------------------


@pytest.mark.parametrize(
    ("before", "gap"), [(13, 1), (12, 2)], ids=["one-ply-missed", "two-plies-missed"]
)
async def test_a_daemon_killed_mid_game_resumes_the_same_game_in_a_new_epoch(
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    tmp_path: Path,
    before: int,
    gap: int,
) -> None:
    # White presses first after the restart (see the test below for Black first).
    rng = random.Random(2 + gap)
    board = chess.Board()
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await play_until(emu, board, rng, before, sub)
        await asyncio.sleep(0.1)  # the press after the last move reaches the daemon
        first_run = list(sub.messages)

        await table.kill()
        # The broker sees the connection drop and publishes the Last Will.
        await sub.wait_for(in_state("status", "lost"), within=RECONNECT_WAIT)
        # Moves made while no daemon reads the board: found again in the board dump.
        await play_until(emu, board, rng, before + gap)

        await table.start()
        await sub.wait_for(has_moves(before + gap), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    received = assert_whole_game(sub.messages)
    assert [m["data"]["completed_by"] for m in received[before : before + gap]] == [
        "reconstructed"
    ] * gap
    first = unique(payloads(first_run))
    everything = unique(payloads(sub.messages))
    (game_id,) = {p["game"] for p in first}
    assert {p["game"] for p in everything} == {game_id}, "the restarted daemon began a new game"
    (epoch,) = {p["epoch"] for p in first}
    later = [p for p in everything if p["epoch"] != epoch]
    assert later, "nothing came from the restarted daemon"
    assert {p["epoch"] for p in later} == {epoch + 1}
    assert min(p["seq"] for p in later) > max(p["seq"] for p in first), "a seq was handed out twice"
    assert all(m["epoch"] == epoch + 1 for m in received[before:])
    assert payloads(sub.messages, "event/alert") == []
    result = payloads(sub.messages, "event/result")
    assert [r["data"]["reason"] for r in unique(result)] == ["checkmate"]


async def test_after_a_restart_black_pressing_first_is_black(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(6)
    board = chess.Board()
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await play_until(emu, board, rng, 2, sub)  # 1. e4 e5, both clocks pressed
        await asyncio.sleep(0.1)
        await table.kill()
        await play_until(emu, board, rng, 3)  # 2. Nf3 and White's press, nobody listening
        await table.start()
        await sub.wait_for(has_moves(3), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, 5, sub)  # 2... d6 3. d4: Black presses first
        await sub.wait_for(
            lambda m: (
                len([p for p in payloads(m, "event/clock") if p["data"]["kind"] == "press"]) >= 4
            ),
            within=WAIT,
        )

    presses = [p["data"] for p in unique(payloads(sub.messages, "event/clock"))]
    assert [p["by"] for p in presses if p["kind"] == "press"] == [
        "white",
        "black",
        "black",
        "white",
    ]
    assert payloads(sub.messages, "event/alert") == []


def connected_in(messages: list[aiomqtt.Message], epoch: int) -> bool:
    """Whether the daemon of ``epoch`` said that the board is connected."""
    return any(
        p["epoch"] == epoch and p["data"]["state"] == "connected"
        for p in payloads(messages, "board")
    )


HUMAN_THINKING: Final = (1.5, 2.5)
"""Seconds a player thinks before touching a piece, at human pace."""


@pytest.mark.parametrize("memory", ["log", "empty", "partial", "cut", "silent"])
async def test_moves_made_at_human_pace_while_the_daemon_restarts_are_all_kept(
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    tmp_path: Path,
    memory: Memory,
) -> None:
    """SIGKILL, and the game goes on at human pace while the daemon starts again, whatever the
    board's memory: its whole log, nothing stored (only the end mark), its newest part only (the
    power-up listing overwritten), an answer cut short half-way, or no answer at all.

    Some plies are made before the new daemon reads the board (found in the memory, or read off
    the full board), some while it waits for the memory (held, then judged at the times they
    happened), some after: each is published once, in order, with no alert.
    """
    rng = random.Random(f"restart-{memory}")
    board = chess.Board()
    before, during = 10, 4
    async with (
        DgtEmulator(speed=SPEED, memory=memory) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state") as table,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, before, sub)
        await asyncio.sleep(0.1)  # the press after the last move reaches the daemon

        (epoch,) = {p["epoch"] for p in payloads(sub.messages)}
        await table.kill()
        await table.start()  # as a supervisor would: the restart begins at once
        while board.ply() < before + during:
            await asyncio.sleep(rng.uniform(*HUMAN_THINKING))
            await play(emu, board, rng, pace=1.0)
            if connected_in(sub.messages, epoch + 1):
                # The new daemon reads the board: a move made now is not held for long.
                await sub.wait_for(has_moves(board.ply()), within=WAIT)

        await sub.wait_for(has_moves(before + during), within=RECONNECT_WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    received = assert_whole_game(sub.messages)
    assert {m["epoch"] for m in received[before:]} == {received[0]["epoch"] + 1}
    assert len({p["game"] for p in payloads(sub.messages)}) == 1, "a new game was started"
    assert [p["data"] for p in payloads(sub.messages, "event/alert")] == []
    result = payloads(sub.messages, "event/result")
    assert [r["data"]["reason"] for r in unique(result)] == ["checkmate"]


# --- (c) the board is unplugged in the middle of a game ----------------------------------------


@pytest.mark.parametrize("gap", [1, 2, 3], ids=["one-ply", "two-plies", "three-plies"])
async def test_a_board_unplugged_and_plugged_back_loses_no_move(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path, gap: int
) -> None:
    """The moves made on the unplugged board come back from its memory, with the clock presses
    it stored: a recovered move whose press is in the memory was pressed (no alert)."""
    rng = random.Random(4 + gap)
    board = chess.Board()
    before = 15
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await play_until(emu, board, rng, before, sub)

        await emu.unplug()
        await sub.wait_for(in_state("board", "disconnected"), within=WAIT)
        await play_until(emu, board, rng, before + gap)  # on the unplugged board, pressed
        await asyncio.sleep(0.5)
        await emu.plug()
        await sub.wait_for(lambda m: states(m, "board")[-1] == "connected", within=RECONNECT_WAIT)

        await sub.wait_for(has_moves(before + gap), within=WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert table.alive
        async with mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/board") as late:
            await late.wait_for(lambda m: bool(m), within=WAIT)
            retained = payloads(late.messages)[-1]["data"]
        assert await table.stop() == 0

    assert states(sub.messages, "board") == ["connected", "disconnected", "connected"]
    assert retained["state"] == "connected"
    assert retained["error"] is None
    received = assert_whole_game(sub.messages)
    recovered = received[before : before + gap]
    assert [m["data"]["completed_by"] for m in recovered] == ["reconstructed"] * gap
    assert {p["epoch"] for p in payloads(sub.messages)} == {1}
    assert "lost" not in states(sub.messages, "status")
    assert [p["data"] for p in payloads(sub.messages, "event/alert")] == []


# --- (d) random and mutated bytes on the serial line -------------------------------------------

GARBAGE_TOTAL: Final = 100_000

_FIELD_UPDATE: Final = 0x8E
_BWTIME: Final = 0x8D
_BOARD_DUMP: Final = 0x86
_STATEFUL_SIZES: Final = {_FIELD_UPDATE: 5, _BWTIME: 10, _BOARD_DUMP: 67}
"""Messages that change what the engine believes (squares, clock). A garbage run holding one of
these, well formed, would be a real board message: no receiver could tell, so none is sent."""


def _frame(message_id: int, payload: bytes) -> bytes:
    size = len(payload) + 3
    return bytes([message_id, size >> 7 & 0x7F, size & 0x7F]) + payload


def _specimens(rng: random.Random) -> list[bytes]:
    """Valid board → host messages of every kind, to be mutated."""

    def low(n: int) -> bytes:
        return bytes(rng.randrange(0x80) for _ in range(n))

    return [
        _frame(_FIELD_UPDATE, bytes([rng.randrange(64), rng.randrange(13)])),
        _frame(_BWTIME, bytes([0, 0x10, 0x00, 0, 0x09, 0x59, 0x09])),
        _frame(_BOARD_DUMP, bytes(rng.randrange(13) for _ in range(64))),
        _frame(0x8F, bytes([0x6A]) + low(rng.randrange(40)) + bytes([0x6B])),  # EE_MOVES
        _frame(0x91, b"01234"),  # SERIALNR
        _frame(0x93, bytes([1, 7])),  # VERSION
        _frame(0x92, b"Digital Game Technology"),  # TRADEMARK
        _frame(0xA0, bytes([100, 0x7F, 0x7F, 0, 0, 0, 0, 0, 0])),  # BATTERY_STATUS
    ]


def _mutate(frame: bytes, rng: random.Random) -> bytes:
    data = bytearray(frame)
    kind = rng.randrange(5)
    if kind == 0:  # flipped bits, anywhere
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == 1:  # truncated
        del data[rng.randrange(1, len(data)) :]
    elif kind == 2:  # a wrong length in the header
        size = (data[1] << 7 | data[2]) + rng.choice([-3, -2, -1, 1, 2, 60, 4000])
        data[1], data[2] = size >> 7 & 0x7F, size & 0x7F
    elif kind == 3:  # a byte with its MSB set inside the payload
        data.insert(rng.randrange(1, len(data) + 1), 0x80 | rng.randrange(0x80))
    else:  # too long: extra payload bytes
        data += bytes(rng.randrange(0x80) for _ in range(rng.randint(1, 8)))
    return bytes(data)


def _holds_a_stateful_message(blob: bytes) -> bool:
    for i, byte in enumerate(blob):
        size = _STATEFUL_SIZES.get(byte)
        if size is None or i + size > len(blob):
            continue
        if blob[i + 1 : i + 3] == bytes([0, size]) and all(
            b < 0x80 for b in blob[i + 3 : i + size]
        ):
            return True
    return False


def garbage(rng: random.Random, size: int) -> bytes:
    """``size`` bytes: random runs and mutated messages, none of them a real board message."""
    out = bytearray()
    while len(out) < size:
        if rng.random() < 0.5:
            piece = rng.randbytes(rng.randint(1, 200))
        else:
            piece = _mutate(rng.choice(_specimens(rng)), rng)
        candidate = out + piece
        if not _holds_a_stateful_message(bytes(candidate[-300:])):
            out = candidate
    del out[size:]
    assert not _holds_a_stateful_message(bytes(out))
    return bytes(out)


async def test_random_and_mutated_bytes_between_messages_change_nothing(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(5)
    noise = random.Random(1858)
    board = chess.Board()
    chunk = 800  # before each lift, place and press: about 90 % of the bytes during the game
    sent = 0

    async def inject() -> None:
        nonlocal sent
        size = min(chunk, GARBAGE_TOTAL - sent)
        if size > 0:
            await emu.inject(garbage(noise, size))
            sent += size

    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await inject()
        await play_until(emu, board, rng, len(GAME), sub, between=inject)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        # Whatever is left of the budget goes in after the game: the daemon must still answer.
        while sent < GARBAGE_TOTAL:
            await inject()
        emu.set_clock(300, 300, running=None)  # the clock stops: one more real message
        await sub.wait_for(
            lambda m: any(p["data"]["kind"] == "stopped" for p in payloads(m, "event/clock")),
            within=WAIT,
        )
        assert table.alive
        assert await table.stop() == 0
        await sub.wait_for(in_state("status", "offline"), within=WAIT)

    assert sent == GARBAGE_TOTAL
    received = assert_whole_game(sub.messages)
    assert all("supersedes" not in m["data"] for m in received)  # sent only when true
    assert payloads(sub.messages, "event/alert") == [], "garbage was taken for a board message"
    assert states(sub.messages, "status") == ["online", "offline"]
    assert states(sub.messages, "board") == ["connected"]
    assert payloads(sub.messages, "event/result")[0]["data"]["reason"] == "checkmate"


# --- (e) the disk of the state directory fills up ------------------------------------------------


def status_errors(messages: list[aiomqtt.Message]) -> list[str | None]:
    """``data.error`` of each ``status`` online payload, in order (``None``: no error)."""
    return [
        p["data"].get("error")
        for p in unique(payloads(messages, "status"))
        if p["data"]["state"] == "online"
    ]


async def test_a_full_disk_loses_nothing_and_is_said_on_status(
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    small_disk: SmallDisk,
) -> None:
    rng = random.Random(8)
    board = chess.Board()
    async with playing(mosquitto, mqtt_subscribe, table_id, small_disk.path) as (emu, sub, table):
        await play_until(emu, board, rng, 8, sub)

        small_disk.fill()
        await play_until(emu, board, rng, 16, sub)  # published all the same, from memory
        await sub.wait_for(lambda m: any(status_errors(m)), within=WAIT)
        assert table.alive
        assert "no space left on the disk" in (status_errors(sub.messages)[-1] or "")
        assert "cannot write the outbox" in table.log()
        assert table.log().count("cannot write the outbox") == 1, "said once, not per move"

        small_disk.free()
        await sub.wait_for(lambda m: status_errors(m)[-1] is None, within=WAIT)
        # Everything made meanwhile is on disk now: a SIGKILL and a restart resume the game.
        await table.kill()
        await table.start()
        await sub.wait_for(lambda m: len(unique(payloads(m, "status"))) >= 5, within=WAIT)
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    received = assert_whole_game(sub.messages)
    assert {m["epoch"] for m in received[16:]} == {received[0]["epoch"] + 1}
    assert len({p["game"] for p in payloads(sub.messages)}) == 1, "the game was not resumed"
    assert [p["data"] for p in payloads(sub.messages, "event/alert")] == []


async def test_a_restart_on_a_full_disk_comes_online_and_plays_on(
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    small_disk: SmallDisk,
) -> None:
    """The crash loop at the epoch increment: the reserve makes room for it."""
    rng = random.Random(9)
    board = chess.Board()
    async with playing(mosquitto, mqtt_subscribe, table_id, small_disk.path) as (emu, sub, table):
        await play_until(emu, board, rng, 6, sub)
        await asyncio.sleep(0.1)
        small_disk.fill()
        await table.kill()
        await table.start()
        await sub.wait_for(
            lambda m: any(p["epoch"] == 2 for p in payloads(m, "status")), within=RECONNECT_WAIT
        )
        await play_until(emu, board, rng, 14, sub)
        assert table.alive, f"the daemon did not survive a start on a full disk:\n{table.log()}"
        small_disk.free()
        await play_until(emu, board, rng, len(GAME), sub)
        await sub.wait_for(lambda m: bool(payloads(m, "event/result")), within=WAIT)
        assert await table.stop() == 0

    assert_whole_game(sub.messages)
    assert [p["data"] for p in payloads(sub.messages, "event/alert")] == []


# --- (f) text from outside in the log ------------------------------------------------------------


async def test_a_hostile_request_cannot_forge_a_log_line(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    forged = "\nchessbridge: ERROR board lost, call the arbiter\x1b[1A\x1b[2K\x07"
    request = {"transaction": "t\n\x1b]0;owned\x07", "expires_at": 4102444800, forged: 1}
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path, clock=False) as (
        _,
        sub,
        table,
    ):
        topic = f"chessbridge/1/table/{table_id}/request/takeback"
        await sub.client.publish(topic, json.dumps(request).encode(), qos=1)
        await sub.wait_for(lambda m: bool(payloads(m, "response/takeback")), within=WAIT)
        assert await table.stop() == 0
        log = table.log()

    (response,) = payloads(sub.messages, "response/takeback")
    assert response["data"]["status"] == "error"
    assert "unknown field" in log, "the refusal is logged"
    lines = log.splitlines()
    assert not [
        line for line in lines if "board lost" in line and not line.startswith("chessbridge: INFO")
    ]
    assert not any(c in log for c in "\x1b\x07\r")
    assert "\\nchessbridge: ERROR board lost" in log


async def test_a_forged_claim_cannot_forge_a_log_line_or_stop_the_table(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """Claims that no daemon makes, with line breaks and escapes in them and an early start
    (so that a real claim like it would stop the table): each is ignored, the first said in one
    escaped line, and the table plays on."""
    rng = random.Random(12)
    board = chess.Board()
    forged = "\nchessbridge: ERROR board lost, call the arbiter\x1b[1A\x1b[2K\x07"
    early = "2000-01-01T00:00:00.000Z"

    def claim(instance: str, since: str) -> bytes:
        data = {"instance": instance, "since": since}
        envelope = {"v": 1, "type": "claim", "table": table_id, "game": "", "epoch": 1}
        return json.dumps({**envelope, "seq": 1, "ts": early, "data": data}).encode()

    claims = [
        forged.encode(),  # not even JSON
        claim("0123456789abcdef" + forged, early),  # an instance no daemon makes
        claim("0123456789abcdef", early + forged),  # a start that is no timestamp
    ]
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await play_until(emu, board, rng, 2, sub)
        for raw in claims:
            await sub.client.publish(f"chessbridge/1/table/{table_id}/claim", raw, qos=1)
        # A request after them, on the same connection: its answer comes once they were read.
        request = {"transaction": "after-claims", "expires_at": 4102444800, "plies": 0}
        topic = f"chessbridge/1/table/{table_id}/request/takeback"
        await sub.client.publish(topic, json.dumps(request).encode(), qos=1)
        await sub.wait_for(lambda m: bool(payloads(m, "response/takeback")), within=WAIT)
        await play_until(emu, board, rng, 6, sub)
        assert table.alive, table.log()
        assert await table.stop() == 0
        log = table.log()

    assert_whole_game(sub.messages, plies=6)
    said = [line for line in log.splitlines() if "not a daemon's claim" in line]
    assert len(said) == 1, log
    assert said[0].startswith("chessbridge: WARNING ")
    assert "\\nchessbridge: ERROR board lost, call the arbiter\\x1b[1A" in said[0]
    assert not [line for line in log.splitlines() if line.startswith("chessbridge: ERROR board")]
    assert "already runs table" not in log
    assert not any(c in log for c in "\x1b\x07\r")


async def test_impossible_board_identity_never_reaches_the_retained_board(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(10)
    board = chess.Board()
    hostile = [
        _frame(0x91, b"01\x1b[2K"),  # SERIALNR: ESC [2K
        _frame(0xA2, b"12\x07\n\rchess"),  # LONG_SERIALNR: BEL, line breaks
        _frame(0x93, bytes([127, 127])),  # VERSION 127.127
        _frame(0x92, b"DGT\x1b]0;owned\x07"),  # TRADEMARK: a terminal title escape
    ]
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub, table):
        await play_until(emu, board, rng, 4, sub)
        for frame in hostile:
            await emu.inject(frame)
        # Plausible ones that noise could frame (the protocol has no checksum): a serial said
        # once, between the board's own answers to the keep-alive, and a trademark the daemon
        # never asked for. Neither is the board's.
        await emu.inject(_frame(0x91, b"99999"))
        await emu.inject(_frame(0x92, b"Digital Game Technology"))
        await play_until(emu, board, rng, 8, sub)
        assert await table.stop() == 0
        log = table.log()

    boards = [p["data"] for p in payloads(sub.messages, "board")]
    assert {(b["serial"], b["firmware"], b["model"]) for b in boards} == {("01234", "1.07", None)}
    assert_whole_game(sub.messages, plies=8)
    assert not any(c in log for c in "\x1b\x07")


# --- (g) two daemons for one table ---------------------------------------------------------------


async def test_a_second_daemon_for_the_same_table_refuses_to_run(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """A second daemon (another state directory, so another epoch 1) would share the table's
    (epoch, seq) space and consumers would drop real messages: it stops, with one clear line
    and the configuration-error status; the first one goes on, its claim standing."""
    rng = random.Random(11)
    board = chess.Board()
    async with (
        DgtEmulator(speed=SPEED) as emu,
        DgtEmulator(speed=SPEED) as other_board,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "first") as first,
    ):
        await online_and_connected(sub)
        start_clock(emu)
        await play_until(emu, board, rng, 4, sub)
        (first_instance,) = {p["data"]["instance"] for p in payloads(sub.messages, "claim")}
        second = Daemon(
            f"dgt:{other_board.path}", table_id, mosquitto.url, tmp_path / "second", journal=True
        )
        await second.start()
        assert second.proc is not None
        code = await asyncio.wait_for(second.proc.wait(), RECONNECT_WAIT)
        await play_until(emu, board, rng, 8, sub)
        assert first.alive
        topics = f"chessbridge/1/table/{table_id}/+"
        async with mqtt_subscribe(mosquitto, topics) as late:  # the retained ones
            await late.wait_for(lambda m: {suffix_of(x) for x in m} >= {"status", "claim"})
            retained = {suffix_of(m): json.loads(bytes(m.payload))["data"] for m in late.messages}
        assert await first.stop() == 0

    assert code == 78, second.log()
    lines = [line for line in second.log().splitlines() if "already runs table" in line]
    assert len(lines) == 1, second.log()
    # Under systemd, at priority err: `journalctl -p warning` shows why the unit stopped.
    assert lines[0].startswith("<3>chessbridge: another chessbridge daemon"), second.log()
    assert all(re.match(r"<[2-7]>", line) for line in second.log().splitlines()), second.log()
    assert retained["status"]["state"] == "online"
    assert retained["claim"]["instance"] == first_instance
    assert_whole_game(sub.messages, plies=8)


async def test_sigusr1_says_where_each_task_of_the_daemon_waits(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """A daemon that seems to hang is asked with SIGUSR1: its log names every task of its event
    loop and where it waits, and it goes on running."""
    async with playing(mosquitto, mqtt_subscribe, table_id, tmp_path) as (_, _, table):
        assert table.proc is not None
        table.proc.send_signal(signal.SIGUSR1)
        await until(lambda: "task publisher:" in table.log() and "task board:" in table.log())
        assert table.alive
        assert await table.stop() == 0
    log = table.log()
    assert "SIGUSR1:" in log
    assert "run (supervisor.py:" in log  # the board task, in the supervisor's run loop
