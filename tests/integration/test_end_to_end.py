"""End to end: emulated DGT board on a pty → ``chessbridge run`` (a subprocess) → mosquitto.

Only what reaches MQTT is judged, as an outside consumer would.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import re
import signal
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import chess
import pytest

from bridge.__main__ import EXIT_BOARD, EXIT_CONFIG, EXIT_TEMPFAIL
from bridge.demo.game import OPERA_GAME, perform, press_side
from bridge.mqtt.state_dir import LOCK_NAME
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.cli import argv, chessbridge
from tests.conftest import Mosquitto, Subscribe, Subscription

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SPEED = 8.0
"""The game is played this many times faster than people play (clock included)."""


def run_argv(board: str, table: str, broker: str, state_dir: Path, *extra: str) -> list[str]:
    """The command line of ``chessbridge run``, as this interpreter runs it."""
    return argv(
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
    )


@contextlib.asynccontextmanager
async def daemon(
    board: str, table: str, broker: str, state_dir: Path, *extra: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """``chessbridge run`` as a subprocess; stopped with SIGTERM on exit."""
    proc = await asyncio.create_subprocess_exec(
        *run_argv(board, table, broker, state_dir, *extra),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 10)
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


def payloads_on(sub: Subscription, suffix: str) -> list[Any]:
    return [json.loads(bytes(m.payload)) for m in sub.on(suffix)]


def state_is(sub: Subscription, suffix: str, state: str) -> bool:
    return any(p["data"]["state"] == state for p in payloads_on(sub, suffix))


async def test_a_whole_game_reaches_mqtt_move_by_move(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    import random

    rng = random.Random(5)
    async with (
        DgtEmulator(speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state") as proc,
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=15)
        await sub.wait_for(lambda _: state_is(sub, "status", "online"), within=15)
        emu.set_clock(600, 600, running="right")
        board = chess.Board()
        for ply, san in enumerate(OPERA_GAME.moves.split(), start=1):
            move = board.parse_san(san)
            await perform(emu, board, move, rng.choice(list(Style)), rng, SPEED)
            mover = board.turn
            board.push(move)
            if not board.is_game_over():
                await emu.press(press_side(mover))
            # The move is out before the next one starts (or is completed by the press).
            await sub.wait_for(lambda _, n=ply: len(payloads_on(sub, "event/move")) >= n, 10)  # type: ignore[misc]
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=10)
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 10) == 0
        await sub.wait_for(lambda _: state_is(sub, "status", "offline"), within=10)

    moves = payloads_on(sub, "event/move")
    expected = chess.Board()
    assert [m["data"]["uci"] for m in moves] == [mv.uci() for mv in board.move_stack]
    for payload, move in zip(moves, board.move_stack, strict=True):
        data = payload["data"]
        assert isinstance(data, dict)
        assert data["san"] == expected.san(move)
        assert data["color"] == ("white" if expected.turn else "black")
        expected.push(move)
        assert data["ply"] == expected.ply()
        assert data["fen"] == expected.fen()
        assert "supersedes" not in data  # sent only when true
        assert data["completed_by"] in ("release", "clock")
        assert payload["v"] == 1
        assert payload["type"] == "move"
        assert payload["table"] == table_id
    everything = [json.loads(bytes(m.payload)) for m in sub.messages]
    seqs = [p["seq"] for p in everything if p["type"] not in ("status", "claim")]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs), "a seq was reused"
    assert {p["epoch"] for p in everything} == {1}
    result = payloads_on(sub, "event/result")[0]["data"]
    assert result == {"result": "1-0", "reason": "checkmate", "article": "5.1.1"}  # fide-2018
    game = payloads_on(sub, "game")[-1]["data"]
    assert isinstance(game, dict)
    assert game["fen"] == board.fen()
    assert game["result"] == "1-0"
    assert game["moves"]["san"] == OPERA_GAME.moves.split()
    assert game["moves"]["uci"] == [m.uci() for m in board.move_stack]
    clocks = [p["data"] for p in payloads_on(sub, "event/clock")]
    presses = [c for c in clocks if c["kind"] == "press"]
    assert len(presses) == len(board.move_stack) - 1
    assert [c["by"] for c in presses] == [
        "white" if i % 2 == 0 else "black" for i in range(len(presses))
    ]


async def run_cli(*args: str) -> tuple[int, str]:
    proc = await chessbridge(
        *args,
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, err.decode()


async def test_a_wrong_board_path_is_one_clear_line(tmp_path: Path, mosquitto: Mosquitto) -> None:
    code, err = await run_cli(
        "run",
        "--board",
        "dgt:/dev/no-such-board",
        "--table",
        "t1",
        "--broker",
        mosquitto.url,
        "--state-dir",
        str(tmp_path),
    )
    assert code != 0
    lines = [line for line in err.splitlines() if "/dev/no-such-board" in line]
    assert lines
    assert "no such device" in lines[0]
    assert "Traceback" not in err


async def test_a_fatal_line_quoting_text_from_outside_stays_one_line(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    board = "dgt:/dev/no-such-board\nchessbridge: ERROR forged\x1b[2K"
    code, err = await run_cli(
        "run", "--board", board, "--table", "t1", "--broker", mosquitto.url,
        "--state-dir", str(tmp_path),
    )  # fmt: skip
    assert code == EXIT_BOARD
    assert "\x1b" not in err
    assert not [line for line in err.splitlines() if line.startswith("chessbridge: ERROR")]
    [line] = [line for line in err.splitlines() if "/dev/no-such-board" in line]
    assert line.startswith("chessbridge: cannot open board at /dev/no-such-board\\nchessbridge")


async def test_a_port_that_is_not_a_dgt_board(
    tmp_path: Path, mosquitto: Mosquitto, silent_port: str
) -> None:
    code, err = await run_cli(
        "run",
        "--board",
        f"dgt:{silent_port}",
        "--table",
        "t1",
        "--broker",
        mosquitto.url,
        "--state-dir",
        str(tmp_path),
    )
    assert code != 0
    assert "no DGT board answered" in err
    assert "Traceback" not in err


async def test_an_unknown_board_type_and_bad_rules_are_refused(tmp_path: Path) -> None:
    code, err = await run_cli("run", "--board", "foo:/x", "--table", "t1")
    assert code == EXIT_CONFIG
    assert "unknown board type 'foo'" in err
    code, err = await run_cli(
        "run", "--board", "dgt:/x", "--table", "t1", "--rules", "uscf", "--state-dir", str(tmp_path)
    )
    assert code == EXIT_CONFIG
    assert "unknown rules edition 'uscf'" in err


async def test_configuration_errors_have_their_own_exit_status(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """systemd must not restart a wrong configuration for ever (RestartPreventExitStatus=78),
    but must restart a board that is not there yet (exit 2)."""
    emulated = DgtEmulator()
    async with emulated as emu:
        board = f"dgt:{emu.path}"
        config = tmp_path / "chessbridge.toml"
        config.write_text(f'[broker]\nca_file = "{tmp_path / "no-such-ca.pem"}"\n')
        code, err = await run_cli(
            "run", "--board", board, "--table", "t1", "--broker", "mqtts://127.0.0.1:8883",
            "--config", str(config), "--state-dir", str(tmp_path / "state"),
        )  # fmt: skip
        assert code == EXIT_CONFIG
        [line] = [line for line in err.splitlines() if line.strip()]
        assert "ca_file" in line
        assert "no-such-ca.pem" in line
        assert "no such file" in line
        config.write_text("[broker]\nurl = 42\n")
        code, err = await run_cli(
            "run", "--board", board, "--table", "t1", "--config", str(config),
            "--state-dir", str(tmp_path / "state"),
        )  # fmt: skip
        assert code == EXIT_CONFIG
        assert "broker.url" in err
        code, err = await run_cli("run", "--table", "t1")  # no --board
        assert code == EXIT_CONFIG
        assert "--board" in err
    code, err = await run_cli(
        "run", "--board", "dgt:/dev/no-such-board", "--table", "t1", "--broker", mosquitto.url,
        "--state-dir", str(tmp_path / "state"),
    )  # fmt: skip
    assert code == EXIT_BOARD == 2


async def test_under_systemd_each_line_has_its_journal_priority(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """stderr is the journal (JOURNAL_STREAM names it): lines start with <N>."""
    log = tmp_path / "journal"
    async with DgtEmulator() as emu:
        with log.open("wb") as stream:
            stat = os.fstat(stream.fileno())
            env = {**os.environ, "JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"}
            proc = await asyncio.create_subprocess_exec(
                *run_argv(f"dgt:{emu.path}", "t1", mosquitto.url, tmp_path / "state"),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stream,
                env=env,
            )
            await asyncio.sleep(0)
            for _ in range(200):
                await asyncio.sleep(0.05)
                if b"connected to MQTT broker" in log.read_bytes():
                    break
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc.wait(), 20) == 0
    lines = log.read_text().splitlines()
    assert lines
    assert all(re.match(r"<[2-7]>chessbridge: ", line) for line in lines), lines
    assert any(line.startswith("<6>chessbridge: INFO board") for line in lines)


async def under_journal(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    """``chessbridge ARGS`` with its stderr as the journal's stream: exit status, stderr lines."""
    log = tmp_path / "journal"
    with log.open("wb") as stream:
        stat = os.fstat(stream.fileno())
        env = {**os.environ, "JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"}
        proc = await asyncio.create_subprocess_exec(
            *argv(*args), stdout=asyncio.subprocess.DEVNULL, stderr=stream, env=env
        )
        code = await asyncio.wait_for(proc.wait(), 30)
    return code, log.read_text().splitlines()


