"""End to end for the serial families beyond DGT: an emulated Millennium or Certabo board on a
pty → ``chessbridge run`` (a subprocess) → a real Mosquitto, judged over MQTT as an outside
consumer would. Each plays Morphy's Opera Game by hand with the cable pulled and put back in the
middle, and the board's lights are checked for the last move and, after a mismatch, for the
squares to put right. Two plies made while unplugged are both read off the board when it is
back, and a Certabo plays a short game at its own pace with the family's own timing.
"""

from __future__ import annotations

import asyncio
import functools
import random
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Final

import chess
import pytest

from bridge.demo.game import OPERA_GAME, perform
from drivers import create_link, parse_board_uri
from drivers.certabo.emulator import CertaboEmulator
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from drivers.millennium.emulator import MillenniumEmulator
from tests import emulated
from tests.cli import chessbridge
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_end_to_end import daemon, payloads_on

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SPEED: Final = 8.0
"""Hands move this many times faster than people's."""
GAME: Final = OPERA_GAME.moves.split()
UNPLUGGED_AT: Final = 14
"""Plies played before the cable is pulled; the next ply is made on the unplugged board."""
WAIT: Final = 15.0
CERTABO_LINE: Final = 0.1
"""Seconds between the emulated Certabo's lines: ten times a real board's pace, so the dwell
and flicker are set to match in the config (the family's own are for a line a second)."""

Emulator = MillenniumEmulator | CertaboEmulator


@asynccontextmanager
async def table(
    family: str,
    broker: Mosquitto,
    subscribe: Subscribe,
    table_id: str,
    tmp_path: Path,
    *,
    own_pace: bool = False,
) -> AsyncIterator[tuple[Emulator, Subscription]]:
    """An emulated board of ``family``, a subscriber to the table's topics and ``chessbridge
    run`` for them; yielded once the board is connected. ``own_pace``: a Certabo reads the
    board at its own pace and the daemon keeps the family's dwell and flicker."""
    emu: Emulator
    extra: list[str] = []
    if family == "millennium":
        emu = MillenniumEmulator()
    elif own_pace:
        emu = CertaboEmulator()
    else:
        emu = CertaboEmulator(interval=CERTABO_LINE)
        config = tmp_path / "certabo.toml"
        config.write_text("[engine]\ndwell = 0.3\nflicker = 0.15\n")
        extra = ["--config", str(config)]
    async with (
        emu,
        subscribe(broker, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(f"{family}:{emu.path}", table_id, broker.url, tmp_path / "state", *extra),
    ):
        await sub.wait_for(lambda _: "connected" in board_states(sub), within=WAIT)
        yield emu, sub


def moves(sub: Subscription) -> list[dict[str, Any]]:
    unique: dict[tuple[int, int], dict[str, Any]] = {}
    for payload in payloads_on(sub, "event/move"):
        unique.setdefault((payload["epoch"], payload["seq"]), payload)
    return [p["data"] for p in unique.values()]


def board_states(sub: Subscription) -> list[str]:
    out: list[str] = []
    for payload in payloads_on(sub, "board"):
        if not out or out[-1] != payload["data"]["state"]:
            out.append(payload["data"]["state"])
    return out


async def play_to(emu: Emulator, board: chess.Board, rng: random.Random, plies: int) -> None:
    while board.ply() < plies:
        move = board.parse_san(GAME[board.ply()])
        await perform(emu, board, move, rng.choice(list(Style)), rng, SPEED)
        board.push(move)


until = functools.partial(emulated.until, within=WAIT, every=0.01)


@pytest.mark.parametrize("family", ["millennium", "certabo"])
async def test_a_whole_game_with_the_cable_pulled_in_the_middle(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(9)
    board = chess.Board()
    async with table(family, mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub):
        for ply in range(1, UNPLUGGED_AT + 1):
            await play_to(emu, board, rng, ply)
            await sub.wait_for(lambda _, n=ply: len(moves(sub)) >= n, within=WAIT)  # type: ignore[misc]
        last = board.peek()
        await until(
            lambda: (
                emu.lit >= {chess.square_name(last.from_square), chess.square_name(last.to_square)}
            )
        )

        await emu.unplug()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", within=WAIT)
        await play_to(emu, board, rng, UNPLUGGED_AT + 1)  # nobody listening
        await emu.plug()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "connected", within=WAIT)
        await sub.wait_for(lambda _: len(moves(sub)) > UNPLUGGED_AT, within=WAIT)

        for ply in range(UNPLUGGED_AT + 2, len(GAME) + 1):
            await play_to(emu, board, rng, ply)
            await sub.wait_for(lambda _, n=ply: len(moves(sub)) >= n, within=WAIT)  # type: ignore[misc]
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=WAIT)
        await until(lambda: {"d1", "d8"} <= emu.lit)  # Rd8#, the last move

    received = moves(sub)
    assert [m["uci"] for m in received] == [m.uci() for m in board.move_stack]
    assert [m["ply"] for m in received] == list(range(1, len(GAME) + 1))
    assert received[UNPLUGGED_AT]["completed_by"] == "reconstructed"
    others = received[:UNPLUGGED_AT] + received[UNPLUGGED_AT + 1 :]
    assert {m["completed_by"] for m in others} == {"release"}, "no clock: moves end on release"
    assert board_states(sub) == ["connected", "disconnected", "connected"]
    retained = payloads_on(sub, "board")[-1]["data"]
    assert retained["driver"] == family
    assert retained["model"] == {"millennium": "Millennium ChessLink", "certabo": "Certabo"}[family]
    assert retained["orientation"] == "normal"
    result = payloads_on(sub, "event/result")[0]["data"]
    assert result == {"result": "1-0", "reason": "checkmate", "article": "5.1.1"}
    alerts = [a["data"] for a in payloads_on(sub, "event/alert")]
    assert alerts == [], "a game played cleanly raises no alert"


