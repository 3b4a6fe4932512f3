"""``chessbridge watch`` against a real Mosquitto: what a daemon publishes comes out as lines."""

from __future__ import annotations

import asyncio
import io
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiomqtt
import chess
import msgspec
import pytest

from bridge.views.shell import watch
from bridge.wire import payloads
from bridge.wire.config import BrokerConfig, broker_settings
from tests.cli import chessbridge
from tests.conftest import Mosquitto, MosquittoFactory, free_port

TS = 1_777_777_777.0
WITHIN = 20.0
"""Generous: polling ends as soon as the lines are there."""

EPOCH = 3


class _Table:
    """Payloads of one table as its daemon would publish them."""

    def __init__(self, table: str, game: str = "g1") -> None:
        self.table = table
        self.game = game
        self.seq = 0
        self.board = chess.Board()

    def payload(
        self, type_: str, data: msgspec.Struct, extra: dict[str, str | int | None] | None = None
    ) -> bytes:
        self.seq += 1
        return payloads.encode(self.table, self.game, EPOCH, self.seq, TS, type_, data, extra)

    def status(self) -> bytes:
        extra: dict[str, str | int | None] = {"state": "online"}
        return self.payload("status", payloads.StatusData(state="online"), extra)

    def board_state(self) -> bytes:
        data = payloads.BoardData(
            state="connected", driver="dgt", uri="dgt:/dev/pts/9", model="DGT"
        )
        return self.payload("board", data)

    def move(self, san: str, white: int, black: int) -> bytes:
        move = self.board.parse_san(san)
        ply = self.board.ply() + 1
        color = payloads.color_name(self.board.turn)
        self.board.push(move)
        running = payloads.color_name(self.board.turn)
        data = payloads.MoveData(
            ply=ply,
            uci=move.uci(),
            san=san,
            fen=self.board.fen(),
            color=color,
            touched=(chess.square_name(move.from_square), chess.square_name(move.to_square)),
            clock=payloads.Clocks(white=white, black=black, running=running),
            completed_by="clock",
            supersedes=False,
        )
        return self.payload("move", data)

    def game_state(self, **extra: Any) -> bytes:
        """The ``game`` snapshot; ``extra``: more of its fields (``players``, ``event``...)."""
        replay = chess.Board()
        sans = [replay.san_and_push(move) for move in self.board.move_stack]
        data = payloads.GameData(
            id=self.game,
            fen=self.board.fen(),
            start_fen=chess.STARTING_FEN,
            moves=payloads.MoveList(
                uci=tuple(m.uci() for m in self.board.move_stack), san=tuple(sans)
            ),
            clocks=payloads.Clocks(white=300, black=300, running=None),
            turn=payloads.color_name(self.board.turn),
            alerts=(),
            result=None,
            reason=None,
            article=None,
            claimable=(),
            rules="fide-2018",
            last_seq=self.seq,
            **extra,
        )
        return self.payload("game", data)


async def _publish(broker: Mosquitto, table: str, *items: tuple[str, bytes, bool]) -> None:
    """Publish ``(suffix, payload, retain)`` in order at QoS 1, as a daemon would."""
    async with aiomqtt.Client(broker.host, broker.port) as client:
        for suffix, payload, retain in items:
            await client.publish(payloads.topic(table, suffix), payload, qos=1, retain=retain)


async def _clear_retained(broker: Mosquitto, table: str) -> None:
    await _publish(broker, table, *((suffix, b"", True) for suffix in ("status", "board", "game")))


class _Stream(io.StringIO):
    """Collects what is written and wakes whoever waits for some text."""

    def __init__(self, *, terminal: bool = False) -> None:
        super().__init__()
        self.changed = asyncio.Event()
        self._terminal = terminal

    def write(self, text: str) -> int:
        written = super().write(text)
        self.changed.set()
        return written

    def isatty(self) -> bool:
        return self._terminal

    async def wait_for(self, predicate: Callable[[str], bool]) -> str:
        """Wait until ``predicate(text so far)`` holds; fail after ``WITHIN`` seconds."""
        try:
            async with asyncio.timeout(WITHIN):
                while not predicate(self.getvalue()):
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            pytest.fail(f"timed out; got:\n{self.getvalue()}")
        return self.getvalue()


