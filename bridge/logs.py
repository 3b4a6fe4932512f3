"""Logging for the command line: one line per record, safe to show, at the journal's priority.

Everything the daemon logs may carry text from outside: a request's field names and values, a
board's identity strings, a broker's error. A newline or an escape sequence in such text would
start a forged line in the journal (``chessbridge: ERROR ...``) or repaint a terminal, so
:class:`SafeFormatter` writes every character that is not printable as an escape (``\\n``,
``\\x1b``): a record is always exactly one line. A traceback keeps its lines, each indented
under the record and escaped the same way.

A command that cannot go on says why in one line that is not a record (``chessbridge: cannot
open board at ...``): :func:`fatal` writes it, escaped the same way, since it may quote text
from outside too (a second daemon's claim, a path, a broker's error), and at priority err in
the journal; a command line error (argparse's usage and message) is written the same way.

Under systemd, stderr goes to the journal (``JOURNAL_STREAM`` names that stream), and each line
starts with its syslog priority, ``<3>`` for an error ... ``<7>`` for debug (sd-daemon(3)), so
``journalctl -p warning`` shows warnings and errors only.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Final, TextIO

PRIORITIES: Final = {
    logging.CRITICAL: 2,
    logging.ERROR: 3,
    logging.WARNING: 4,
    logging.INFO: 6,
    logging.DEBUG: 7,
}
"""syslog priority by logging level (sd-daemon(3): SD_CRIT ... SD_DEBUG)."""

FORMAT: Final = "chessbridge: %(levelname)s %(message)s"


def escape(text: str) -> str:
    """``text`` with every character that is not printable written as an escape."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


class SafeFormatter(logging.Formatter):
    """One escaped line per record (see the module docstring); ``journal`` adds priorities."""

    def __init__(self, *, journal: bool = False) -> None:
        super().__init__(FORMAT)
        self.journal = journal

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line, then its traceback's lines indented, all escaped."""
        shown = logging.makeLogRecord(record.__dict__)
        shown.message = escape(record.getMessage())
        line = self.formatMessage(shown)
        extra: list[str] = []
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        for text in (record.exc_text, record.stack_info and self.formatStack(record.stack_info)):
            if text:
                extra += ["  | " + escape(part) for part in text.splitlines()]
        prefix = f"<{_priority(record.levelno)}>" if self.journal else ""
        return "\n".join(prefix + part for part in [line, *extra])


def _priority(level: int) -> int:
    for threshold, priority in sorted(PRIORITIES.items(), reverse=True):
        if level >= threshold:
            return priority
    return PRIORITIES[logging.DEBUG]


def to_journal(stream: TextIO, environ: Mapping[str, str]) -> bool:
    """Whether ``stream`` is the journal's stream, as systemd says in ``JOURNAL_STREAM``."""
    device, _, inode = environ.get("JOURNAL_STREAM", "").partition(":")
    try:
        stat = os.fstat(stream.fileno())
        return (stat.st_dev, stat.st_ino) == (int(device), int(inode))
    except (OSError, ValueError):
        return False


def setup(stream: TextIO, *, verbose: bool, environ: Mapping[str, str] | None = None) -> None:
    """Log to ``stream`` through :class:`SafeFormatter` (at journal priorities if it is the
    journal), INFO and up (DEBUG with ``verbose``); paho's own chatter only from ERROR up."""
    handler = logging.StreamHandler(stream)
    journal = to_journal(stream, os.environ if environ is None else environ)
    handler.setFormatter(SafeFormatter(journal=journal))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger("mqtt").setLevel(logging.ERROR)


def fatal(
    message: str,
    *,
    prog: str = "chessbridge",
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Say why the command stops: ``PROG: MESSAGE``, escaped into one line, on ``stream``
    (default: stderr), at priority err (``<3>``) if that is the journal."""
    say_lines([f"{prog}: {message}"], stream=stream, environ=environ)


def say_lines(
    lines: Iterable[str],
    *,
    level: int = logging.ERROR,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> None:
    """Write each of ``lines`` escaped (one line each) on ``stream`` (default: stderr), each
    starting with the syslog priority of ``level`` if that is the journal (see
    :func:`to_journal`): what a command says outside its log records, such as a usage error."""
    out = sys.stderr if stream is None else stream
    journal = to_journal(out, os.environ if environ is None else environ)
    prefix = f"<{_priority(level)}>" if journal else ""
    out.write("".join(f"{prefix}{escape(line)}\n" for line in lines))
    out.flush()
