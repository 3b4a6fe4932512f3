"""``chessbridge scan``: the boards in reach, each with the board URI to paste.

Bluetooth LE: every device advertising during the scan whose name or services are those of a
board family (``drivers.FAMILIES``, the families with ``bluetooth_le``), through the system's
Bluetooth or, with ``[ble] radio`` / ``CHESSBRIDGE_BLE_RADIO``, a virtual radio.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass

from drivers import FAMILIES
from drivers.link import LinkSettings


@dataclass(frozen=True, slots=True)
class Reachable:
    """A board found: its URI, and what it said of itself."""

    uri: str
    name: str
    detail: str


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


async def scan(settings: LinkSettings, within: float) -> int:
    """Print one line per board in reach; exit status 0, or 1 if nothing could be scanned."""
    from bleak.exc import BleakError

    boards: list[Reachable] = []
    scanned = 0
    try:
        boards += await scan_ble(settings, within)
        scanned += 1
    except (BleakError, OSError) as exc:
        reason = "no D-Bus system bus" if isinstance(exc, FileNotFoundError) else str(exc)
        print(
            f"chessbridge: cannot scan for Bluetooth LE boards ({reason}); check that Bluetooth "
            "is on (systemctl status bluetooth; bluetoothctl show), or set [ble] radio / "
            "CHESSBRIDGE_BLE_RADIO for an emulated board",
            file=sys.stderr,
        )
    for board in boards:
        print(f"{board.uri}\t{board.name}\t({board.detail})")
    if scanned and not boards:
        print(f"chessbridge: no boards found within {within:g} s", file=sys.stderr)
    return 0 if scanned else 1
