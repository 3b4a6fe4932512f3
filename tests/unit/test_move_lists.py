"""The daemon's move lists (bridge/table/daemon.py MoveLists) after the arbiter's commands.

The retained ``game`` and the saved game take their moves from these lists, which follow the
game move by move. Every command that changes the game otherwise must show in them: after it,
``start_fen`` + ``moves`` replays to the game's position with the same SAN (docs/arbiter.md's
promise), whether or not the number of moves changed.
"""

from __future__ import annotations

from typing import Any

import chess
import msgspec
import pytest

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.table import commands
from bridge.table.daemon import MoveLists
from bridge.wire.commands import Assignment

WALL = 1_800_000_000.0


def arbiter_after(sans: str, fen: str = chess.STARTING_FEN) -> Arbiter:
    board = chess.Board(fen)
    for san in sans.split():
        board.push_san(san)
    return Arbiter(EngineConfig(), board)


def run(command: str, arbiter: Arbiter, **fields: Any) -> dict[str, Any]:
    body = {"transaction": "tx-1", "expires_at": WALL + 60, **fields}
    outcome = commands.handle(
        command,
        msgspec.json.encode(body),
        arbiter=arbiter,
        assignment=Assignment(),
        wall_now=WALL,
        now=10.0,
    )
    assert outcome.ok, outcome.response.error
    return outcome.response.data


def replayed(lists: MoveLists, arbiter: Arbiter) -> tuple[list[str], list[str]]:
    """The lists' UCI and SAN, checked to replay from ``start_fen`` to the engine's position."""
    moves = lists.of(arbiter)
    board = chess.Board(arbiter.start_fen)
    assert moves.first_ply == board.ply() + 1
    sans = []
    for uci in moves.uci:
        move = chess.Move.from_uci(uci)
        assert board.is_legal(move), f"{uci} is not legal in {board.fen()}"
        sans.append(board.san(move))
        board.push(move)
    assert board.fen() == arbiter.board.fen()
    assert list(moves.san) == sans
    return list(moves.uci), list(moves.san)


def test_a_correction_that_keeps_the_number_of_moves_is_in_the_lists() -> None:
    arbiter = arbiter_after("e4 e5 Nf3")
    lists = MoveLists()
    assert replayed(lists, arbiter)[1] == ["e4", "e5", "Nf3"]
    data = run("correct_move", arbiter, ply=2, uci="e7e6")
    assert data["changed"] is True
    assert data["later_moves"] == "replayed"
    assert replayed(lists, arbiter) == (["e2e4", "e7e6", "g1f3"], ["e4", "e6", "Nf3"])


def test_a_correction_of_the_first_move_with_the_later_ones_kept_is_in_the_lists() -> None:
    arbiter = arbiter_after("Nf3 Nf6 Nc3 Nc6")
    lists = MoveLists()
    replayed(lists, arbiter)
    run("correct_move", arbiter, ply=1, uci="g1h3")
    assert replayed(lists, arbiter)[1] == ["Nh3", "Nf6", "Nc3", "Nc6"]


def test_a_correction_that_cuts_the_later_moves_is_in_the_lists() -> None:
    arbiter = arbiter_after("e4 e5 Bc4 Nc6")
    lists = MoveLists()
    replayed(lists, arbiter)
    run("correct_move", arbiter, ply=1, uci="d2d4")
    assert replayed(lists, arbiter) == (["d2d4"], ["d4"])


def test_a_takeback_and_a_position_set_are_in_the_lists() -> None:
    arbiter = arbiter_after("e4 e5 Nf3 Nc6")
    lists = MoveLists()
    replayed(lists, arbiter)
    run("takeback", arbiter, plies=2)
    assert replayed(lists, arbiter)[1] == ["e4", "e5"]
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    run("set_position", arbiter, fen=fen)
    assert replayed(lists, arbiter) == ([], [])
    assert lists.of(arbiter).first_ply == 5


@pytest.mark.parametrize("fen", [None, "4k3/8/8/8/8/8/4P3/4K3 b - - 0 10"])
def test_a_new_game_is_in_the_lists(fen: str | None) -> None:
    arbiter = arbiter_after("e4 e5")
    lists = MoveLists()
    replayed(lists, arbiter)
    run("new_game", arbiter, **({} if fen is None else {"fen": fen}))
    assert replayed(lists, arbiter) == ([], [])
    assert lists.of(arbiter).first_ply == (1 if fen is None else 20)


def test_the_lists_are_kept_between_changes() -> None:
    arbiter = arbiter_after("e4 e5")
    lists = MoveLists()
    first = lists.of(arbiter)
    assert lists.of(arbiter) is first  # not rebuilt when nothing changed
    lists.forget()
    again = lists.of(arbiter)
    assert again is not first
    assert again == first
