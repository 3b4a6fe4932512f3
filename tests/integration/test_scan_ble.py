"""``chessbridge scan``, the Bluetooth LE half, with boards of this process's own on a virtual
radio: what a board advertises is text from outside and is printed escaped."""

from __future__ import annotations

import asyncio
from pathlib import Path

from drivers.ble.radio import VirtualRadio
from drivers.chessnut.emulator import ChessnutEmulator
from tests.cli import chessbridge
from tests.integration.test_ble_end_to_end import radio_config

FORGED = "Chessnut Air\nchessnut:FA:KE:00:00:00:01\tx\x1b[31m"
"""A name that would print a second line looking like a board URI, and colour the terminal."""


async def scan(radio: VirtualRadio, tmp_path: Path) -> tuple[int, str, str]:
    config = radio_config(tmp_path, radio.path)
    proc = await chessbridge("scan", "--timeout", "1", "--config", str(config))
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_an_advertised_name_is_printed_escaped_on_its_one_line(tmp_path: Path) -> None:
    async with (
        VirtualRadio() as radio,
        ChessnutEmulator(radio=radio, address="EC:1B:00:00:C0:07", name=FORGED),
    ):
        status, out, err = await scan(radio, tmp_path)
    assert status == 0, err
    assert out.splitlines() == [
        "chessnut:EC:1B:00:00:C0:07\tChessnut Air\\nchessnut:FA:KE:00:00:00:01\\tx\\x1b[31m"
        "\t(Chessnut Air/Pro/Go over Bluetooth LE, -58 dBm)"
    ]
    assert "\x1b" not in out
