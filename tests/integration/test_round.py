"""``chessbridge round start`` and ``chessbridge round results`` (subprocesses) against real table
daemons (emulated DGT boards) on a real Mosquitto, with most of a 30-board round's tables offline.

The pairings are a TRF-16 file written from the format's description (tests/trf.py): 30 boards,
a bye, a forfeit, a withdrawn player. The results come back from the tables' retained games and
are read back by the same parser.
"""

from __future__ import annotations

import asyncio
import io
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from bridge.table.daemon import TableDaemon
from bridge.views.send import send
from bridge.wire.config import broker_settings
from bridge.wire.pairings import read_pairings
from tests.cli import chessbridge
from tests.conftest import Mosquitto, Subscribe
from tests.relay_harness import running_table
from tests.trf import thirty_boards, trf

pytestmark = [pytest.mark.mosquitto, pytest.mark.pty]

LIVE = (1, 2, 30)
"""The boards whose tables run (board 30 is the forfeit); the 27 others are offline."""
WAIT = "8"
"""Seconds the CLI waits for a response (what an offline table costs, once for all of them)."""


async def cli(*args: str) -> tuple[int, str, str]:
    proc = await chessbridge("round", *args)
    out, err = await asyncio.wait_for(proc.communicate(), 90)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def lines_of(out: str) -> dict[str, str]:
    """The printed table's lines by board number."""
    return {
        line.split()[0]: line
        for line in out.splitlines()
        if line.split()[0].isdigit() and "boards:" not in line
    }


@asynccontextmanager
async def venue(
    broker: Mosquitto, tmp_path: Path
) -> AsyncIterator[tuple[Path, dict[int, str], dict[int, TableDaemon]]]:
    """The venue map (board -> a table id of this test), and the daemons of the live boards."""
    prefix = uuid.uuid4().hex[:8]
    tables = {board: f"r{prefix}-{board:02d}" for board in range(1, 31)}
    path = tmp_path / "venue.toml"
    path.write_text(
        "# the hall, board = table\n[boards]\n"
        + "".join(f'{board} = "{table}"\n' for board, table in tables.items())
    )
    async with AsyncExitStack() as stack:
        daemons: dict[int, TableDaemon] = {}
        for board in LIVE:
            _, daemon = await stack.enter_async_context(
                running_table(broker, tables[board], tmp_path / f"state-{board}")
            )
            daemons[board] = daemon
        yield path, tables, daemons


