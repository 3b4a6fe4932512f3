"""Log lines: one per record whatever the text from outside holds, at the journal's priority."""

from __future__ import annotations

import io
import logging
import os
import sys
from pathlib import Path

import pytest

from bridge import logs

FORGED = "x\nchessbridge: ERROR forged\x1b[2K\r\x07\u2028end"


def record(level: int, message: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("chessbridge", level, __file__, 1, message, args, None)


def test_text_from_outside_cannot_start_a_line_or_move_the_cursor() -> None:
    line = logs.SafeFormatter().format(record(logging.INFO, "takeback error: %s", FORGED))
    assert "\n" not in line
    assert all(c.isprintable() for c in line)
    assert line == (
        "chessbridge: INFO takeback error: x\\nchessbridge: ERROR forged\\x1b[2K\\r\\x07\\u2028end"
    )


def test_plain_text_is_left_alone() -> None:
    assert logs.escape("ply 12: Nf3 (release) — ½-½ ♔") == "ply 12: Nf3 (release) — ½-½ ♔"


def test_a_traceback_keeps_its_lines_indented_under_the_record() -> None:
    try:
        raise ValueError(FORGED)
    except ValueError:
        failed = logging.LogRecord(
            "chessbridge", logging.ERROR, __file__, 1, "failed", (), sys.exc_info()
        )
    lines = logs.SafeFormatter(journal=True).format(failed).split("\n")
    assert lines[0] == "<3>chessbridge: ERROR failed"
    assert all(line.startswith("<3>  | ") for line in lines[1:])
    assert all(c.isprintable() for line in lines for c in line)
    assert "<3>  | chessbridge: ERROR forged\\x1b[2K" in lines  # indented: no forged record


@pytest.mark.parametrize(
    ("level", "priority"),
    [
        (logging.CRITICAL, 2),
        (logging.ERROR, 3),
        (logging.WARNING, 4),
        (logging.INFO, 6),
        (logging.DEBUG, 7),
    ],
)
def test_journal_lines_start_with_their_priority(level: int, priority: int) -> None:
    line = logs.SafeFormatter(journal=True).format(record(level, "text"))
    assert line.startswith(f"<{priority}>chessbridge: ")


def test_the_journal_is_recognised_by_its_stream(tmp_path: Path) -> None:
    with (tmp_path / "stream").open("w") as stream:
        stat = os.fstat(stream.fileno())
        assert logs.to_journal(stream, {"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"})
        assert not logs.to_journal(stream, {"JOURNAL_STREAM": f"{stat.st_dev}:1"})
        assert not logs.to_journal(stream, {})
    assert not logs.to_journal(io.StringIO(), {"JOURNAL_STREAM": "1:2"})


def test_a_fatal_line_is_one_escaped_line() -> None:
    stream = io.StringIO()
    logs.fatal(f"another daemon (instance {FORGED}) already runs table t1", stream=stream)
    assert stream.getvalue() == (
        "chessbridge: another daemon (instance x\\nchessbridge: ERROR forged\\x1b[2K\\r\\x07"
        "\\u2028end) already runs table t1\n"
    )


def test_a_fatal_line_names_its_command() -> None:
    stream = io.StringIO()
    logs.fatal("cannot listen on 0.0.0.0:80", prog="chessbridge relay", stream=stream)
    assert stream.getvalue() == "chessbridge relay: cannot listen on 0.0.0.0:80\n"


def test_a_fatal_line_in_the_journal_is_an_error(tmp_path: Path) -> None:
    with (tmp_path / "stream").open("w+") as stream:
        stat = os.fstat(stream.fileno())
        journal = {"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"}
        logs.fatal(f"cannot open board at /dev/{FORGED}", stream=stream, environ=journal)
        logs.say_lines(["usage: chessbridge run", "  --board URI"], stream=stream, environ=journal)
        logs.fatal("not the journal", stream=stream, environ={})
        stream.seek(0)
        lines = stream.read().splitlines()
    assert lines == [
        "<3>chessbridge: cannot open board at /dev/x\\nchessbridge: ERROR forged\\x1b[2K\\r\\x07"
        "\\u2028end",
        "<3>usage: chessbridge run",
        "<3>  --board URI",
        "chessbridge: not the journal",
    ]
