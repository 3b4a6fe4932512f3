"""``chessbridge emulate``: an emulated board played by hand on stdin or from a PGN file.

The console drives a real emulator on a pseudo-terminal; the end-to-end tests type into the
command's stdin while ``chessbridge run`` reads the board and publishes to a real Mosquitto.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import pytest

import drivers
from bridge.demo.console import Console, ConsoleError, read_pgn
from drivers.dgt.emulator import DgtEmulator
from drivers.emulation import create_emulator, emulated_families
from tests.cli import chessbridge
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_end_to_end import daemon, payloads_on, state_is

pytestmark = pytest.mark.pty

GAMES = Path(__file__).resolve().parents[1] / "games"


def pieces(board: chess.Board) -> dict[str, str]:
    return {chess.square_name(sq): p.symbol() for sq, p in board.piece_map().items()}


@contextlib.asynccontextmanager
async def console() -> AsyncIterator[tuple[Console, DgtEmulator]]:
    async with DgtEmulator() as emu:
        yield Console(emu, speed=50, out=io.StringIO()), emu


# --- the console on its own ----------------------------------------------------------------


async def test_a_typed_move_is_made_by_hand_and_known_to_the_hands() -> None:
    async with console() as (hands, emu):
        assert await hands.execute("e2e4") == "1. e4 (lift e2, place e4 P)"
        assert await hands.execute("d5") == "1... d5 (lift d7, place d5 p)"
        reply = await hands.execute("exd5 victim-first")
        assert reply == "2. exd5 (lift d5, lift e4, place d5 P)"
        expected = chess.Board()
        for san in ("e4", "d5", "exd5"):
            expected.push_san(san)
        assert emu.position == pieces(expected)
        assert hands.game == expected


async def test_lifts_and_places_one_at_a_time_are_recognised_as_a_move() -> None:
    async with console() as (hands, emu):
        assert await hands.execute("lift g1") == "lifted N from g1"
        assert await hands.execute("place f3") == "placed N on f3: 1. Nf3 on the board"
        assert hands.game.move_stack == [chess.Move.from_uci("g1f3")]
        # An illegal move staged by hand is made on the board but not taken into the game.
        await hands.execute("lift b8")
        assert await hands.execute("place b4 n") == "placed n on b4"
        assert emu.position["b4"] == "n"
        assert "b8" not in emu.position
        assert len(hands.game.move_stack) == 1


async def test_press_defaults_to_the_player_who_just_moved() -> None:
    async with console() as (hands, emu):
        emu.set_clock(60, 60)
        # Before any move, Black starts White's clock: Black's button is the left one.
        assert (
            await hands.execute("press") == "pressed the clock on the left: Black's, who moved last"
        )
        assert emu.clock_running == "right"
        await hands.execute("d2d4")
        assert (
            await hands.execute("press")
            == "pressed the clock on the right: White's, who moved last"
        )
        assert emu.clock_running == "left"
        assert await hands.execute("press black") == "pressed the clock on the left: Black's"


CLOCKLESS = ["millennium", "certabo", "chessnut", "pegasus", "millennium-ble"]
"""The families whose boards have no clock behind them."""


@pytest.mark.parametrize("scheme", CLOCKLESS)
async def test_press_on_a_board_without_a_clock_says_it_has_none(scheme: str) -> None:
    assert set(CLOCKLESS) == set(emulated_families()) - {"dgt"}
    board = create_emulator(scheme)  # a press never reaches the board: it need not be served
    hands = Console(board, out=io.StringIO())
    reply = await hands.execute("press")
    assert reply == (
        f"the {scheme} board has no clock: nothing was pressed (its moves complete when the "
        "piece is released)"
    )
    assert "pressed the clock" not in await hands.execute("press white")
    with pytest.raises(ConsoleError, match=f"the {scheme} board has no clock the hands can set"):
        await hands.execute("clock 5:00")


async def test_a_dgt_board_without_its_clock_has_none_to_press_or_set() -> None:
    async with DgtEmulator(clock=False) as emu:
        hands = Console(emu, speed=50, out=io.StringIO())
        hands.set_clock(300, 300)  # as the command does at start: nothing to set, no error
        assert (await hands.execute("press")).startswith("the dgt board has no clock")
        with pytest.raises(ConsoleError, match="has no clock the hands can set"):
            await hands.execute("clock 5:00")
        assert emu.clock_times is None


async def test_knock_restore_reset_and_a_fen_set_the_pieces() -> None:
    async with console() as (hands, emu):
        await hands.execute("e2e4")
        knocked = await hands.execute("knock")
        assert knocked.startswith("knocked over P e4")
        assert emu.position != pieces(hands.game)
        await hands.execute("restore")
        assert emu.position == pieces(hands.game)

        fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
        assert (await hands.execute(fen)).startswith(f"set up {fen}")
        assert emu.position == {"e8": "k", "e1": "K", "h1": "R"}
        assert await hands.execute("O-O") == "1. O-O (lift e1, place g1 K, lift h1, place f1 R)"
        await hands.execute("reset")
        assert emu.position == pieces(chess.Board())
        assert hands.game == chess.Board()


async def test_the_clock_command_sets_white_and_black() -> None:
    async with console() as (hands, emu):
        assert await hands.execute("clock 3:00 2:30") == "clock set: White 3:00, Black 2:30, paused"
        assert emu.clock_times == (150, 180)  # White's time on the right
        assert emu.clock_running is None


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("e2e5", "'e2e5' is not a command nor a legal move for White here"),
        ("lift", "which square? e.g. lift e2"),
        ("lift z9", "'z9' is not a square"),
        ("place e4", "the hand is empty: say which piece"),
        ("place e4 X", "'X' is not a piece"),
        ("press up", "press which side?"),
        ("e2e4 sideways", "unknown style 'sideways'"),
        ("clock soon", "'soon' is not a time"),
        ("wait forever", "wait SECONDS"),
        ("8/8/8 w - - 0 1", "not a FEN"),
    ],
)
async def test_a_bad_command_is_one_line_saying_what_to_type(line: str, error: str) -> None:
    async with console() as (hands, emu):
        before = dict(emu.position)
        with pytest.raises(ConsoleError) as caught:
            await hands.execute(line)
        assert error in str(caught.value)
        assert "\n" not in str(caught.value)
        assert emu.position == before


async def test_help_lists_every_command() -> None:
    async with console() as (hands, _):
        text = await hands.execute("help")
    for word in ("e2e4", "press", "lift", "place", "knock", "restore", "reset", "FEN", "clock"):
        assert word in text


def test_a_pgn_without_moves_or_with_an_illegal_one_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.pgn"
    empty.write_text('[Event "x"]\n\n*\n')
    with pytest.raises(ConsoleError, match="has no moves"):
        read_pgn(empty)
    illegal = tmp_path / "illegal.pgn"
    illegal.write_text("1. e4 e5 2. Ke3 *\n")
    with pytest.raises(ConsoleError, match="Ke3"):
        read_pgn(illegal)
    with pytest.raises(ConsoleError, match="cannot read"):
        read_pgn(tmp_path / "missing.pgn")


# --- the family table ----------------------------------------------------------------------


def test_every_emulated_family_is_a_board_family_and_builds() -> None:
    assert "dgt" in emulated_families()
    for scheme in emulated_families():
        assert scheme in drivers.FAMILIES
        assert create_emulator(scheme).scheme == scheme
    with pytest.raises(ValueError, match="no emulator for 'nosuch'"):
        create_emulator("nosuch")


async def test_the_command_refuses_an_unknown_family_in_one_line() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bridge", "emulate", "nosuch", stderr=asyncio.subprocess.PIPE
    )
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    assert "invalid choice: 'nosuch'" in err.decode()


@pytest.mark.parametrize(("family", "extra"), [("dgt", ["--no-clock"]), ("certabo", [])])
async def test_the_command_says_a_board_without_a_clock_has_none(
    family: str, extra: list[str]
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bridge",
        "emulate",
        family,
        *extra,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(b"press\nquit\n"), 30)
    assert proc.returncode == 0, err.decode()
    assert f"the {family} board has no clock: nothing was pressed" in out.decode()
    assert f"the {family} board has no clock, a move completes on release" in err.decode()
    assert "Traceback" not in err.decode()


# --- emulate + run: a person plays by typing -----------------------------------------------


@contextlib.asynccontextmanager
async def emulate(
    *args: str, family: str = "dgt"
) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``chessbridge emulate FAMILY ARGS`` with a pipe for stdin; yields it and the board URI."""
    proc = await chessbridge(
        "emulate",
        family,
        *args,
        stdin=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        address = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip()
        yield proc, f"{family}:{address}"
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)


