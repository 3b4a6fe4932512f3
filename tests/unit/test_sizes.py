"""Sizes: no module of bridge/ or drivers/ over 800 lines, no function over 100 lines, no class
of the arbiter (bridge/arbiter) over 500 lines.

A function's lines run from its first decorator (or ``def``) to its last line, docstring and
nested functions included; a class's likewise. Read from the AST, so that a long string or a
comment counts as the lines it takes.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bridge", "drivers")

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100
MAX_ARBITER_CLASS_LINES = 500
ARBITER = "bridge/arbiter/"


def _span(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """Lines of a function or class, from its first decorator to its end."""
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    assert node.end_lineno is not None
    return node.end_lineno - first + 1


def oversized(source: str, where: str) -> list[str]:
    """What in ``source`` (the module ``where``, a path relative to the project) is too long."""
    found: list[str] = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            size = _span(node)
            if size > MAX_FUNCTION_LINES:
                found.append(
                    f"{where}:{node.lineno} function {node.name}: {size} lines "
                    f"(at most {MAX_FUNCTION_LINES})"
                )
        elif isinstance(node, ast.ClassDef) and where.startswith(ARBITER):
            size = _span(node)
            if size > MAX_ARBITER_CLASS_LINES:
                found.append(
                    f"{where}:{node.lineno} class {node.name}: {size} lines "
                    f"(at most {MAX_ARBITER_CLASS_LINES})"
                )
    return found


def _modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_no_module_function_or_arbiter_class_is_too_long() -> None:
    modules = _modules()
    assert len(modules) > 50  # bridge/ and drivers/ were found
    found = [
        problem
        for path in modules
        for problem in oversized(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert found == []


def _function(lines: int, *, decorated: bool = False) -> str:
    """A function of ``lines`` lines in all."""
    decorator = "@staticmethod\n" if decorated else ""
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 1 - decorated))
    return f"{decorator}def f():\n{body}"


def _class(lines: int) -> str:
    return "class C:\n" + "".join(f"    x{i} = {i}\n" for i in range(lines - 1))


@pytest.mark.parametrize("decorated", [False, True])
def test_a_function_of_101_lines_is_found_and_one_of_100_is_not(decorated: bool) -> None:
    assert oversized(_function(100, decorated=decorated), "bridge/x.py") == []
    (problem,) = oversized(_function(101, decorated=decorated), "bridge/x.py")
    assert "function f: 101 lines" in problem


def test_a_method_inside_a_class_is_measured_too() -> None:
    method = "".join(f"    {line}\n" for line in _function(101).splitlines())
    (problem,) = oversized("class C:\n" + method, "drivers/x.py")
    assert "function f: 101 lines" in problem


def test_a_module_of_801_lines_is_found() -> None:
    source = "".join(f"x{i} = {i}\n" for i in range(801))
    (problem,) = oversized(source, "drivers/x.py")
    assert "801 lines" in problem
    assert oversized(source[: source.index("x800")], "drivers/x.py") == []


def test_an_arbiter_class_of_501_lines_is_found_and_others_are_not() -> None:
    (problem,) = oversized(_class(501), "bridge/arbiter/x.py")
    assert "class C: 501 lines" in problem
    assert oversized(_class(500), "bridge/arbiter/x.py") == []
    assert oversized(_class(501), "bridge/relay/x.py") == []