def _start(
    broker: Mosquitto,
    out: io.StringIO,
    stop: asyncio.Event | None,
    *,
    table: str | None,
    plain: bool = True,
    username: str | None = None,
    password: str | None = None,
) -> asyncio.Task[int]:
    settings = broker_settings(broker.url, BrokerConfig(username=username, password=password))
    return asyncio.create_task(
        watch(settings, table=table, plain=plain, stop=stop, out=out, width=80)
    )


def _capture_stderr(monkeypatch: pytest.MonkeyPatch) -> _Stream:
    """What the watch says on stderr (connection trouble), waitable.

    Called in the test body: pytest installs its own capture between setup and call.
    """
    stream = _Stream()
    monkeypatch.setattr(sys, "stderr", stream)
    return stream


async def test_plain_lines_for_retained_state_and_events(
    mosquitto: Mosquitto, table_id: str
) -> None:
    t = _Table(table_id)
    first_move = t.move("e4", 300, 300)
    await _publish(
        mosquitto,
        table_id,
        ("status", t.status(), True),
        ("board", t.board_state(), True),
        ("event/move", first_move, False),
        ("game", t.game_state(), True),
    )
    out, stop = _Stream(), asyncio.Event()
    task = _start(mosquitto, out, stop, table=table_id)
    try:
        await out.wait_for(lambda text: f"{table_id} game g1" in text)
        reply = t.move("c5", 300, 296)
        alert = payloads.AlertData(
            kind="touch_move",
            article="4.3(a)",
            ply=3,
            color="white",
            message="White touched the knight on g1",
            details={},
        )
        result = payloads.ResultData(result="1-0", reason="resignation", article="5.1(b)")
        await _publish(
            mosquitto,
            table_id,
            ("event/move", reply, False),
            ("event/move", reply, False),  # QoS 1 may deliver a payload twice
            ("event/move", b'{"v": 1, "type": "move"', False),
            ("event/alert", t.payload("alert", alert), False),
            ("event/result", t.payload("result", result), False),
        )
        text = await out.wait_for(lambda text: f"{table_id} result" in text)
    finally:
        stop.set()
        code = await task
        await _clear_retained(mosquitto, table_id)
    assert code == 0
    lines = text.splitlines()
    # Retained payloads come in the broker's order, then the events in publication order.
    assert set(lines[:3]) == {
        f"{table_id} status online",
        f"{table_id} board connected (DGT)",
        f"{table_id} game g1 (fide-2018): 1 ply, last 1. e4, W 5:00 B 5:00",
    }
    assert lines[3] == f"{table_id} move 1... c5 (clock) W 5:00* B 4:56"
    assert lines[4].startswith(
        f"warning: {table_id}: malformed payload on chessbridge/1/table/{table_id}/event/move"
    )
    assert lines[5:] == [
        f"{table_id} alert touch_move 4.3(a): White touched the knight on g1",
        f"{table_id} result 1-0 resignation 5.1(b)",
    ]


FORGED = "\x1b]0;owned\x07\x1b[1A\x1b[2KCarlsen\r\nchessbridge: ERROR board lost"
"""A name that would retitle the terminal, go up a line, clear it and start a forged one."""


