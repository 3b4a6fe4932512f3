"""Reading a PGN text back: python-chess (every game, no parse errors) and pgn-extract (Debian)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile

import chess
import chess.pgn
import pytest

PGN_EXTRACT_CANDIDATES = ("/usr/games/pgn-extract", "/usr/bin/pgn-extract")


def read_games(text: str) -> list[chess.pgn.Game]:
    """Every game of ``text``, read by python-chess; fails the test on any parse error."""
    stream = io.StringIO(text)
    games = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, f"python-chess: {game.errors}\n{text}"
        games.append(game)
    return games


def sans(game: chess.pgn.Game) -> list[str]:
    """The game's moves in SAN."""
    board = game.board()
    out = []
    for move in game.mainline_moves():
        out.append(board.san(move))
        board.push(move)
    return out


def pgn_extract() -> str:
    """The pgn-extract executable; fails the test when it is not installed."""
    found = shutil.which("pgn-extract")
    if found:
        return found
    for candidate in PGN_EXTRACT_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("pgn-extract not found: install the Debian package (scripts/test does)")


def pgn_extract_accepts(text: str) -> None:
    """pgn-extract reads every game of ``text`` with no error."""
    count = len(read_games(text))
    with tempfile.NamedTemporaryFile("w", suffix=".pgn", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        run = subprocess.run(
            [pgn_extract(), "-r", file.name],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    report = run.stdout + run.stderr
    noun = "game" if count == 1 else "games"
    assert run.returncode == 0, report
    assert f"{count} {noun} matched out of {count}." in report, report
    for word in ("Fail", "rror", "No ", "Unknown", "Missing"):
        assert word not in report, report
