"""A Bluetooth LE board given by its advertised name (``chessnut:Chessnut Air``), with boards of
this process's own on a virtual radio: two boards of that name in range are refused, naming
both, rather than the first heard taken; a name is matched whatever its case."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from drivers import create_link, parse_board_uri
from drivers.ble.radio import VirtualRadio
from drivers.chessnut.emulator import ChessnutEmulator
from drivers.errors import AmbiguousBoardError
from drivers.link import LinkSettings
from tests.cli import chessbridge
from tests.conftest import Mosquitto
from tests.integration.test_ble_end_to_end import radio_config

FIRST = "EC:1B:00:00:C0:01"
SECOND = "EC:1B:00:00:C0:02"


@contextlib.asynccontextmanager
async def two_of_a_name() -> AsyncIterator[tuple[VirtualRadio, ChessnutEmulator, ChessnutEmulator]]:
    """Two Chessnut Airs advertising the same name, at different strengths."""
    async with (
        VirtualRadio() as radio,
        ChessnutEmulator(radio=radio, address=FIRST, rssi=-58) as first,
        ChessnutEmulator(radio=radio, address=SECOND, rssi=-71) as second,
    ):
        yield radio, first, second


def settings(radio: VirtualRadio) -> LinkSettings:
    return LinkSettings(ble_radio=radio.path, ble_scan_timeout=5.0, ble_connect_timeout=3.0)


async def test_two_boards_of_the_name_are_refused_naming_both() -> None:
    async with two_of_a_name() as (radio, first, second):
        uri = parse_board_uri("chessnut:chessnut air")  # any case
        link = create_link(uri, lambda _: None, settings(radio))
        with pytest.raises(AmbiguousBoardError) as raised:
            await link.open()
        assert not first.connected
        assert not second.connected
    message = str(raised.value)
    assert "\n" not in message
    assert f"{FIRST} (-58 dBm)" in message
    assert f"{SECOND} (-71 dBm)" in message
    assert "address" in message


async def test_one_board_of_the_name_is_taken_and_its_address_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    async with VirtualRadio() as radio, ChessnutEmulator(radio=radio, address=SECOND) as board:
        link = create_link(
            parse_board_uri("chessnut:CHESSNUT AIR"), lambda _: None, settings(radio)
        )
        await link.open()
        try:
            assert board.connected
        finally:
            await link.close()
    assert any(
        "CHESSNUT AIR" in record.getMessage() and SECOND in record.getMessage()
        for record in caplog.records
    )


async def test_run_refuses_a_name_two_boards_advertise_in_one_line(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    async with two_of_a_name() as (radio, _, _):
        proc = await chessbridge(
            "run", "--board", "chessnut:Chessnut Air", "--table", "t1",
            "--broker", mosquitto.url, "--state-dir", str(tmp_path / "state"),
            "--config", str(radio_config(tmp_path, radio.path)),
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 2
    [line] = [line for line in err.decode().splitlines() if FIRST in line]
    assert f"{SECOND} (-71 dBm)" in line
    assert f"--board chessnut:{FIRST}" in line