@pytest.mark.parametrize("screen", [False, True], ids=["plain", "screen"])
async def test_control_characters_from_payloads_are_shown_escaped(
    mosquitto: Mosquitto, table_id: str, screen: bool
) -> None:
    """Player names (as ``assign`` sets them), a board's model, an alert's message: text from
    outside reaches the terminal with its control characters written as escapes."""
    t = _Table(table_id)
    t.move("e4", 300, 300)
    game = t.game_state(players={"white": FORGED, "black": "Nakamura"}, event=FORGED)
    board = payloads.BoardData(state="connected", driver="dgt", uri="dgt:/x", model=FORGED)
    alert = payloads.AlertData(
        kind="touch_move",
        article="4.3(a)",
        ply=1,
        color="white",
        message="Alert" + FORGED,
        details={},
    )
    await _publish(
        mosquitto,
        table_id,
        ("status", t.status(), True),
        ("board", t.payload("board", board), True),
        ("game", game, True),
    )
    out, stop = _Stream(terminal=screen), asyncio.Event()
    task = _start(mosquitto, out, stop, table=table_id, plain=not screen)
    try:
        await out.wait_for(lambda text: "owned" in text)
        await _publish(mosquitto, table_id, ("event/alert", t.payload("alert", alert), False))
        await out.wait_for(lambda text: "Alert\\x1b]0;owned" in text)
    finally:
        stop.set()
        code = await task
        await _clear_retained(mosquitto, table_id)
    text = out.getvalue()
    assert code == 0
    assert "\\x1b]0;owned\\x07\\x1b[1A\\x1b[2KCarlsen\\r\\nchessbridge: ERROR" in text
    assert not any(c in text for c in "\x07\r")
    assert "\x1b]" not in text
    assert "\x1b[1A" not in text
    assert not [line for line in text.splitlines() if "chessbridge: ERROR" in line[:30]]
    if not screen:
        assert "\x1b" not in text


async def test_all_tables(mosquitto: Mosquitto, table_id: str) -> None:
    other = f"{table_id}x"
    out, stop = _Stream(), asyncio.Event()
    task = _start(mosquitto, out, stop, table=None)
    try:
        await _publish(mosquitto, table_id, ("status", _Table(table_id).status(), True))
        await _publish(mosquitto, other, ("status", _Table(other).status(), True))
        await out.wait_for(
            lambda text: f"{table_id} status online" in text and f"{other} status online" in text
        )
    finally:
        stop.set()
        code = await task
        await _clear_retained(mosquitto, table_id)
        await _clear_retained(mosquitto, other)
    assert code == 0


