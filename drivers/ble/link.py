"""One board link for every Bluetooth LE family: find, connect, subscribe, write, notice a loss.

A family is data plus a codec (:class:`BleFamily`): the GATT characteristics to subscribe to and
to write, the commands that start the board reporting, how to ask for its battery and how to
light its squares. :class:`BleBoardLink` does the rest with bleak, on BlueZ or, when
``LinkSettings.ble_radio`` names a virtual radio (docs/virtual-radio.md), through bleak's
``backend=`` seam with :mod:`drivers.ble.backend`:

1. *find*: scan until the board advertises, matched by address (``AA:BB:CC:DD:EE:FF``, or the
   UUID macOS gives) or else by advertised name (in any case); the advertisement's RSSI is
   kept. A name is listened for :data:`NAME_LISTEN` seconds more once heard: two boards of that
   name in range are refused (``AmbiguousBoardError``, both addresses said), never the first
   heard taken, and the address a name was resolved to is logged;
2. *connect*, a few attempts with the shared backoff (a BLE connection often fails once and
   works the next time); then check that the board has the family's characteristics;
3. *subscribe* to the notifying characteristics, send the start-up commands, and wait for the
   first full board: the board is identified;
4. *run*: notifications go through the family's codec to the daemon; the battery is asked now
   and then; bleak's disconnect callback ends ``run()`` with ``LinkLostError``, and the board
   supervisor reconnects with its backoff.

Writes are serialised, cut to what one write may carry, and paced (``write_gap`` between
commands) for boards that drop commands sent too close together.

Why not bleak-retry-connector: its value is BlueZ's own failure modes (stale connections,
service caches, adapter slots) reached over D-Bus beside bleak, which the virtual radio cannot
exercise; the retries themselves are a few lines here with the project's one backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import chess
from bleak import BleakClient, BleakScanner
from bleak.backends.characteristic import BleakGATTCharacteristic
from bleak.backends.client import BaseBleakClient
from bleak.backends.device import BLEDevice
from bleak.backends.scanner import BaseBleakScanner
from bleak.exc import BleakError

from drivers import identity
from drivers.backoff import Backoff
from drivers.ble.backend import VirtualRadioClient, VirtualRadioScanner
from drivers.errors import AmbiguousBoardError, BoardNotFoundError, LinkLostError, NotABoardError
from drivers.events import BoardEvent, BoardInfo, BoardSnapshot, merge_info
from drivers.link import BatteryGauge, Capabilities, EventCallback, LinkSettings

log = logging.getLogger(__name__)

ADDRESS: Final = re.compile(
    r"^(?:[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12})$"
)
"""A Bluetooth address, or the UUID macOS shows instead; anything else is an advertised name."""

NAME_LISTEN: Final = 2.0
"""Seconds a scan for a board given by name goes on once a board of that name is heard, to
hear a second one (boards advertise several times a second)."""

CONNECT_ATTEMPTS: Final = 3
"""Connection attempts per ``open()``; the supervisor's reconnect loop retries beyond that."""

BATTERY_EVERY: Final = 300.0
"""Seconds between battery readings while connected."""


