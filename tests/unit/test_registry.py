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


@pytest.mark.parametrize(
    ("uri", "link_class"),
    [
        ("millennium:/dev/does-not-exist", "drivers.millennium.link:MillenniumSerialLink"),
        ("certabo:/dev/does-not-exist", "drivers.certabo.link:CertaboSerialLink"),
    ],
)
def test_the_serial_families_light_squares_and_nothing_more(uri: str, link_class: str) -> None:
    module, _, name = link_class.partition(":")
    link = create_link(parse_board_uri(uri), lambda _: None)
    assert type(link).__name__ == name
    assert type(link).__module__ == module
    assert (link.leds is not None, link.memory, link.clock, link.battery) == (
        True,
        None,
        None,
        None,
    )


def test_each_serial_family_gets_the_timing_of_its_scan_rate() -> None:
    from pathlib import Path

    from bridge.arbiter.engine import DEFAULT_DWELL, DEFAULT_FLICKER
    from bridge.table.daemon import DaemonOptions, engine_config
    from bridge.wire.config import Config, broker_settings, decode

    def timing(board: str, config: Config | None = None) -> tuple[float, float]:
        options = DaemonOptions(
            board=parse_board_uri(board),
            table="t1",
            broker=broker_settings("mqtt://localhost"),
            rules="fide-2018",
            state_dir=Path("/nonexistent"),
            config=config or Config(),
        )
        engine = engine_config(options)
        return engine.dwell, engine.flicker

    # Certabo: a reading a second (1.6 readings of dwell, a missed reading is a flicker).
    assert timing("certabo:/dev/ttyUSB0") == (drivers.CERTABO_DWELL, drivers.CERTABO_FLICKER)
    assert drivers.CERTABO_FLICKER > 1.0
    # Millennium scans every 41 ms: the hand, not the scan, bounds the dwell.
    assert timing("millennium:/dev/ttyUSB0") == (DEFAULT_DWELL, DEFAULT_FLICKER)
    configured = decode(b"[engine]\ndwell = 0.3\nflicker = 1.5\n")
    assert timing("certabo:/dev/ttyUSB0", configured) == (0.3, 1.5)


def test_no_serial_family_loads_the_bluetooth_stack() -> None:
    code = (
        "import sys, drivers, bridge.table.daemon, bridge.scan\n"
        "for uri in ('millennium:/dev/null', 'certabo:/dev/null'):\n"
        "    drivers.create_link(drivers.parse_board_uri(uri), print)\n"
        "import drivers.millennium.emulator, drivers.certabo.emulator\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('bleak', 'dbus_fast')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
