"""How Bluetooth LE boards are wired in: the registry, the config, the engine's timing, the view."""

from __future__ import annotations

import importlib
from pathlib import Path

import msgspec
import pytest

from bridge.arbiter.engine import DEFAULT_DWELL, DEFAULT_FLICKER
from bridge.table.daemon import DaemonOptions, engine_config
from bridge.views.model import board_line
from bridge.wire import config as config_module
from bridge.wire.payloads import BoardData
from drivers import AVAILABLE, BLE_DWELL, BLE_FLICKER, FAMILIES, parse_board_uri
from drivers.emulation import EmulatedBoard


def options(board: str, toml: str = "") -> DaemonOptions:
    return DaemonOptions(
        board=parse_board_uri(board),
        table="t1",
        broker=config_module.broker_settings("mqtt://localhost"),
        rules="fide-2018",
        state_dir=Path("/nonexistent"),
        config=config_module.decode(toml.encode()),
    )


def test_chessnut_is_a_bluetooth_le_family_with_an_emulator() -> None:
    family = FAMILIES["chessnut"]
    assert "chessnut" in AVAILABLE
    assert family.bluetooth_le
    assert parse_board_uri("chessnut:EC:1B:00:00:C0:01").address == "EC:1B:00:00:C0:01"
    assert parse_board_uri("chessnut:Chessnut Air").address == "Chessnut Air"


@pytest.mark.parametrize("scheme", [s for s, f in FAMILIES.items() if f.emulator])
def test_every_emulator_named_in_the_registry_is_an_emulated_board(scheme: str) -> None:
    emulator = FAMILIES[scheme].emulator
    assert emulator is not None
    module, _, name = emulator.partition(":")
    board: EmulatedBoard = getattr(importlib.import_module(module), name)()
    assert board.scheme == scheme
    assert isinstance(board.position, dict)


@pytest.mark.parametrize("scheme", [s for s, f in FAMILIES.items() if f.bluetooth_le])
def test_every_bluetooth_le_family_declares_its_gatt_layout(scheme: str) -> None:
    module = FAMILIES[scheme].module
    assert module is not None
    family = importlib.import_module(module).FAMILY
    assert family.scheme == scheme
    assert family.notify
    assert family.write
    assert family.advertises(f"{family.names[0]} 1234", ())
    assert family.advertises(None, (family.service.upper(),)) == family.unique_service
    assert not family.advertises("Thermometer", ("0000180f-0000-1000-8000-00805f9b34fb",))


def test_a_bluetooth_le_board_gets_the_slower_timing_unless_the_config_says() -> None:
    ble = engine_config(options("chessnut:EC:1B:00:00:C0:01"))
    assert (ble.dwell, ble.flicker) == (BLE_DWELL, BLE_FLICKER)
    assert BLE_DWELL == 2 * DEFAULT_DWELL  # half the scan rate of a DGT board
    dgt = engine_config(options("dgt:/dev/ttyACM0"))
    assert (dgt.dwell, dgt.flicker) == (DEFAULT_DWELL, DEFAULT_FLICKER)
    mine = engine_config(options("chessnut:X", "[engine]\ndwell = 0.5\nflicker = 0.2\n"))
    assert (mine.dwell, mine.flicker) == (0.5, 0.2)


def test_the_radio_comes_from_the_config_or_the_environment() -> None:
    config = config_module.decode(
        b'[ble]\nradio = "/run/r"\nscan_timeout = 3\nconnect_timeout = 7\n'
    )
    settings = config_module.link_settings(config)
    assert (settings.ble_radio, settings.ble_scan_timeout) == ("/run/r", 3.0)
    assert settings.ble_connect_timeout == 7.0
    assert config_module.link_settings(config_module.Config()).ble_connect_timeout == 20.0
    env = {config_module.ENV_BLE_RADIO: "/run/other-radio"}
    assert config_module.link_settings(config_module.with_environment(config, env)).ble_radio == (
        "/run/other-radio"
    )
    assert config_module.link_settings(config_module.Config()).ble_radio is None


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[engine]\nflicker = 2.5\n", "engine.flicker"),
        ("[ble]\nscan_timeout = 0\n", "ble.scan_timeout"),
        ("[ble]\nconnect_timeout = 0.5\n", "ble.connect_timeout"),
        ("[ble]\nconnect_timeout = 121\n", "ble.connect_timeout"),
        ("[ble]\nantenna = 1\n", "antenna"),
    ],
)
def test_bad_ble_and_timing_settings_are_refused(toml: str, message: str) -> None:
    with pytest.raises(config_module.ConfigError, match=message):
        config_module.decode(toml.encode())


def test_the_view_shows_the_signal_strength() -> None:
    board = BoardData(
        state="connected", driver="chessnut", uri="chessnut:X", model="Chessnut Air", rssi=-61
    )
    assert board_line(board) == "board connected (Chessnut Air) signal -61 dBm"
    charging = msgspec.structs.replace(board, battery=40, charging=True)
    assert (
        board_line(charging) == "board connected (Chessnut Air) battery 40% charging signal -61 dBm"
    )