class BleCodec(Protocol):
    """A family's codec: notifications in (by characteristic), physical events out; never raises."""

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        """Decode ``data`` notified on characteristic ``source`` (lower-case UUID) at ``at``."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class BleFamily:
    """What the generic link needs to know of a Bluetooth LE board family."""

    scheme: str
    """Its board URI scheme (``chessnut``)."""
    label: str
    """Its name for people (``Chessnut Air/Pro/Go``)."""
    service: str
    """The GATT service that identifies it (listed by ``chessbridge scan``)."""
    names: tuple[str, ...]
    """Prefixes of the names its boards advertise."""
    notify: tuple[str, ...]
    """Characteristics to subscribe to."""
    write: str
    """The characteristic commands are written to."""
    codec: Callable[[], BleCodec]
    """A fresh codec for each connection."""
    startup: tuple[bytes, ...] = ()
    """Commands that make the board report (its full board first), written after subscribing."""
    write_response: bool = False
    """Write with response (else without)."""
    write_gap: float = 0.0
    """Seconds to leave between two commands, for boards that drop commands sent closer (the
    pieces of one command cut to the MTU go back to back)."""
    battery_request: bytes | None = None
    """The command that makes the board report its battery, if it has one."""
    leds: Callable[[Collection[chess.Square]], bytes] | None = None
    """The command lighting exactly these squares (board frame), if it has lights."""
    services: tuple[str, ...] = field(default=())
    """Other services the board advertises (also matched by ``scan``)."""
    unique_service: bool = True
    """Whether its services are its own (a vendor's UUIDs), so that they alone identify it; a
    generic serial-over-BLE service (Nordic UART, Microchip) does not: the name must match."""

    def advertises(self, name: str | None, services: Collection[str]) -> bool:
        """Whether an advertisement looks like one of this family's boards."""
        if name is not None and name.startswith(self.names):
            return True
        if not self.unique_service:
            return False
        uuids = {uuid.lower() for uuid in services}
        return self.service.lower() in uuids or bool(uuids & {u.lower() for u in self.services})


@dataclass(frozen=True, slots=True)
class Found:
    """A board in range: its address, advertised name and signal strength."""

    address: str
    name: str | None
    rssi: int | None
    device: BLEDevice
    services: tuple[str, ...] = ()
    """The service UUIDs it advertised."""


def bleak_backends(
    settings: LinkSettings,
) -> tuple[type[BaseBleakClient] | None, type[BaseBleakScanner] | None, dict[str, Any]]:
    """The client and scanner backends (``None``: bleak's own) and their extra arguments."""
    if settings.ble_radio is None:
        return None, None, {}
    return VirtualRadioClient, VirtualRadioScanner, {"radio": settings.ble_radio}


def _scanner(settings: LinkSettings) -> BleakScanner:
    _, backend, extra = bleak_backends(settings)
    return BleakScanner(backend=backend, **extra)


async def find(address: str, settings: LinkSettings, within: float) -> list[Found]:
    """Scan until a board matching ``address`` shows: the one with that address, or every
    board advertising that name (in any case) heard within :data:`NAME_LISTEN` seconds of the
    first (bounded by ``within``); none heard: empty."""
    if ADDRESS.match(address) is not None:
        return await _find_address(address, settings, within)
    wanted = address.casefold()
    named: dict[str, Found] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout_at(deadline) as timeout, _scanner(settings) as scanner:
            async for device, adv in scanner.advertisement_data():
                names = {n.casefold() for n in (adv.local_name, device.name) if n}
                if wanted not in names or device.address.upper() in named:
                    continue
                if not named:
                    timeout.reschedule(min(deadline, loop.time() + NAME_LISTEN))
                named[device.address.upper()] = Found(
                    address=device.address,
                    name=adv.local_name or device.name,
                    rssi=adv.rssi,
                    device=device,
                )
    return list(named.values())


async def _find_address(address: str, settings: LinkSettings, within: float) -> list[Found]:
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within), _scanner(settings) as scanner:
            async for device, adv in scanner.advertisement_data():
                if device.address.lower() == address.lower():
                    found = Found(
                        address=device.address,
                        name=adv.local_name or device.name,
                        rssi=adv.rssi,
                        device=device,
                    )
                    return [found]
    return []


async def discover(settings: LinkSettings, within: float) -> list[Found]:
    """Every device advertising during ``within`` seconds (``chessbridge scan`` filters them)."""
    async with _scanner(settings) as scanner:
        await asyncio.sleep(within)
    return [
        Found(
            address=device.address,
            name=adv.local_name or device.name,
            rssi=adv.rssi,
            device=device,
            services=tuple(adv.service_uuids),
        )
        for device, adv in scanner.discovered_devices_and_advertisement_data.values()
    ]