async def test_reconnects_and_drops_what_it_has_seen(
    mosquitto_private: Mosquitto, table_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = _capture_stderr(monkeypatch)
    broker = mosquitto_private
    t = _Table(table_id)
    status = t.status()
    await _publish(broker, table_id, ("status", status, True))
    out, stop = _Stream(), asyncio.Event()
    task = _start(broker, out, stop, table=table_id)
    try:
        await out.wait_for(lambda text: f"{table_id} status online" in text)
        await broker.astop()
        await stderr.wait_for(lambda text: "lost the connection to MQTT broker" in text)
        await broker.astart()
        await stderr.wait_for(lambda text: "reconnected to MQTT broker" in text)
        # The daemon republishes the same retained status (same epoch and seq): not news.
        await _publish(
            broker,
            table_id,
            ("status", status, True),
            ("event/move", t.move("d4", 299, 300), False),
        )
        text = await out.wait_for(lambda text: f"{table_id} move 1. d4" in text)
    finally:
        stop.set()
        code = await task
    assert code == 0
    assert text.splitlines() == [
        f"{table_id} status online",
        f"{table_id} move 1. d4 (clock) W 4:59 B 5:00*",
    ]
    assert "retrying in" in stderr.getvalue()
    assert "Traceback" not in stderr.getvalue()


@pytest.mark.parametrize(("username", "password"), [("viewer", "wrong"), (None, None)])
async def test_refused_credentials_exit_2(
    mosquitto_factory: MosquittoFactory,
    monkeypatch: pytest.MonkeyPatch,
    username: str | None,
    password: str | None,
) -> None:
    stderr = _capture_stderr(monkeypatch)
    broker = mosquitto_factory(users={"viewer": "secret"})
    out, stop = _Stream(), asyncio.Event()
    task = _start(broker, out, stop, table=None, username=username, password=password)
    code = await asyncio.wait_for(task, WITHIN)
    assert code == 2
    lines = stderr.getvalue().splitlines()
    assert len(lines) == 1
    assert "refused the connection" in lines[0]
    assert "username/password" in lines[0]
    assert "secret" not in lines[0]
    assert out.getvalue() == ""


async def test_right_credentials(mosquitto_factory: MosquittoFactory, table_id: str) -> None:
    broker = mosquitto_factory(users={"viewer": "secret"})
    out, stop = _Stream(), asyncio.Event()
    task = _start(broker, out, stop, table=table_id, username="viewer", password="secret")
    try:
        async with aiomqtt.Client(
            broker.host, broker.port, username="viewer", password="secret"
        ) as client:
            status = _Table(table_id).status()
            await client.publish(payloads.topic(table_id, "status"), status, qos=1, retain=True)
        await out.wait_for(lambda text: f"{table_id} status online" in text)
    finally:
        stop.set()
        code = await task
    assert code == 0


async def test_cancellation_returns_0(mosquitto: Mosquitto, table_id: str) -> None:
    out = _Stream()
    task = _start(mosquitto, out, None, table=table_id)
    await _publish(mosquitto, table_id, ("status", _Table(table_id).status(), True))
    await out.wait_for(lambda text: "status online" in text)
    task.cancel()
    assert await task == 0
    await _clear_retained(mosquitto, table_id)


async def test_unreachable_broker_is_retried_until_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = _capture_stderr(monkeypatch)
    broker = Mosquitto.__new__(Mosquitto)  # never started: nothing listens on its port
    broker.port = free_port()
    out, stop = _Stream(), asyncio.Event()
    task = _start(broker, out, stop, table=None)
    await stderr.wait_for(lambda text: text.count("cannot connect to MQTT broker") >= 2)
    stop.set()
    assert await task == 0
    assert "Traceback" not in stderr.getvalue()


async def test_bad_arguments_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    stderr = _capture_stderr(monkeypatch)
    stop = asyncio.Event()
    settings = broker_settings("mqtt://localhost")
    code = await watch(settings, table="a/b", plain=True, stop=stop)
    assert code == 2
    assert "invalid table id" in stderr.getvalue()


async def test_a_bad_broker_url_is_exit_2() -> None:
    proc = await chessbridge("watch", "--broker", "http://localhost", "--plain")
    _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
    assert proc.returncode == 2
    assert "chessbridge watch: broker URL must start with mqtt:// or mqtts://" in err.decode()


async def test_screen_mode_redraws_on_a_terminal(
    mosquitto: Mosquitto, table_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")  # and the stream is ASCII: the plain diagram
    t = _Table(table_id)
    t.move("e4", 300, 300)
    await _publish(
        mosquitto, table_id, ("status", t.status(), True), ("game", t.game_state(), True)
    )
    out, stop = _Stream(terminal=True), asyncio.Event()
    task = _start(mosquitto, out, stop, table=table_id, plain=False)
    try:
        await out.wait_for(lambda text: f"== {table_id}  online" in text and "1. e4" in text)
    finally:
        stop.set()
        code = await task
        await _clear_retained(mosquitto, table_id)
    assert code == 0
    text = out.getvalue()
    assert text.startswith("\x1b[2J")
    assert "\x1b[H" in text
    assert "4  .  .  .  . [P] .  .  ." in text
    assert text.endswith("\x1b[?25h")  # the cursor is shown again
    assert f"{table_id} status online" not in text  # no plain lines on a terminal


async def test_the_command_takes_the_broker_from_the_config(
    mosquitto: Mosquitto, table_id: str, tmp_path: Path
) -> None:
    """``watch --config FILE`` with no ``--broker`` joins the broker named in ``[broker] url``."""
    t = _Table(table_id)
    await _publish(mosquitto, table_id, ("status", t.status(), True))
    config = tmp_path / "watch.toml"
    config.write_text(f'[broker]\nurl = "{mosquitto.url}"\n')
    proc = await chessbridge(
        "watch",
        "--config",
        str(config),
        "--table",
        table_id,
        "--plain",
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), WITHIN)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = await asyncio.wait_for(proc.communicate(), WITHIN)
        await _clear_retained(mosquitto, table_id)
    assert line.decode().strip() == f"{table_id} status online", err.decode()
    assert proc.returncode == 0, err.decode()
    assert mosquitto.url.removeprefix("mqtt://") in err.decode()
