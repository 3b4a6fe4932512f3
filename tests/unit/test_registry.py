"""The board registry: one map from URI scheme to family, links imported only when used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import drivers
from drivers import FAMILIES, create_link, parse_board_uri
from drivers.dgt.link import DgtSerialLink
from drivers.events import BoardEvent


def test_every_contract_scheme_is_a_family() -> None:
    assert set(FAMILIES) == {
        "dgt",
        "pegasus",
        "chessnut",
        "millennium",
        "millennium-ble",
        "certabo",
    }
    assert set(FAMILIES) >= drivers.AVAILABLE


def test_create_link_builds_the_family_link_without_touching_the_port() -> None:
    seen: list[BoardEvent] = []
    link = create_link(parse_board_uri("dgt:/dev/does-not-exist"), seen.append)
    assert isinstance(link, DgtSerialLink)
    capabilities = {
        "memory": link.memory is not None,
        "clock": link.clock is not None,
        "leds": link.leds is not None,
        "battery": link.battery is not None,
    }
    assert capabilities == {"memory": True, "clock": True, "leds": False, "battery": False}
    assert seen == []


def test_an_unknown_scheme_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: dgt:"):
        parse_board_uri("floppy:/dev/fd0")


def test_the_serial_daemon_path_never_imports_the_bluetooth_stack() -> None:
    code = (
        "import sys, drivers, bridge.table.daemon\n"
        "drivers.create_link(drivers.parse_board_uri('dgt:/dev/null'), print)\n"
        "heavy = ('bleak', 'amqtt', 'dbus_fast', 'aiohttp', 'selenium')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_dgt_emulator_is_an_emulated_board() -> None:
    from drivers.dgt.emulator import DgtEmulator
    from drivers.emulation import EmulatedBoard

    board: EmulatedBoard = DgtEmulator()  # checked by mypy: the protocol is satisfied
    assert board.scheme == "dgt"
