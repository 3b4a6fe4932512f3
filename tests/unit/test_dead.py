"""Dead positions by a pawn blockade (``bridge.dead``): what it proves, and what it leaves alone."""

from __future__ import annotations

import chess
import pytest

from bridge.arbiter import dead

DEAD = {
    "locked chain, kings on their sides": "8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/8 w - - 0 1",
    "the other colour complex": "8/8/4k3/p1p1p1p1/P1P1P1P1/4K3/8/8 b - - 0 1",
    "a bishop shut out of everything": "8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/2B5 w - - 0 1",
    "a bishop on each side, each shut in": "2b5/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/2B5 w - - 0 1",
    "pawns blocked by own pawns too": "8/4k3/8/1p1p1p1p/1P1P1P1P/1P6/4K3/8 w - - 0 1",
}

LIVE = {
    "the start": chess.STARTING_FEN,
    "a pawn can advance": "8/8/4k3/1p1p1p2/1P1P1P1P/4K3/8/8 w - - 0 1",
    "a pawn can capture": "8/8/4k3/pppppppp/PPPPPPPP/4K3/8/8 w - - 0 1",
    "a king can take an unguarded pawn": "4k3/8/8/p7/P7/8/8/4K3 w - - 0 1",
    "a king can go round the chain": "8/4k3/8/1p1p4/1P1P4/4K3/8/8 w - - 0 1",
    "a bishop can take a pawn": "8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/5B2 w - - 0 1",
    "a rook is there": "8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/7R w - - 0 1",
    "a knight is there": "8/8/4k3/1p1p1p1p/1P1P1P1P/4K3/8/7N w - - 0 1",
    "the side to move is in check": "8/8/8/1p1p1p1p/1P1P1P1P/4k3/3K4/8 b - - 0 1",
    "en passant is possible": "8/8/4k3/1p1pPp1p/1P1P3P/4K3/8/8 w - f6 0 1",
}


@pytest.mark.parametrize("fen", DEAD.values(), ids=DEAD.keys())
def test_dead(fen: str) -> None:
    assert dead.is_blockade(chess.Board(fen))


@pytest.mark.parametrize("fen", LIVE.values(), ids=LIVE.keys())
def test_not_proved_dead(fen: str) -> None:
    assert not dead.is_blockade(chess.Board(fen))
