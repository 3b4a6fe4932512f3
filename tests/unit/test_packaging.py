"""The install stays lean: every imported package is declared, every declared one is imported,
the demo's broker is an extra that only the demo imports, and the serial path loads no
Bluetooth stack."""

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
DEMO_FOLDER = ROOT / "bridge" / "demo"


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


def test_every_imported_package_is_declared_and_every_declared_one_imported() -> None:
    project = _project()
    runtime = {_name(r) for r in project["dependencies"]}  # type: ignore[attr-defined]
    extras: dict[str, list[str]] = project["optional-dependencies"]  # type: ignore[assignment]
    demo = {_name(r) for r in extras["demo"]}
    daemon_files = [p for p in _sources() if DEMO_FOLDER not in p.parents]
    demo_files = [p for p in _sources() if DEMO_FOLDER in p.parents]

    daemon_imports = _imported_by(daemon_files)
    undeclared = {d: f for d, f in daemon_imports.items() if d not in runtime}
    assert not undeclared, f"imported but not in [project] dependencies: {undeclared}"
    unused = runtime - set(daemon_imports)
    assert not unused, f"declared but imported by nothing outside the demo: {unused}"

    demo_imports = _imported_by(demo_files)
    missing = {d: f for d, f in demo_imports.items() if d not in runtime | demo}
    assert not missing, f"the demo imports packages declared nowhere: {missing}"
    assert demo <= set(demo_imports), "the demo extra holds a package the demo does not import"
    assert not demo & runtime, "a demo-only package is also a runtime dependency"


def test_the_dev_extra_brings_the_demo_extra_for_the_tests() -> None:
    extras: dict[str, list[str]] = _project()["optional-dependencies"]  # type: ignore[assignment]
    assert "chessbridge[demo]" in extras["dev"]


def test_the_serial_path_never_imports_bleak_or_the_demo_broker() -> None:
    """The CLI, the daemon and a DGT link, built as ``run`` builds them, load neither."""
    code = """
import sys
import bridge.__main__
from bridge.table.daemon import TableDaemon
from drivers import create_link, parse_board_uri
create_link(parse_board_uri("dgt:/dev/null"), lambda event: None)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("bleak", "amqtt", "pydantic")))
"""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
