"""The virtual radio: emulated Bluetooth LE boards serving their GATT services on a local socket.

No test machine has a Bluetooth controller, so an emulated board cannot be reached through BlueZ.
Instead, a :class:`VirtualRadio` listens on a Unix stream socket; each emulated board is a
:class:`Peripheral` on it (an address, an advertisement, GATT services), and every connection to
the socket is one *central*: a scanner, or a client connected to one board. The host side is a
pair of bleak backends (:mod:`drivers.ble.backend`) handed to bleak through its own ``backend=``
argument, so the link code under test is the code that runs against BlueZ on a Raspberry Pi.

The messages are JSON objects, one per line, described in docs/virtual-radio.md (anyone can
write an emulated board, or a host, from that page alone). Briefly, a central sends
``{"op": ..., "id": n, ...}`` requests (``scan``, ``connect``, ``services``, ``read``,
``write``, ``subscribe``, ``unsubscribe``, ``disconnect``) and gets one reply with the same
``op`` and ``id`` (plus ``"error"`` when it failed); the radio also sends ``advertise`` (to a
scanning central), ``notify`` (to a connected, subscribed one) and ``disconnect`` (the board went
away) on its own. Byte values are lower-case hex strings.

Like a real peripheral, a board advertises again and again while nobody is connected
(every ``ADVERTISING_INTERVAL``), accepts one central at a time and does not advertise while
connected; a board switched off (:meth:`VirtualRadio.power`) drops its central and neither
advertises nor accepts connections until switched on again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Protocol, Self

log = logging.getLogger(__name__)

MAX_LINE: Final = 1 << 16
"""Longest message line accepted, in bytes (a GATT value is at most 512 bytes)."""

DEFAULT_MTU: Final = 23
"""ATT MTU of every connection unless the radio is told otherwise: the minimum, what BlueZ
reports through bleak, so notifications carry at most 20 bytes and boards split longer ones."""

ADVERTISING_INTERVAL: Final = 0.25
"""Seconds between two advertisements of a board nobody is connected to, as a scanner hears
them (real boards advertise every 20 ms to a few seconds)."""

PROPERTIES: Final = frozenset({"read", "write", "write-without-response", "notify", "indicate"})
"""Characteristic properties the radio knows (bleak's names)."""


@dataclass(frozen=True, slots=True)
class Characteristic:
    """A GATT characteristic: its UUID and properties (bleak's names, e.g. ``"notify"``)."""

    uuid: str
    properties: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Service:
    """A GATT service and its characteristics."""

    uuid: str
    characteristics: tuple[Characteristic, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Advertisement:
    """What a board advertises while nobody is connected."""

    name: str
    services: tuple[str, ...] = ()
    manufacturer_data: Mapping[int, bytes] = field(default_factory=dict)
    rssi: int = -60


class Central(Protocol):
    """The host connected to a peripheral, as the peripheral sees it."""

    @property
    def mtu(self) -> int:
        """The connection's ATT MTU: a notification carries at most ``mtu - 3`` bytes."""
        ...

    def notify(self, uuid: str, value: bytes) -> None:
        """Send a notification on characteristic ``uuid`` (dropped unless subscribed)."""
        ...


class Peripheral(Protocol):
    """An emulated board on the radio."""

    @property
    def address(self) -> str:
        """Its Bluetooth address, e.g. ``"EC:1B:00:00:00:01"``."""
        ...

    @property
    def advertisement(self) -> Advertisement:
        """What it advertises."""
        ...

    @property
    def services(self) -> Sequence[Service]:
        """Its GATT services."""
        ...

    def on_connect(self, central: Central) -> None:
        """A central connected."""

    def on_disconnect(self) -> None:
        """The central went away (it disconnected, or the radio dropped it)."""

    def on_write(self, uuid: str, value: bytes) -> None:
        """The central wrote ``value`` to characteristic ``uuid``."""

    def on_read(self, uuid: str) -> bytes:
        """The central reads characteristic ``uuid``."""
        ...


class VirtualRadio:
    """A Unix socket serving peripherals to centrals; see the module docstring.

    ``path`` is where the socket is made (default: a fresh temporary directory).
    """

    def __init__(self, path: str | None = None, *, mtu: int = DEFAULT_MTU) -> None:
        if mtu < DEFAULT_MTU:
            raise ValueError(f"an ATT MTU is at least {DEFAULT_MTU}, got {mtu}")
        self._requested_path = path
        self._dir: str | None = None
        self._path: str | None = None
        self.mtu = mtu
        self._peripherals: dict[str, Peripheral] = {}
        self._powered: dict[str, bool] = {}
        self._links: dict[str, _Connection] = {}
        self._scanners: set[_Connection] = set()
        self._connections: set[_Connection] = set()
        self._server: asyncio.Server | None = None
        self._beacon: asyncio.Task[None] | None = None

    @property
    def path(self) -> str:
        """The socket's path (what ``[ble] radio`` names)."""
        if self._path is None:
            raise RuntimeError("radio not started")
        return self._path

    async def start(self) -> None:
        """Listen on the socket."""
        if self._server is not None:
            raise RuntimeError("radio already started")
        if self._requested_path is None:
            self._dir = tempfile.mkdtemp(prefix="chessbridge-radio-")
            path = os.path.join(self._dir, "radio")
        else:
            path = self._requested_path
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)  # a socket left by a radio that was killed
        self._server = await asyncio.start_unix_server(self._serve, path, limit=MAX_LINE)
        self._path = path
        self._beacon = asyncio.create_task(self._advertise_forever(), name="radio-advertising")

    async def stop(self) -> None:
        """Drop every central and remove the socket."""
        server, self._server = self._server, None
        if server is None:
            return
        if self._beacon is not None:
            self._beacon.cancel()
            self._beacon = None
        server.close()
        for connection in list(self._connections):
            connection.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 2.0)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        elif self._path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._path)
        self._path = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    def add(self, peripheral: Peripheral) -> None:
        """Put a (switched on) board on the radio."""
        address = peripheral.address.upper()
        if address in self._peripherals:
            raise ValueError(f"a peripheral with address {address} is already on the radio")
        self._peripherals[address] = peripheral
        self._powered[address] = True
        self._advertise(address)

    def remove(self, address: str) -> None:
        """Take a board off the radio (dropping its central)."""
        address = address.upper()
        self.power(address, on=False)
        self._peripherals.pop(address, None)
        self._powered.pop(address, None)

    def power(self, address: str, *, on: bool) -> None:
        """Switch a board on or off: off drops its central and stops its advertising."""
        address = address.upper()
        if address not in self._peripherals:
            raise KeyError(f"no peripheral {address} on the radio")
        self._powered[address] = on
        if on:
            self._advertise(address)
        else:
            link = self._links.get(address)
            if link is not None:
                link.drop("the board was switched off")

    def is_connected(self, address: str) -> bool:
        """Whether a central is connected to the board at ``address``."""
        return address.upper() in self._links

    # -- internals ----------------------------------------------------------------------------

    async def _advertise_forever(self) -> None:
        while True:
            await asyncio.sleep(ADVERTISING_INTERVAL)
            if self._scanners:
                for address in list(self._peripherals):
                    self._advertise(address)

    def _advertise(self, address: str) -> None:
        if not self._powered.get(address) or address in self._links:
            return
        message = self._advertisement(address)
        for scanner in list(self._scanners):
            scanner.send(message)

    def _advertisement(self, address: str) -> dict[str, Any]:
        adv = self._peripherals[address].advertisement
        return {
            "op": "advertise",
            "address": address,
            "name": adv.name,
            "rssi": adv.rssi,
            "services": [uuid.lower() for uuid in adv.services],
            "manufacturer_data": {str(k): v.hex() for k, v in adv.manufacturer_data.items()},
        }

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Connection(self, writer)
        self._connections.add(connection)
        try:
            while not connection.closed:
                try:
                    line = await reader.readline()
                except (ValueError, asyncio.LimitOverrunError):
                    connection.send({"op": "error", "error": f"line longer than {MAX_LINE} bytes"})
                    break
                except OSError:
                    break
                if not line:
                    break
                connection.handle(line)
        finally:
            self._connections.discard(connection)
            connection.close()