@pytest.mark.parametrize(
    ("case", "expected", "reason"),
    [
        ("config", EXIT_CONFIG, "unknown board type 'foo'"),
        ("usage", EXIT_CONFIG, "the following arguments are required: --board"),
        ("board", EXIT_BOARD, "cannot open board at /dev/no-such-board"),
        ("state-dir", EXIT_TEMPFAIL, "is already open"),
    ],
)
async def test_under_systemd_a_failing_start_says_why_at_priority_err(
    tmp_path: Path, mosquitto: Mosquitto, case: str, expected: int, reason: str
) -> None:
    """The line that says why the unit stopped is shown by ``journalctl -p warning``: it
    starts with ``<3>`` (err), as every line of a usage error does."""
    state = tmp_path / "state"
    board = "foo:/x" if case == "config" else "dgt:/dev/no-such-board"
    args = ["--table", "t1", "--broker", mosquitto.url, "--state-dir", str(state)]
    if case != "usage":
        args += ["--board", board]
    with contextlib.ExitStack() as held:
        if case == "state-dir":  # another process holds the state directory
            state.mkdir()
            lock = held.enter_context((state / LOCK_NAME).open("w"))
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, lines = await under_journal(tmp_path, "run", *args)
    assert code == expected, lines
    assert lines
    assert all(re.match(r"<[2-7]>", line) for line in lines), lines
    [said] = [line for line in lines if reason in line]
    assert said.startswith("<3>chessbridge"), lines
    if case == "usage":
        assert all(line.startswith("<3>") for line in lines), lines