async def test_two_plies_made_while_unplugged_are_both_read_off_the_board(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(5)
    board = chess.Board()
    async with table("millennium", mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub):
        for ply in (1, 2):  # 1. e4 e5
            await play_to(emu, board, rng, ply)
            await sub.wait_for(lambda _, n=ply: len(moves(sub)) >= n, within=WAIT)  # type: ignore[misc]
        await emu.unplug()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", within=WAIT)
        await play_to(emu, board, rng, 4)  # 2. Nf3 d6, nobody listening
        await emu.plug()
        await sub.wait_for(lambda _: len(moves(sub)) >= 4, within=WAIT)
        await play_to(emu, board, rng, 5)  # 3. d4, heard again
        await sub.wait_for(lambda _: len(moves(sub)) >= 5, within=WAIT)
    received = moves(sub)
    assert [m["uci"] for m in received] == [m.uci() for m in board.move_stack]
    assert [m["san"] for m in received] == GAME[:5]
    assert [m["completed_by"] for m in received] == [
        "release", "release", "reconstructed", "reconstructed", "release",
    ]  # fmt: skip
    assert board_states(sub) == ["connected", "disconnected", "connected"]
    assert payloads_on(sub, "event/alert") == []


SCHOLARS_MATE: Final = ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]


async def test_a_certabo_game_at_the_boards_own_pace_and_the_familys_timing(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """Nothing scaled: the emulated Certabo reads the board once a second (the vendor's own
    simulator), hands move at people's pace, and the daemon uses the family's dwell and flicker
    (1.6 / 1.2 s), as a table with a Certabo does."""
    rng = random.Random(11)
    board = chess.Board()
    async with table("certabo", mosquitto, mqtt_subscribe, table_id, tmp_path, own_pace=True) as (
        emu,
        sub,
    ):
        for ply, san in enumerate(SCHOLARS_MATE, start=1):
            move = board.parse_san(san)
            await perform(emu, board, move, rng.choice(list(Style)), rng)
            board.push(move)
            await sub.wait_for(lambda _, n=ply: len(moves(sub)) >= n, within=WAIT)  # type: ignore[misc]
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=WAIT)
    received = moves(sub)
    assert [m["san"] for m in received] == SCHOLARS_MATE
    assert {m["completed_by"] for m in received} == {"release"}
    result = payloads_on(sub, "event/result")[0]["data"]
    assert result == {"result": "1-0", "reason": "checkmate", "article": "5.1.1"}
    assert payloads_on(sub, "event/alert") == [], "a game played cleanly raises no alert"


