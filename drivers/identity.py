"""What a board may say about itself: plausible identity strings, or nothing.

A board's serial number, firmware version and trademark (or a Bluetooth board's advertised name)
go into the retained ``board`` topic and the log. They come from outside, so a codec keeps them
only when they look like what they are: printable, bounded, and of the right form. A message that
carries anything else is dropped as a framing error (a real board never sends it; line noise or a
hostile device does). Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

MAX_TEXT: Final = 160
"""Longest identity text kept (a DGT Pegasus's trademark is about 130 characters on four lines)."""

MAX_SERIAL: Final = 32
MAX_FIRMWARE_MAJOR: Final = 15
MAX_FIRMWARE_MINOR: Final = 99
"""Firmware versions seen on e-boards run 1.0 to 3.x; a byte each is far more than plausible."""

_SERIAL: Final = re.compile(r"[0-9A-Za-z][0-9A-Za-z.:_ -]*")
_LINE_BREAKS: Final = re.compile(r"\s*[\r\n]+\s*")


def text(raw: str) -> str | None:
    """``raw`` as one line (its lines joined by ``" / "``, outer blanks and NULs stripped), or
    ``None`` if it is empty, longer than :data:`MAX_TEXT`, or holds any other control character."""
    joined = _LINE_BREAKS.sub(" / ", raw.strip(" \t\r\n\x00"))
    if not joined or len(joined) > MAX_TEXT or not joined.isprintable():
        return None
    return joined


def serial(raw: str) -> str | None:
    """``raw`` if it is a plausible serial number (letters, digits, ``. : _ -`` and inner
    spaces, as a Revelation II writes ``3.25 12345``), else ``None``."""
    stripped = raw.strip(" \t\r\n\x00")
    if len(stripped) > MAX_SERIAL or not _SERIAL.fullmatch(stripped):
        return None
    return stripped


def firmware(major: int, minor: int) -> str | None:
    """``"major.minor"`` (minor in two digits, as DGT writes it), or ``None`` if implausible."""
    if not (0 <= major <= MAX_FIRMWARE_MAJOR and 0 <= minor <= MAX_FIRMWARE_MINOR):
        return None
    return f"{major}.{minor:02d}"


def serial_after(raw: str, label: str) -> str | None:
    """The serial number written after ``label`` in a board's free text, up to the next comma or
    line end (a DGT Pegasus's trademark ends ``hardware version: 1.00, serial no: 12345``), if
    ``label`` is there (case aside) and what follows it is a plausible :func:`serial`; else
    ``None``."""
    found = re.search(re.escape(label) + r"([^,\r\n]*)", raw, re.IGNORECASE)
    return None if found is None else serial(found.group(1))