class _Connection:
    """One central: a scanner, or a client connected to one peripheral."""

    def __init__(self, radio: VirtualRadio, writer: asyncio.StreamWriter) -> None:
        self.radio = radio
        self.writer = writer
        self.closed = False
        self.address: str | None = None
        self.layout: _Layout = []
        self.handles: dict[int, Characteristic] = {}
        self.subscribed: set[int] = set()
        self._held: list[dict[str, Any]] | None = None

    @property
    def mtu(self) -> int:
        return self.radio.mtu

    # Central (what the peripheral sees)

    def notify(self, uuid: str, value: bytes) -> None:
        uuid = uuid.lower()
        for handle in self.subscribed:
            if self.handles[handle].uuid.lower() == uuid:
                self.send({"op": "notify", "handle": handle, "value": value.hex()})
                return

    # requests

    def handle(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            self.send({"op": "error", "error": "not a JSON line"})
            return
        if not isinstance(message, dict):
            self.send({"op": "error", "error": "a message is a JSON object"})
            return
        op = message.get("op")
        reply: dict[str, Any] = {"op": op, "id": message.get("id")}
        self._held = []  # what the request makes the board send goes after the reply
        try:
            reply |= self._dispatch(op, message)
        except _RequestError as exc:
            reply["error"] = str(exc)
        finally:
            held, self._held = self._held, None
        self.send(reply)
        for effect in held:
            self.send(effect)
        if op == "disconnect" and "error" not in reply:
            self.close()

    def _dispatch(self, op: object, message: dict[str, Any]) -> dict[str, Any]:
        if op == "scan":
            return self._scan()
        if op == "connect":
            return self._connect(message.get("address"))
        peripheral = self._peripheral()
        if op == "services":
            return {"services": self._services()}
        if op == "read":
            return {"value": peripheral.on_read(self._uuid(message, "read")).hex()}
        if op == "write":
            uuid = self._uuid(message, "write", "write-without-response")
            try:
                value = bytes.fromhex(str(message.get("value", "")))
            except ValueError:
                raise _RequestError("value must be a hex string") from None
            peripheral.on_write(uuid, value)
            return {}
        if op in ("subscribe", "unsubscribe"):
            self._uuid(message, "notify", "indicate")
            handle = message["handle"]
            if op == "subscribe":
                self.subscribed.add(handle)
            else:
                self.subscribed.discard(handle)
            return {}
        if op == "disconnect":
            return {}
        raise _RequestError(f"unknown op {op!r}")

    def _scan(self) -> dict[str, Any]:
        if self.address is not None:
            raise _RequestError("a connected central cannot scan")
        radio = self.radio
        radio._scanners.add(self)
        for address in radio._peripherals:
            if radio._powered.get(address) and address not in radio._links:
                # After this reply: the reply goes first.
                asyncio.get_running_loop().call_soon(self.send, radio._advertisement(address))
        return {}

    def _connect(self, address: object) -> dict[str, Any]:
        radio = self.radio
        if self.address is not None:
            raise _RequestError("already connected")
        key = str(address).upper()
        peripheral = radio._peripherals.get(key)
        if peripheral is None or not radio._powered.get(key):
            raise _RequestError(f"no peripheral {address} in range")
        if key in radio._links:
            raise _RequestError(f"{key} is connected to another central")
        radio._scanners.discard(self)
        self.address = key
        radio._links[key] = self
        self.layout = _layout(peripheral.services)
        self.handles = {
            handle: characteristic
            for _, _, characteristics in self.layout
            for handle, characteristic in characteristics
        }
        peripheral.on_connect(self)
        return {"address": key, "name": peripheral.advertisement.name, "mtu": radio.mtu}

    def _peripheral(self) -> Peripheral:
        if self.address is None:
            raise _RequestError("not connected")
        return self.radio._peripherals[self.address]

    def _services(self) -> list[dict[str, Any]]:
        return [
            {
                "uuid": service.uuid.lower(),
                "handle": service_handle,
                "characteristics": [
                    {
                        "uuid": characteristic.uuid.lower(),
                        "handle": handle,
                        "properties": list(characteristic.properties),
                    }
                    for handle, characteristic in characteristics
                ],
            }
            for service, service_handle, characteristics in self.layout
        ]

    def _uuid(self, message: dict[str, Any], *allowed: str) -> str:
        handle = message.get("handle")
        characteristic = self.handles.get(handle) if isinstance(handle, int) else None
        if characteristic is None:
            raise _RequestError(f"no characteristic with handle {handle!r}")
        if not set(allowed) & set(characteristic.properties):
            raise _RequestError(
                f"characteristic {characteristic.uuid} does not allow {' or '.join(allowed)}"
            )
        return characteristic.uuid.lower()

    # the line

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            return
        if self._held is not None:
            self._held.append(message)
            return
        try:
            self.writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        except (OSError, RuntimeError):
            self.close()

    def drop(self, reason: str) -> None:
        """The peripheral goes away: tell the central, then hang up."""
        self.send({"op": "disconnect", "reason": reason})
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        radio = self.radio
        radio._scanners.discard(self)
        address, self.address = self.address, None
        if address is not None and radio._links.get(address) is self:
            del radio._links[address]
            peripheral = radio._peripherals.get(address)
            if peripheral is not None:
                peripheral.on_disconnect()
            radio._advertise(address)
        with contextlib.suppress(Exception):
            self.writer.close()


_Layout = list[tuple[Service, int, list[tuple[int, Characteristic]]]]
"""Services with their handles, and their characteristics with theirs."""


def _layout(services: Sequence[Service]) -> _Layout:
    """Handles as a GATT server numbers them: 1, 2, ... in declaration order."""
    layout: _Layout = []
    handle = 0
    for service in services:
        handle += 1
        service_handle = handle
        characteristics = []
        for characteristic in service.characteristics:
            handle += 1
            characteristics.append((handle, characteristic))
        layout.append((service, service_handle, characteristics))
    return layout


class _RequestError(Exception):
    """A request the radio refuses; its text goes back in the reply's ``error``."""