@pytest.mark.parametrize("family", ["millennium", "certabo"])
async def test_the_lights_show_the_squares_to_put_right(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    rng = random.Random(3)
    board = chess.Board()
    async with table(family, mosquitto, mqtt_subscribe, table_id, tmp_path) as (emu, sub):
        await play_to(emu, board, rng, 1)  # 1. e4
        await sub.wait_for(lambda _: len(moves(sub)) >= 1, within=WAIT)
        await until(lambda: {"e2", "e4"} <= emu.lit)

        # Pieces knocked off a8 and h1 while the cable is out: no move explains the board.
        await emu.unplug()
        await sub.wait_for(lambda _: board_states(sub)[-1] == "disconnected", within=WAIT)
        rook = await emu.lift("a8")
        other_rook = await emu.lift("h1")
        await emu.plug()
        await sub.wait_for(lambda _: bool(payloads_on(sub, "event/alert")), within=WAIT)
        alert = payloads_on(sub, "event/alert")[0]["data"]
        assert alert["kind"] == "board_mismatch"
        assert sorted(alert["details"]["squares"]) == ["a8", "h1"]
        await until(lambda: emu.lit == {"a8", "h1"})

        assert rook is not None
        assert other_rook is not None
        await emu.place("a8", rook)
        await until(lambda: emu.lit == {"h1"})  # each square goes out as it is put right
        await emu.place("h1", other_rook)
        await until(lambda: {"e2", "e4"} <= emu.lit and "h1" not in emu.lit)
    assert [m["uci"] for m in moves(sub)] == ["e2e4"]


@pytest.mark.parametrize("family", ["millennium", "certabo"])
async def test_chessbridge_emulate_serves_a_board_its_link_opens(family: str) -> None:
    proc = await chessbridge(
        "emulate",
        family,
    )
    try:
        assert proc.stdout is not None
        path = (await asyncio.wait_for(proc.stdout.readline(), 15)).decode().strip()
        link = create_link(parse_board_uri(f"{family}:{path}"), lambda _: None)
        try:
            await link.open()  # the family's own identification: version or whole board
        finally:
            await link.close()
        assert link.info.trademark in ("Millennium ChessLink", "Certabo")
    finally:
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), 10) == 0


@pytest.mark.parametrize(
    ("family", "other", "expected"),
    [
        ("dgt", "millennium", "no DGT board answered"),
        ("millennium", "dgt", "no Millennium board answered"),
        ("certabo", "millennium", "no Certabo board spoke"),
    ],
)
async def test_a_port_with_another_familys_board_ends_run_in_one_line(
    family: str, other: str, expected: str, tmp_path: Path, mosquitto: Mosquitto
) -> None:
    emulator = DgtEmulator() if other == "dgt" else MillenniumEmulator()
    async with emulator as emu:
        path = emu.path
        proc = await chessbridge(
            "run", "--board", f"{family}:{path}", "--table", "t1", "--broker", mosquitto.url,
            "--state-dir", str(tmp_path / "state"),
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    text = err.decode()
    [line] = [line for line in text.splitlines() if "opened but no" in line]
    assert f"{path} opened but {expected} within" in line
    assert "(expected " in line
    assert "Traceback" not in text


async def play_and_check_rotated(
    emu: Emulator,
    board_uri: str,
    table_id: str,
    broker: Mosquitto,
    state: Path,
    subscribe: Subscribe,
) -> None:
    """Four plies on a board set up from Black's side: the right moves, lit the right way."""
    rng = random.Random(1)
    board = chess.Board()
    async with (
        subscribe(broker, f"chessbridge/1/table/{table_id}/#") as sub,
        daemon(board_uri, table_id, broker.url, state),
    ):
        # This daemon's own "connected" (a daemon before it may have left one retained).
        await sub.wait_for(
            lambda _: any(
                p["data"]["state"] == "connected" and p["data"]["uri"] == board_uri
                for p in payloads_on(sub, "board")
            ),
            within=WAIT,
        )
        for ply in range(1, 5):
            await play_to(emu, board, rng, ply)
            await sub.wait_for(lambda _, n=ply: len(moves(sub)) >= n, within=WAIT)  # type: ignore[misc]
        await until(lambda: {"g8", "f6"} <= emu.lit or {"d7", "d6"} <= emu.lit)
    assert [m["uci"] for m in moves(sub)] == [m.uci() for m in board.move_stack]
    assert payloads_on(sub, "board")[-1]["data"]["orientation"] == "rotated"
    assert {
        chess.square_name(board.peek().from_square),
        chess.square_name(board.peek().to_square),
    } <= emu.lit


async def test_a_millennium_board_set_up_from_blacks_side(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with MillenniumEmulator(rotated=True) as emu:
        await play_and_check_rotated(
            emu, f"millennium:{emu.path}", table_id, mosquitto, tmp_path / "state", mqtt_subscribe
        )


async def test_a_certabo_set_learnt_once_tells_a_board_set_up_from_blacks_side(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    # First the set is learnt on a board set up the usual way; the daemon keeps the tags.
    async with (
        CertaboEmulator(interval=CERTABO_LINE, seed=7) as emu,
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/board") as sub,
        daemon(f"certabo:{emu.path}", table_id, mosquitto.url, state),
    ):
        await sub.wait_for(lambda _: "connected" in board_states(sub), within=WAIT)
    assert (state / "certabo-tags.json").exists()
    # The same pieces (same tags) set up from Black's side, a daemon started afresh.
    async with CertaboEmulator(interval=CERTABO_LINE, seed=7, rotated=True) as emu:
        await play_and_check_rotated(
            emu, f"certabo:{emu.path}", table_id, mosquitto, state, mqtt_subscribe
        )