async def type_lines(proc: asyncio.subprocess.Process, *lines: str) -> None:
    assert proc.stdin is not None
    proc.stdin.write("".join(f"{line}\n" for line in lines).encode())
    await proc.stdin.drain()


def presses(sub: Subscription) -> list[str]:
    """Who pressed the clock, in order."""
    clocks = [p["data"] for p in payloads_on(sub, "event/clock")]
    return [c["by"] for c in clocks if c["kind"] == "press"]


@pytest.mark.mosquitto
async def test_moves_typed_into_emulate_are_published_by_run(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    async with (
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        emulate() as (board, uri),
        daemon(uri, table_id, mosquitto.url, tmp_path / "state") as run,
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=30)
        # As a person types: a moment between the commands of a move made piece by piece.
        await type_lines(
            board, "press", "e2e4", "press", "wait 0.5", "lift g8", "wait 0.5", "place f6", "press"
        )
        await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 2, within=30)
        await sub.wait_for(lambda _: presses(sub)[-2:] == ["white", "black"], within=30)
        await type_lines(board, "quit")
        assert await asyncio.wait_for(board.wait(), 30) == 0
        assert run.returncode is None
    moves = [p["data"] for p in payloads_on(sub, "event/move")]
    assert [(m["ply"], m["san"]) for m in moves] == [(1, "e4"), (2, "Nf6")]
    assert presses(sub)[-2:] == ["white", "black"]