@pytest.mark.parametrize(
    "url",
    [
        "tcp://user:SECRET@broker.lan",
        "mqtt://user:SECRET@broker.lan/x",
        "SECRET@broker",
        "tcp://user:SEC/RET@broker.lan",
    ],
)
async def test_a_password_on_the_command_line_is_never_echoed(tmp_path: Path, url: str) -> None:
    code, err = await run_cli(
        "run", "--board", "dgt:/x", "--table", "t1", "--broker", url, "--state-dir", str(tmp_path)
    )
    assert code != 0
    assert "broker" in err
    assert "SEC" not in err
    assert "RET" not in err


async def test_an_unreachable_broker_is_retried_and_said(
    tmp_path: Path, mosquitto_factory: object
) -> None:
    from tests.conftest import free_port

    port = free_port()  # nothing listens here
    async with (
        DgtEmulator(speed=SPEED) as emu,
        daemon(f"dgt:{emu.path}", "t1", f"mqtt://127.0.0.1:{port}", tmp_path) as proc,
    ):
        assert proc.stderr is not None
        seen = ""
        async with asyncio.timeout(15):
            while "retry" not in seen:
                line = await proc.stderr.readline()
                assert line, "daemon exited instead of retrying"
                seen += line.decode()
        assert proc.returncode is None, "the daemon must keep running while the broker is away"
        assert f"127.0.0.1:{port}" in seen


