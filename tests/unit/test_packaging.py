"""The install stays lean: every imported package is declared, every declared one is imported,
the demo's broker and the relay's HTTP library are extras that only the demo and the relay
import, and the serial path loads no Bluetooth stack."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bridge", "drivers")
EXTRA_FOLDERS = {
    "demo": (ROOT / "bridge" / "demo",),
    "relay": (ROOT / "bridge" / "relay", ROOT / "bridge" / "livechess"),
}
"""Each optional extra and the only folders that may import it: aiohttp serves the relay and
the LiveChess API."""


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        project: dict[str, object] = tomllib.load(file)["project"]
    return project


def _name(requirement: str) -> str:
    """The normalised distribution name of a requirement string (PEP 503)."""
    match = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _imports(path: Path) -> set[str]:
    """Top-level modules imported anywhere in ``path`` (also inside functions)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def _third_party(modules: set[str]) -> set[str]:
    own = set(PACKAGES)
    return {m for m in modules if m not in sys.stdlib_module_names and m not in own}


def _distributions(module: str) -> set[str]:
    dists = importlib.metadata.packages_distributions().get(module)
    assert dists, f"{module!r} is imported but no installed distribution provides it"
    return {_name(dist) for dist in dists}


def _imported_by(files: list[Path]) -> dict[str, set[Path]]:
    """Distribution name → the files importing it."""
    out: dict[str, set[Path]] = {}
    for path in files:
        for module in _third_party(_imports(path)):
            for dist in _distributions(module):
                out.setdefault(dist, set()).add(path.relative_to(ROOT))
    return out


def _sources() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def _in(folder: Path, path: Path) -> bool:
    return folder in path.parents


def test_every_imported_package_is_declared_and_every_declared_one_imported() -> None:
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    daemon_files = [
        p for p in _sources() if not any(_in(f, p) for fs in EXTRA_FOLDERS.values() for f in fs)
    ]

    daemon_imports = _imported_by(daemon_files)
    undeclared = {d: f for d, f in daemon_imports.items() if d not in runtime}
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"
    unused = runtime - set(daemon_imports)
    assert not unused, f"declared but imported by nothing outside the extras' folders: {unused}"

    for extra, folders in EXTRA_FOLDERS.items():
        declared = {_name(r) for r in extras[extra]}
        imports = _imported_by([p for p in _sources() if any(_in(f, p) for f in folders)])
        missing = {d: f for d, f in imports.items() if d not in runtime | declared}
        assert not missing, f"{extra} imports packages declared nowhere: {missing}"
        assert declared <= set(imports), f"the {extra} extra holds a package it does not import"
        assert not declared & runtime, f"a {extra}-only package is also a runtime dependency"


def test_the_drivers_never_import_the_bridge() -> None:
    """``bridge`` builds on ``drivers``; a driver importing ``bridge`` would tie every board
    family to the MQTT side (and make a cycle the day ``bridge`` imports that driver)."""
    offenders = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "drivers").rglob("*.py")
        if "bridge" in _imports(p)
    )
    assert offenders == []


def test_the_livechess_extra_brings_the_websocket_and_the_embedded_broker() -> None:
    """One install for ``chessbridge livechess --board URI`` at home: aiohttp (the relay's
    extra) and amqtt (the demo's)."""
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    assert extras["livechess"] == ["chessbridge[relay,demo]"]


def test_the_dev_extra_brings_the_demo_and_relay_extras_for_the_tests() -> None:
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    assert "chessbridge[demo]" in extras["dev"]
    assert "chessbridge[relay]" in extras["dev"]


def test_the_serial_path_never_imports_bleak_or_the_demo_broker() -> None:
    """The CLI, the daemon and a DGT link, built as ``run`` builds them, load neither."""
    code = """
import sys
import bridge.__main__
from bridge.table.daemon import TableDaemon
from drivers import create_link, parse_board_uri
create_link(parse_board_uri("dgt:/dev/null"), lambda event: None)
heavy = ("bleak", "amqtt", "pydantic", "aiohttp")
print(sorted(m for m in sys.modules if m.split(".")[0] in heavy))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_the_way_to_online_imports_only_what_it_uses() -> None:
    """Start stays at the floor: the daemon's path (its command line parsed included, by the
    parser of every command) does not load the views, the relay, the demo, the installer, the
    arbiter commands (until a request comes), the dashboards' descriptions, the board
    emulators' protocol (``chessbridge emulate``'s), the LiveChess API (but its options), nor
    the standard library's ``secrets`` and ``tomllib`` (read only with a config file); and no
    dataclass is made on it (its types are msgspec Structs)."""
    code = """
import dataclasses, sys
made = []
original = dataclasses._process_class
def counting(cls, *args, **kwargs):
    made.append(cls.__module__ + "." + cls.__qualname__)
    return original(cls, *args, **kwargs)
dataclasses._process_class = counting
import chess, aiomqtt, serial, serial_asyncio_fast, msgspec  # the dependencies' own
made.clear()
import bridge.__main__, contextlib, io
with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
    bridge.__main__.main(["run", "--help"])  # the parser main makes for a run command line
run = ["run", "--table", "t1", "--board", "dgt:/dev/null"]
bridge.__main__._parser().parse_args(run)
from drivers import create_link, parse_board_uri
create_link(parse_board_uri("dgt:/dev/null"), lambda event: None)
ours = ("bridge.views", "bridge.relay", "bridge.demo", "bridge.wire.commands",
        "bridge.table.commands", "bridge.wire.discovery", "bridge.install", "drivers.emulation",
        "bridge.livechess.", "secrets", "tomllib")
parser = ("bridge.livechess.cli",)  # the LiveChess API's options: argparse only
print(sorted(m for m in sys.modules if m.startswith(ours) and m not in parser))
print(sorted(made))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    modules, dataclasses_made = out.stdout.splitlines()
    assert modules == "[]", out.stdout + out.stderr
    assert dataclasses_made == "[]", out.stdout + out.stderr
