"""Identity strings a board may report (drivers/identity.py)."""

from __future__ import annotations

import pytest

from drivers import identity


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("01234", "01234"),
        ("  01234\x00", "01234"),
        ("3.25 12345", "3.25 12345"),
        ("P00000000000", "P00000000000"),
        ("01\x0734", None),
        ("01\n34", None),
        ("", None),
        ("-1234", None),
        ("1" * 33, None),
    ],
)
def test_serial(raw: str, kept: str | None) -> None:
    assert identity.serial(raw) == kept


@pytest.mark.parametrize(
    ("major", "minor", "kept"),
    [
        (1, 7, "1.07"),
        (3, 10, "3.10"),
        (0, 0, "0.00"),
        (127, 127, None),
        (16, 0, None),
        (1, 100, None),
    ],
)
def test_firmware(major: int, minor: int, kept: str | None) -> None:
    assert identity.firmware(major, minor) == kept


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Chessnut Air", "Chessnut Air"),
        ("DGT\r\nPegasus\r\n", "DGT / Pegasus"),
        ("DGT\x1b[31m", None),
        ("DGT\x07", None),
        ("x" * 161, None),
        ("\r\n", None),
    ],
)
def test_text(raw: str, kept: str | None) -> None:
    assert identity.text(raw) == kept


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("hardware version: 1.00, serial no: 12345", "12345"),
        ("x\r\nhardware version: 1.00, Serial No: 12345\r\nmore", "12345"),
        ("serial no:  A-17 , build 3", "A-17"),
        ("serial no: 12345\x07", None),
        ("serial no: ", None),
        ("serial no: " + "1" * 33, None),
        ("hardware version: 1.00", None),
    ],
)
def test_serial_after(raw: str, kept: str | None) -> None:
    assert identity.serial_after(raw, "serial no:") == kept
