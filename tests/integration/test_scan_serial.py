"""``chessbridge scan``, the serial half: emulated boards of every serial family on
pseudo-terminals, and a port where nothing answers, asked from the command line."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bridge.scan import serial_ports, udev_rule
from drivers.certabo.emulator import CertaboEmulator
from drivers.dgt.emulator import DgtEmulator
from drivers.millennium.emulator import MillenniumEmulator
from tests.cli import chessbridge

pytestmark = pytest.mark.pty


async def test_every_serial_family_is_found_with_the_uri_to_paste(
    tmp_path: Path, silent_port: str
) -> None:
    silent = silent_port
    async with (
        DgtEmulator(serial="04321", version=(1, 7)) as dgt,
        MillenniumEmulator(version=(1, 3)) as millennium,
        CertaboEmulator(interval=0.25) as certabo,
    ):
        ports = [dgt.path, millennium.path, certabo.path, silent]
        proc = await chessbridge(
            "scan",
            "--timeout",
            "1",
            *(arg for port in ports for arg in ("--port", port)),
            env={**os.environ, "CHESSBRIDGE_BLE_RADIO": str(tmp_path / "no-radio")},
        )
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert millennium.e2rom[2] == 0, "scanning writes nothing to a Millennium board"
    assert proc.returncode == 0, err.decode()
    assert out.decode().splitlines() == [
        f"dgt:{ports[0]}\tDGT e-board\t(serial port, serial number 04321, firmware 1.07)",
        f"millennium:{ports[1]}\tMillennium ChessLink\t(serial port, firmware 1.03)",
        f"certabo:{ports[2]}\tCertabo\t(serial port)",
    ]  # pseudo-terminals are not on USB: no udev rule follows them
    assert f"{silent}: no board answered (asked as certabo, millennium, dgt)" in err.decode()
    assert "Traceback" not in err.decode()


def test_stable_names_first_then_kernel_names_they_do_not_cover(tmp_path: Path) -> None:
    dev, by_id = tmp_path / "dev", tmp_path / "dev" / "serial" / "by-id"
    by_id.mkdir(parents=True)
    for name in ("ttyACM0", "ttyUSB0", "ttyUSB1", "rfcomm0", "ttyS0"):
        (dev / name).touch()
    (by_id / "usb-Digital_Game_Technology_DGT_Board-if00").symlink_to(dev / "ttyACM0")
    assert serial_ports(by_id, dev) == [
        str(by_id / "usb-Digital_Game_Technology_DGT_Board-if00"),
        str(dev / "rfcomm0"),
        str(dev / "ttyUSB0"),
        str(dev / "ttyUSB1"),
    ]
    assert serial_ports(tmp_path / "none", tmp_path / "empty") == []


def sysfs(root: Path, tty: str, attributes: dict[str, str]) -> None:
    """A sysfs tree as the kernel lays it out for a USB serial adapter."""
    usb = root / "devices" / "platform" / "usb1" / "1-1" / "1-1.3"
    interface = usb / "1-1.3:1.0" / tty
    interface.mkdir(parents=True)
    for name, value in attributes.items():
        (usb / name).write_text(value + "\n")
    (root / "class" / "tty" / tty).mkdir(parents=True)
    (root / "class" / "tty" / tty / "device").symlink_to(interface)


def test_a_udev_rule_by_serial_number_or_by_usb_port(tmp_path: Path) -> None:
    sysfs(tmp_path, "ttyUSB0", {"idVendor": "10c4", "idProduct": "ea60", "serial": "0001 A"})
    assert udev_rule("/dev/ttyUSB0", "certabo", tmp_path) == (
        'SUBSYSTEM=="tty", ATTRS{idVendor}=="10c4", ATTRS{idProduct}=="ea60", '
        'ATTRS{serial}=="0001 A", SYMLINK+="certabo-board-0001_A", TAG+="systemd"'
    )
    sysfs(tmp_path / "other", "ttyACM0", {"idVendor": "045b", "idProduct": "8111"})
    assert udev_rule("/dev/ttyACM0", "dgt", tmp_path / "other") == (
        'SUBSYSTEM=="tty", ATTRS{idVendor}=="045b", ATTRS{idProduct}=="8111", '
        'KERNELS=="1-1.3", SYMLINK+="dgt-board-1-1.3", TAG+="systemd"'
    )
    assert udev_rule("/dev/rfcomm0", "dgt", tmp_path) is None
