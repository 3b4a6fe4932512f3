"""``chessbridge scan``: the boards in reach, each with the board URI to paste.

What a board says of itself (an advertised name, a serial number) is printed escaped, as the
logs write text from outside (:func:`bridge.logs.escape`): one line per board, whatever it sends.

Serial (:func:`scan_serial`): every port under ``/dev/serial/by-id`` (names that stay the same
whatever order boards are plugged in), and the ``ttyACM*``, ``ttyUSB*`` and ``rfcomm*`` ports
none of those names; each is asked by every serial family's probe in turn until one answers.
A USB board also gets a udev rule that gives it a short stable name of its own.

Bluetooth LE (:func:`scan_ble`): every device advertising during the scan whose name or
services are those of a board family (``drivers.FAMILIES``, the families with ``bluetooth_le``),
through the system's Bluetooth or, with ``[ble] radio`` / ``CHESSBRIDGE_BLE_RADIO``, a virtual
radio.
"""

from __future__ import annotations

import asyncio
import importlib
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, cast

from bridge.logs import escape
from drivers import FAMILIES
from drivers.errors import BoardNotFoundError
from drivers.events import BoardInfo
from drivers.link import LinkSettings

SERIAL_PROBE_ORDER: Final = ("certabo", "millennium", "dgt")
"""The order serial ports are asked in. A Certabo board talks unasked, so it is only listened
to, and first: bytes meant for another family would reach it as LED frames. A Millennium board
is asked its version next (a DGT board ignores those bytes), and DGT last."""

BY_ID: Final = Path("/dev/serial/by-id")
KERNEL_NAMES: Final = ("ttyACM*", "ttyUSB*", "rfcomm*")
SYS: Final = Path("/sys")

Probe = Callable[[str], Awaitable[BoardInfo | None]]


@dataclass(frozen=True, slots=True)
class Reachable:
    """A board found: its URI, and what it said of itself."""

    uri: str
    name: str
    detail: str
    udev: str | None = None
    """A udev rule giving a USB serial board a stable name of its own."""


def serial_ports(by_id: Path = BY_ID, dev: Path = Path("/dev")) -> list[str]:
    """The serial ports a board may be on: stable by-id names, then kernel names not covered."""
    named = sorted(by_id.iterdir()) if by_id.is_dir() else []
    covered = {port.resolve() for port in named}
    rest = sorted(
        port
        for pattern in KERNEL_NAMES
        for port in dev.glob(pattern)
        if port.resolve() not in covered
    )
    return [str(port) for port in [*named, *rest]]


async def scan_serial(ports: Sequence[str] | None = None) -> list[Reachable]:
    """The boards answering on ``ports`` (none given: :func:`serial_ports`), asked all at once.

    Ports where no board answered, or that cannot be opened, are said on standard error.
    """
    found = await asyncio.gather(*(_identify(port) for port in ports or serial_ports()))
    return [board for board in found if board is not None]


async def _identify(port: str) -> Reachable | None:
    for scheme in SERIAL_PROBE_ORDER:
        module = FAMILIES[scheme].module
        assert module is not None
        probe = cast("Probe", importlib.import_module(module).probe)
        try:
            info = await probe(port)
        except BoardNotFoundError as exc:
            print(f"chessbridge: {escape(str(exc))}", file=sys.stderr)
            return None
        if info is not None:
            facts = [
                "serial port",
                f"serial number {info.serial}" if info.serial else "",
                f"firmware {info.version}" if info.version else "",
            ]
            return Reachable(
                uri=f"{scheme}:{port}",
                name=info.trademark or scheme,
                detail=", ".join(fact for fact in facts if fact),
                udev=udev_rule(port, scheme),
            )
    tried = ", ".join(SERIAL_PROBE_ORDER)
    print(f"chessbridge: {escape(port)}: no board answered (asked as {tried})", file=sys.stderr)
    return None


def udev_rule(port: str, scheme: str, sys_root: Path = SYS) -> str | None:
    """A udev rule naming the USB board on ``port`` ``/dev/{scheme}-board-{serial}``.

    Matched by the USB device's vendor, product and serial number, or by the USB port it is
    plugged into when it has no serial number (the name then follows the port). ``None`` for a
    port that is not on USB (rfcomm, a pseudo-terminal).
    """
    device = sys_root / "class" / "tty" / Path(port).resolve().name / "device"
    if not device.exists():
        return None
    usb = device.resolve()
    while not ((usb / "idVendor").is_file() and (usb / "idProduct").is_file()):
        if usb == usb.parent:
            return None
        usb = usb.parent
    vendor = (usb / "idVendor").read_text().strip()
    product = (usb / "idProduct").read_text().strip()
    serial = (usb / "serial").read_text().strip() if (usb / "serial").is_file() else ""
    if serial:
        match, name = f'ATTRS{{serial}}=="{serial}"', serial
    else:
        match, name = f'KERNELS=="{usb.name}"', usb.name
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name)
    return (
        f'SUBSYSTEM=="tty", ATTRS{{idVendor}}=="{vendor}", ATTRS{{idProduct}}=="{product}", '
        f'{match}, SYMLINK+="{scheme}-board-{name}", TAG+="systemd"'
    )


async def scan_ble(settings: LinkSettings, within: float) -> list[Reachable]:
    """The Bluetooth LE boards advertising within ``within`` seconds.

    Raises:
        OSError, bleak.exc.BleakError: Bluetooth cannot be used (no adapter, BlueZ not running,
            no virtual radio at the path given).
    """
    from drivers.ble.link import BleFamily, discover

    families: list[BleFamily] = [
        importlib.import_module(f.module).FAMILY
        for f in FAMILIES.values()
        if f.bluetooth_le and f.module is not None
    ]
    out: list[Reachable] = []
    for found in sorted(await discover(settings, within), key=lambda f: f.address):
        for family in families:
            if family.advertises(found.name, found.services):
                rssi = "" if found.rssi is None else f", {found.rssi} dBm"
                out.append(
                    Reachable(
                        uri=f"{family.scheme}:{found.address}",
                        name=found.name or "?",
                        detail=f"{family.label} over Bluetooth LE{rssi}",
                    )
                )
                break
    return out


async def scan(settings: LinkSettings, within: float, ports: Sequence[str] | None = None) -> int:
    """Print one line per board in reach, a serial one followed by its udev rule (indented),
    then exit status 0. A half that cannot scan (no Bluetooth) says so on standard error."""
    from bleak.exc import BleakError

    serial = asyncio.create_task(scan_serial(ports))
    boards: list[Reachable] = []
    try:
        boards += await scan_ble(settings, within)
    except (BleakError, OSError) as exc:
        reason = "no D-Bus system bus" if isinstance(exc, FileNotFoundError) else escape(str(exc))
        print(
            f"chessbridge: cannot scan for Bluetooth LE boards ({reason}); check that Bluetooth "
            "is on (systemctl status bluetooth; bluetoothctl show), or set [ble] radio / "
            "CHESSBRIDGE_BLE_RADIO for an emulated board",
            file=sys.stderr,
        )
    boards = await serial + boards
    for board in boards:
        # What a board says of itself (its advertised name above all) is text from outside:
        # escaped as the logs are, it cannot print a line of its own or reach the terminal.
        print(f"{escape(board.uri)}\t{escape(board.name)}\t({escape(board.detail)})")
        if board.udev is not None:
            print(f"    {escape(board.udev)}")
    if not boards:
        print("chessbridge: no boards found", file=sys.stderr)
    return 0