class BleBoardLink(Capabilities):
    """One connection to one Bluetooth LE board of ``family``; see the module docstring.

    Its :attr:`info` holds the advertised name (as the model), the RSSI, and what the board
    reported; no Bluetooth LE family keeps a log the host can read back or has a clock the host
    can set.
    """

    def __init__(
        self,
        family: BleFamily,
        address: str,
        on_event: EventCallback,
        settings: LinkSettings,
        *,
        identify_timeout: float = 5.0,
    ) -> None:
        self.family = family
        self.address = address
        self._on_event = on_event
        self._settings = settings
        self._identify_timeout = identify_timeout
        self._codec = family.codec()
        self._client: BleakClient | None = None
        self._info = BoardInfo(at=0.0)
        self._lost = asyncio.Event()
        self._lost_reason = ""
        self._boarded = asyncio.Event()
        self._battery_reported = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._last_write = -1e9
        self._where = f"{family.scheme}:{address}"

    # -- capabilities (drivers.link) ------------------------------------------------------------

    @property
    def leds(self) -> BleBoardLink | None:
        """The board's lights (:meth:`show`), if the family has them."""
        return self if self.family.leds is not None else None

    @property
    def battery(self) -> BatteryGauge | None:
        """The board's battery, if the family reports it (read with :meth:`read_battery`)."""
        return _Battery(self) if self.family.battery_request is not None else None

    async def show(self, squares: Collection[chess.Square]) -> None:
        """Light exactly ``squares`` (board frame); none turns every light off."""
        encode = self.family.leds
        if encode is not None:
            await self.send(encode(squares))

    async def read_battery(self, within: float = 5.0) -> int | None:
        """Ask the board for its battery and wait for the answer (``None``: no answer)."""
        request = self.family.battery_request
        if request is None:
            return None
        self._battery_reported.clear()
        await self.send(request)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                await self._battery_reported.wait()
        return self._info.battery_percent

    # -- the connection -----------------------------------------------------------------------

    async def open(self) -> None:
        """Find, connect, subscribe and identify the board; a ``LinkError`` if it cannot."""
        family = self.family
        try:
            heard = await find(self.address, self._settings, self._settings.ble_scan_timeout)
        except (BleakError, OSError) as exc:
            raise BoardNotFoundError(
                self._where,
                f"cannot scan for Bluetooth LE boards ({exc}); check that Bluetooth is on "
                "(bluetoothctl show) or set [ble] radio for an emulated board",
            ) from exc
        if len(heard) > 1:
            raise self._ambiguous(heard)
        if not heard:
            raise BoardNotFoundError(
                self._where,
                f"no {family.label} board {self.address} in range after "
                f"{self._settings.ble_scan_timeout:g} s; check that it is switched on and not "
                "connected to another app (chessbridge scan lists the boards in range)",
            )
        [found] = heard
        if ADDRESS.match(self.address) is None:
            log.info("%s: the board named %r is %s", self._where, self.address, found.address)
        self._info = merge_info(
            self._info,
            BoardInfo(at=0.0, trademark=identity.text(found.name or ""), rssi=found.rssi),
        )
        client = await self._connect(found)
        self._client = client
        try:
            await self._subscribe(client)
            await self.send(*family.startup)
            try:
                async with asyncio.timeout(self._identify_timeout):
                    await self._boarded.wait()
            except TimeoutError:
                raise NotABoardError(
                    self._where,
                    f"{self.address} connected but sent no board within "
                    f"{self._identify_timeout:g} s (expected a {family.label} board)",
                ) from None
            if self._lost.is_set():
                raise LinkLostError(self._where, self._lost_reason)
        except BaseException:
            await self.close()
            raise

    async def run(self) -> None:
        """Deliver events until the board disconnects (``LinkLostError``) or this is cancelled."""
        poller = asyncio.create_task(self._poll_battery(), name="ble-battery")
        try:
            await self._lost.wait()
            raise LinkLostError(self._where, self._lost_reason)
        finally:
            poller.cancel()
            await self.close()

    async def close(self) -> None:
        """Disconnect (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(BleakError, OSError, TimeoutError):
                async with asyncio.timeout(5.0):
                    await client.disconnect()

    async def send(self, *commands: bytes) -> None:
        """Write commands to the board, in order, cut to size and paced."""
        client = self._client
        if client is None:
            return
        characteristic = client.services.get_characteristic(self.family.write)
        assert characteristic is not None, "checked when connecting"
        size = 512 if self.family.write_response else characteristic.max_write_without_response_size
        loop = asyncio.get_running_loop()
        async with self._write_lock:
            for command in commands:
                wait = self._last_write + self.family.write_gap - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                for start in range(0, len(command), max(1, size)):
                    try:
                        await client.write_gatt_char(
                            characteristic,
                            command[start : start + size],
                            response=self.family.write_response,
                        )
                    except (BleakError, OSError) as exc:
                        self._lose(f"board at {self._where} lost: write failed ({exc})")
                        return
                    self._last_write = loop.time()

    # -- internals ----------------------------------------------------------------------------

    def _ambiguous(self, heard: list[Found]) -> AmbiguousBoardError:
        """The error for a name that several boards in range advertise, strongest first."""
        ranked = sorted(heard, key=lambda f: -1000 if f.rssi is None else -f.rssi)
        boards = ", ".join(
            f"{f.address} ({'signal unknown' if f.rssi is None else f'{f.rssi} dBm'})"
            for f in ranked
        )
        return AmbiguousBoardError(
            self._where,
            f"{len(heard)} boards in range advertise the name {self.address!r}: {boards}; "
            f"give this table's board by its address instead (the strongest signal is likely "
            f"the nearest: --board {self.family.scheme}:{ranked[0].address})",
        )

    async def _connect(self, found: Found) -> BleakClient:
        client_backend, _, extra = bleak_backends(self._settings)
        backoff = Backoff(0.25, 2.0)
        error: BaseException | None = None
        for attempt in range(1, CONNECT_ATTEMPTS + 1):
            client = BleakClient(
                found.device,
                disconnected_callback=self._on_disconnect,
                timeout=self._settings.ble_connect_timeout,
                backend=client_backend,
                **extra,
            )
            try:
                await client.connect()
            except (BleakError, OSError, TimeoutError) as exc:
                error = exc
                log.info("%s: connection attempt %d failed (%s)", self._where, attempt, exc)
                if attempt < CONNECT_ATTEMPTS:
                    await asyncio.sleep(backoff.next())
                continue
            return client
        raise BoardNotFoundError(
            self._where,
            f"cannot connect to {self.family.label} board {self.address} ({error}) after "
            f"{CONNECT_ATTEMPTS} attempts; move it closer, or switch it off and on",
        )

    async def _subscribe(self, client: BleakClient) -> None:
        family = self.family
        services = client.services
        missing = [
            uuid
            for uuid in (*family.notify, family.write)
            if services.get_characteristic(uuid) is None
        ]
        if missing:
            raise NotABoardError(
                self._where,
                f"{self.address} is a Bluetooth LE device but not a {family.label} board "
                f"(it lacks characteristic {missing[0]})",
            )
        for uuid in family.notify:
            await client.start_notify(uuid, self._on_notify)

    def _on_notify(self, sender: BleakGATTCharacteristic, data: bytearray) -> None:
        at = asyncio.get_running_loop().time()
        for event in self._codec.feed(sender.uuid.lower(), bytes(data), at):
            if isinstance(event, BoardInfo):
                self._info = merge_info(self._info, event)
                if event.battery_percent is not None:
                    self._battery_reported.set()
            elif isinstance(event, BoardSnapshot):
                self._boarded.set()
            self._on_event(event)

    def _on_disconnect(self, client: BleakClient) -> None:
        self._lose(f"board at {self._where} disconnected")

    def _lose(self, reason: str) -> None:
        if not self._lost.is_set():
            self._lost_reason = reason
            self._lost.set()

    async def _poll_battery(self) -> None:
        if self.family.battery_request is None:
            return
        while True:
            await self.read_battery()
            await asyncio.sleep(BATTERY_EVERY)


class _Battery:
    """The :class:`~drivers.link.BatteryGauge` of a link whose family reports its battery."""

    def __init__(self, link: BleBoardLink) -> None:
        self._link = link

    async def battery(self) -> int | None:
        return await self._link.read_battery()
