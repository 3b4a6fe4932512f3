"""The project uses python-chess's public API only.

python-chess owns the rules; a name of it that begins with ``_`` (``Board._stack``,
``_BoardState``, ``_transposition_key``) may change in any release without notice, and an arbiter
built on one would judge wrong, silently. This test reads every module of ``bridge`` and
``drivers`` and fails on any such name: imported from python-chess, read off the ``chess``
module, or read off any object (``board._stack``), where the name is a private one of
python-chess's modules, classes or boards. The project's own private names (``self._x``) are its
business.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import chess.polyglot
import chess.svg
import chess.variant

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("bridge", "drivers")
MODULES = (chess, chess.engine, chess.pgn, chess.polyglot, chess.svg, chess.variant)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def chess_private_names() -> frozenset[str]:
    """Every private name of python-chess's modules, of their classes, and of a board."""
    names: set[str] = set()
    for module in MODULES:
        for name, value in vars(module).items():
            if _private(name):
                names.add(name)
            if inspect.isclass(value) and value.__module__.startswith("chess"):
                names.update(n for n in dir(value) if _private(n))
    board = chess.Board()
    board.push_san("e4")
    for instance in (board, chess.BaseBoard(), chess.SquareSet(), chess.Move.null()):
        names.update(n for n in dir(instance) if _private(n))
        names.update(n for n in getattr(instance, "__dict__", {}) if _private(n))
    return frozenset(names)


def private_uses(source: str, private: frozenset[str]) -> list[str]:
    """Where ``source`` uses a private name of python-chess: ``line: name``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "chess":
            found += [f"{node.lineno}: {a.name}" for a in node.names if _private(a.name)]
            if any(_private(part) for part in (node.module or "").split(".")):
                found.append(f"{node.lineno}: {node.module}")
        elif isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: {a.name}"
                for a in node.names
                if a.name.split(".")[0] == "chess" and any(map(_private, a.name.split(".")))
            ]
        elif isinstance(node, ast.Attribute) and _private(node.attr):
            owner = node.value
            if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                continue  # the project's own object
            chess_module = isinstance(owner, ast.Name) and owner.id == "chess"
            if chess_module or node.attr in private:
                found.append(f"{node.lineno}: {node.attr}")
    return found


def test_the_checker_finds_python_chess_s_private_names() -> None:
    private = chess_private_names()
    assert {"_stack", "_BoardState", "_transposition_key"} <= private
    source = (
        "import chess\n"
        "from chess import _BoardState\n"
        "class State(chess._BoardState): ...\n"
        "def top(board): return board._stack[-1]\n"
        "def key(board): return board._transposition_key()\n"
        "def mine(self): return self._stack\n"
    )
    assert private_uses(source, private) == [
        "2: _BoardState",
        "3: _BoardState",
        "4: _stack",
        "5: _transposition_key",
    ]


def test_bridge_and_drivers_use_only_python_chess_s_public_api() -> None:
    private = chess_private_names()
    offences = [
        f"{path.relative_to(ROOT)}:{use}"
        for folder in FOLDERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        for use in private_uses(path.read_text(encoding="utf-8"), private)
    ]
    assert offences == []