async def test_a_round_from_a_trf_to_the_tables_and_its_results_back(
    mosquitto_private: Mosquitto, tmp_path: Path
) -> None:
    broker = mosquitto_private
    pairings_file = tmp_path / "round1.trf"
    pairings_file.write_text(trf(thirty_boards()))
    async with venue(broker, tmp_path) as (venue_file, tables, daemons):
        start = (
            "start",
            "--pairings",
            str(pairings_file),
            "--round",
            "1",
            "--venue",
            str(venue_file),
            "--new-games",
            "--broker",
            broker.url,
            "--wait",
            WAIT,
        )
        games_before = {board: daemon.game_id for board, daemon in daemons.items()}
        code, out, err = await cli(*start)
        assert code == 1, (out, err)  # 27 tables did not answer: the exit status says so
        rows = lines_of(out)
        assert len(rows) == 30
        for board in (1, 2):
            assert rows[str(board)].endswith("ok (new game)"), rows[str(board)]
        assert rows["30"].endswith("ok (new game); forfeit 0-1 in the file")
        for board in LIVE:
            assert tables[board] in rows[str(board)]
        for board in set(range(1, 31)) - set(LIVE):
            assert rows[str(board)].endswith("no answer (never seen on this broker)")
        assert "Player01, Test (2690) - Player31, Test (2390)" in rows["1"]
        assert "no board: Player61, Test (pairing-allocated bye)" in out
        assert "no board: Player62, Test (not paired)" in out
        assert out.splitlines()[-1] == "30 boards: 3 ok, 27 not"

        first = daemons[1].assignment
        assert (first.white, first.black) == ("Player01, Test", "Player31, Test")
        assert (first.white_fide_id, first.black_fide_id) == (1_000_001, 1_000_031)
        assert (first.white_rating, first.black_rating) == (2690, 2390)
        assert (first.event, first.round, first.board) == ("Test Open 2026", "1", 1)
        second = daemons[2].assignment
        assert (second.white, second.black, second.board) == ("Player32, Test", "Player02, Test", 2)
        assert daemons[30].assignment.white == "Player60, Test"
        new_games = {board: daemon.game_id for board, daemon in daemons.items()}
        assert all(new_games[b] != games_before[b] for b in LIVE)

        # Again: the live tables already hold their assignment and a fresh game; nothing changes.
        code, out, err = await cli(*start)
        assert code == 1, (out, err)
        rows = lines_of(out)
        for board in LIVE:
            assert "ok (unchanged)" in rows[str(board)], rows[str(board)]
        assert {board: daemon.game_id for board, daemon in daemons.items()} == new_games

        # The games end: an arbiter's result on board 1, where the game went on from a position
        # set up (one game in parts, as after an illegal move that stood: counted once); the
        # engine's own on board 2 (a dead position). Board 30 is the file's forfeit.
        settings = broker_settings(broker.url)
        quiet = io.StringIO()
        fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
        assert (
            await send(tables[1], "set_position", [f"fen={fen}"], broker=settings, out=quiet) == 0
        )
        assert (
            await send(
                tables[1],
                "set_result",
                ["result=1-0", "reason=Black resigned"],
                broker=settings,
                out=quiet,
            )
            == 0
        )
        dead = "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
        assert await send(tables[2], "new_game", [f"fen={dead}"], broker=settings, out=quiet) == 0

        out_trf = tmp_path / "results.trf"
        code, out, err = await cli(
            "results",
            "--round",
            "1",
            "--format",
            "trf",
            "--pairings",
            str(pairings_file),
            "--output",
            str(out_trf),
            "--broker",
            broker.url,
        )
        assert code == 1, (out, err)  # 27 boards have no game: not every result is in
        assert "board 3: no table holds round 1's game" in err
        back, _ = read_pairings(out_trf.read_text(), 1, "results.trf")
        by_board = {p.board: p for p in back.pairings}
        assert by_board[1].result == "1-0"
        assert by_board[2].result == "1/2-1/2"
        assert (by_board[30].result, by_board[30].forfeit) == ("0-1", True)
        assert all(by_board[b].result == "*" for b in range(3, 30))
        assert [u.player.rank for u in back.unpaired] == [61, 62]

        code, out, err = await cli("results", "--round", "1", "--broker", broker.url)
        assert code == 1, (out, err)  # board 30's table has no result of its own
        csv_back, _ = read_pairings(out, 1, "results.csv")
        assert [(p.board, p.white.name, p.result) for p in csv_back.pairings] == [
            (1, "Player01, Test", "1-0"),
            (2, "Player32, Test", "1/2-1/2"),
            (30, "Player60, Test", "*"),
        ]
        assert csv_back.pairings[0].white.rating == 2690
        assert "Black resigned" in out
        code, out, _ = await cli("results", "--round", "2", "--broker", broker.url)
        assert code == 1
        assert out.splitlines() == [
            "round,board,table,white,black,white_fide_id,black_fide_id,white_rating,"
            "black_rating,result,reason"
        ]


async def test_a_csv_round_changes_only_what_differs(
    mosquitto_private: Mosquitto, tmp_path: Path
) -> None:
    broker = mosquitto_private
    async with venue(broker, tmp_path) as (venue_file, tables, daemons):
        csv_file = tmp_path / "round2.csv"
        header = "board,white,black,white_fide_id,black_fide_id,white_rating,black_rating\n"
        csv_file.write_text(header + "1,A,B,11,12,2001,2002\n2,C,D,,,,\n30,E,F,,,1500,\n")
        start = (
            "start",
            "--pairings",
            str(csv_file),
            "--round",
            "2",
            "--venue",
            str(venue_file),
            "--broker",
            broker.url,
            "--wait",
            WAIT,
        )
        code, out, err = await cli(*start)
        assert code == 0, (out, err)
        assert out.splitlines()[-1] == "3 boards: 3 ok, 0 not"
        assert daemons[1].assignment.white_rating == 2001
        assert daemons[30].assignment.event is None
        csv_file.write_text(header + "1,A,B,11,12,2001,2002\n2,C,G,,,,\n30,E,F,,,1500,\n")
        games = {board: daemon.game_id for board, daemon in daemons.items()}
        code, out, err = await cli(*start)
        assert code == 0, (out, err)
        rows = lines_of(out)
        assert rows["1"].endswith("ok (unchanged)")
        assert rows["2"].endswith("ok")
        assert tables[2] in rows["2"]
        assert rows["30"].endswith("ok (unchanged)")
        assert daemons[2].assignment.black == "G"
        # Without --new-games no table gets a new game.
        assert {board: daemon.game_id for board, daemon in daemons.items()} == games


