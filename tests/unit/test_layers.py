"""The layers: the wire layer (bridge/wire) validates and parses, and carries nothing out.

An arbiter request is parsed by ``bridge.wire.commands`` into a typed value and carried out on
the game by ``bridge.table.commands``; the wire layer may describe the engine's facts as
payloads, but never imports the engine, the judge, the table or the MQTT shell.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WIRE_MAY_NOT_IMPORT = (
    "bridge.arbiter.engine",
    "bridge.arbiter.judge",
    "bridge.table",
    "bridge.mqtt",
)
"""What carries requests out (the engine and its judge, the table) or does I/O (MQTT)."""


def imported_modules(source: str) -> set[str]:
    """Every module ``source`` imports (absolute imports; also inside functions), and for
    ``from package import name`` also ``package.name`` (``name`` may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def forbidden(source: str) -> list[str]:
    """The modules of :data:`WIRE_MAY_NOT_IMPORT` (or below them) that ``source`` imports."""
    return sorted(
        module
        for module in imported_modules(source)
        if any(module == bad or module.startswith(bad + ".") for bad in WIRE_MAY_NOT_IMPORT)
    )


def test_the_wire_layer_imports_nothing_that_carries_requests_out() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "bridge" / "wire").rglob("*.py"))
        if (found := forbidden(path.read_text()))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "from bridge.arbiter.engine import Arbiter\n",
        "from bridge.arbiter import judge\n",
        "def f():\n    from bridge.table import commands\n",
        "import bridge.mqtt.outbox\n",
    ],
)
def test_the_check_finds_an_import_of_the_engine_or_the_shell(source: str) -> None:
    assert forbidden(source) != []


def test_the_check_lets_the_wire_layer_describe_facts() -> None:
    assert forbidden("from bridge.arbiter.facts import MovePlayed\nimport msgspec\n") == []