async def test_systemd_notify_ready_watchdog_and_stopping(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    import socket

    sock_path = tmp_path / "notify"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.setblocking(False)
    env = {**os.environ, "NOTIFY_SOCKET": str(sock_path), "WATCHDOG_USEC": "400000"}
    loop = asyncio.get_running_loop()
    messages: list[str] = []

    async def until(word: str) -> None:
        async with asyncio.timeout(15):
            while not any(word in m for m in messages):
                messages.append((await loop.sock_recv(sock, 4096)).decode())

    try:
        async with DgtEmulator(speed=SPEED) as emu:
            proc = await asyncio.create_subprocess_exec(
                *run_argv(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
                env=env,
                stderr=asyncio.subprocess.DEVNULL,
            )
            await until("READY=1")
            await until("WATCHDOG=1")
            proc.send_signal(signal.SIGTERM)
            await until("STOPPING=1")
            assert await asyncio.wait_for(proc.wait(), 10) == 0
    finally:
        sock.close()
    assert any("STATUS=board connected" in m for m in messages)


async def test_chessbridge_emulate_prints_a_path_a_dgt_host_can_open() -> None:
    import serial  # the host side, as any DGT software would open it

    proc = await chessbridge(
        "emulate",
        "dgt",
    )
    try:
        assert proc.stdout is not None
        path = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        port = serial.Serial(path, 9600, timeout=5)
        try:
            port.write(bytes([0x4D]))  # DGT_SEND_VERSION
            reply = await asyncio.to_thread(port.read, 5)
        finally:
            port.close()
        assert reply[0] == 0x93  # DGT_MSG_VERSION
        assert reply[1:3] == bytes([0, 5])
    finally:
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 10) == 0


def game_moves(sub: Subscription) -> list[str]:
    """The moves (UCI) of the last retained ``game`` seen."""
    games = payloads_on(sub, "game")
    return list(games[-1]["data"]["moves"]["uci"]) if games else []


PROMOTE = "3r3k/2P5/8/8/8/8/6PP/6K1 w - - 0 40"


async def test_the_retained_game_follows_a_move_completed_after_its_press(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """A pawn left on the last rank and pressed is an illegal move (2018 7.5.2); the queen put
    in its place afterwards is the promotion, a move with its press already behind it. The
    retained game showing it goes out with the move, not on a timer: it reaches a subscriber
    before the answer to a request sent once the move was seen."""
    from tests.integration.test_commands import ask, body, started

    async with (
        DgtEmulator(position=PROMOTE, speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "state"),
    ):
        await started(sub)
        emu.set_clock(600, 600, running=press_side(chess.WHITE))
        answer = await ask(sub, table_id, "set_position", body(fen=PROMOTE))
        assert answer["status"] == "ok", answer
        await emu.lift("c7")
        await emu.place("c8", "P")
        await emu.press(press_side(chess.WHITE))
        await sub.wait_for(lambda _: bool(sub.on("event/alert")), within=10)
        assert payloads_on(sub, "event/alert")[0]["data"]["article"] == "7.5.2"
        await emu.lift("c8")
        await emu.place("c8", "Q")
        await sub.wait_for(lambda _: bool(sub.on("event/move")), within=10)
        [move] = payloads_on(sub, "event/move")
        assert move["data"]["uci"] == "c7c8q"

        # Something the daemon answers only after the move was seen: the game goes before it.
        await ask(sub, table_id, "takeback", b"not json")
        await sub.wait_for(lambda _: game_moves(sub) == ["c7c8q"], within=10)
        prefix = f"chessbridge/1/table/{table_id}/"
        order: list[object] = []
        for message in sub.messages:
            suffix = message.topic.value.removeprefix(prefix)
            if suffix == "game":
                uci = json.loads(bytes(message.payload))["data"]["moves"]["uci"]
                order.append(("game", tuple(uci)))
            else:
                order.append(suffix)
        assert order.index(("game", ("c7c8q",))) < order.index("response/takeback"), order