@pytest.mark.parametrize(
    ("name", "text", "extra", "message"),
    [
        ("bad.csv", "board,white,black\n1,A,B\nx,C,D\n", (), "bad.csv line 3: board 'x'"),
        (
            "twice.csv",
            "board,white,black\n1,A,B\n2,C,A\n",
            (),
            "twice.csv line 3: A plays twice in round 1",
        ),
        ("r.trf", None, ("--round", "4"), "r.trf: round 4 is not in the file"),
        ("r.trf", None, ("--venue", "small"), "r.trf line 35: board 2 has no table in the venue"),
        (
            "long.csv",
            "board,white,black\n1,A,B\n2," + "N" * 101 + ",D\n",
            (),
            "long.csv line 3: board 2: invalid assign request",
        ),
    ],
)
async def test_bad_input_is_one_line_exit_2_and_nothing_is_sent(
    mosquitto_private: Mosquitto,
    mqtt_subscribe: Subscribe,
    tmp_path: Path,
    name: str,
    text: str | None,
    extra: tuple[str, ...],
    message: str,
) -> None:
    broker = mosquitto_private
    path = tmp_path / name
    path.write_text(trf(thirty_boards()) if text is None else text)
    small = tmp_path / "small.toml"
    small.write_text('[boards]\n1 = "t1"\n')
    arguments = ["start", "--pairings", str(path), "--broker", broker.url]
    arguments += ["--round", "1"] if "--round" not in extra else []
    arguments += [str(small) if item == "small" else item for item in extra]
    async with mqtt_subscribe(broker, "chessbridge/1/#") as sub:
        code, out, err = await cli(*arguments)
        assert code == 2
        assert out == ""
        assert err.count("\n") == 1
        assert err.startswith(f"chessbridge round start: {path.parent}/{message}"), err
        # Nothing was published: the first message the broker passes on after the command is
        # this marker.
        await sub.client.publish("chessbridge/1/marker", b"{}", qos=1)
        messages = await sub.wait_for(lambda got: bool(got))
        assert [m.topic.value for m in messages] == ["chessbridge/1/marker"]


async def test_a_dry_run_prints_the_requests_and_sends_nothing(
    mosquitto_private: Mosquitto, mqtt_subscribe: Subscribe, tmp_path: Path
) -> None:
    path = tmp_path / "round1.trf"
    path.write_text(trf(thirty_boards()))
    async with mqtt_subscribe(mosquitto_private, "chessbridge/1/#") as sub:
        code, out, err = await cli(
            "start", "--pairings", str(path), "--round", "1", "--dry-run", "--new-games"
        )
        assert code == 0, err
        lines = out.splitlines()
        assert lines[0].startswith("board 1: b1 assign {")
        assigned = json.loads(lines[0].partition(" assign ")[2])
        assert assigned == {
            "white": "Player01, Test",
            "black": "Player31, Test",
            "white_fide_id": 1_000_001,
            "black_fide_id": 1_000_031,
            "white_rating": 2690,
            "black_rating": 2390,
            "event": "Test Open 2026",
            "round": "1",
            "board": 1,
        }
        assert lines[1] == "board 1: b1 new_game {}"
        assert sum(" assign " in line for line in lines) == 30
        assert lines[-1] == "30 boards; nothing sent (--dry-run)"
        await sub.client.publish("chessbridge/1/marker", b"{}", qos=1)
        messages = await sub.wait_for(lambda got: bool(got))
        assert [m.topic.value for m in messages] == ["chessbridge/1/marker"]