@pytest.mark.mosquitto
@pytest.mark.parametrize("family", ["millennium", "certabo"])
async def test_moves_typed_into_a_millennium_or_certabo_board_are_published_by_run(
    family: str, mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """The other serial families, played by typing as a DGT board is: no clock, so each move
    completes when its last piece is released. A Certabo board reads the whole board about once
    a second (and learns its pieces' tags from the start position): a person's pace, a moment
    between moves."""
    async with (
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        emulate(family=family) as (board, uri),
        daemon(uri, table_id, mosquitto.url, tmp_path / "state") as run,
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=30)
        await type_lines(board, "wait 3", "e2e4", "wait 3", "e7e5", "wait 3", "Nf3", "wait 3")
        await type_lines(board, "lift b8", "wait 0.5", "place c6")  # a move piece by piece
        await sub.wait_for(lambda _: len(payloads_on(sub, "event/move")) >= 4, within=60)
        await type_lines(board, "quit")
        assert await asyncio.wait_for(board.wait(), 30) == 0
        assert run.returncode is None
    moves = [p["data"] for p in payloads_on(sub, "event/move")]
    assert [(m["ply"], m["san"]) for m in moves] == [(1, "e4"), (2, "e5"), (3, "Nf3"), (4, "Nc6")]
    assert {m["completed_by"] for m in moves} == {"release"}
    assert payloads_on(sub, "board")[-1]["data"]["driver"] == family


@pytest.mark.mosquitto
async def test_play_plays_a_pgn_game_to_its_result(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    game = read_pgn(GAMES / "scholar.pgn")
    expected, board = [], game.board()
    for move in game.mainline_moves():
        expected.append(board.san(move))
        board.push(move)
    async with (
        mqtt_subscribe(mosquitto, f"chessbridge/1/table/{table_id}/#") as sub,
        emulate("--play", str(GAMES / "scholar.pgn"), "--speed", "4") as (emu, uri),
        daemon(uri, table_id, mosquitto.url, tmp_path / "state"),
    ):
        await sub.wait_for(lambda _: state_is(sub, "board", "connected"), within=30)
        await type_lines(emu, "")  # --play starts on Enter, once the daemon reads the board
        await sub.wait_for(lambda _: bool(sub.on("event/result")), within=60)
        assert emu.stdout is not None
        said = (await asyncio.wait_for(emu.stdout.readuntil(b"game over: 1-0"), 30)).decode()
    assert [p["data"]["san"] for p in payloads_on(sub, "event/move")] == expected
    assert "4. Qxf7#" in said
    result = payloads_on(sub, "event/result")[0]["data"]
    assert (result["result"], result["reason"]) == ("1-0", "checkmate")
