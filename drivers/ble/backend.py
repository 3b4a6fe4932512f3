"""bleak backends that speak to the virtual radio (:mod:`drivers.ble.radio`) instead of BlueZ.

They go through bleak's own seam: ``BleakScanner(..., backend=VirtualRadioScanner,
radio=PATH)`` and ``BleakClient(device, ..., backend=VirtualRadioClient)``. Nothing of bleak is
patched; ``BleakClient`` and ``BleakScanner`` themselves resolve characteristics, wrap callbacks
and filter advertisements as they do on a Raspberry Pi. A device found by the scanner carries
the radio's path in its ``details``, so the client needs no more than the device; a client given
a bare address takes ``radio=PATH`` too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any, cast

from bleak.args import SizedBuffer
from bleak.assigned_numbers import CharacteristicPropertyName
from bleak.backends.characteristic import BleakGATTCharacteristic
from bleak.backends.client import BaseBleakClient, NotifyCallback
from bleak.backends.descriptor import BleakGATTDescriptor
from bleak.backends.device import BLEDevice
from bleak.backends.scanner import (
    AdvertisementData,
    AdvertisementDataCallback,
    BaseBleakScanner,
)
from bleak.backends.service import BleakGATTService, BleakGATTServiceCollection
from bleak.exc import BleakDeviceNotFoundError, BleakError

from drivers.ble.radio import MAX_LINE

ATT_HEADER = 3
"""Bytes of an ATT notification or write header: a value carries at most ``mtu - 3`` bytes."""


class _Line:
    """One connection to the radio: requests with ids, replies matched, the rest to a handler."""

    def __init__(self, path: str, on_message: Callable[[dict[str, Any]], None]) -> None:
        self.path = path
        self._on_message = on_message
        self._on_closed: Callable[[], None] = lambda: None
        self._writer: asyncio.StreamWriter | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)

    async def open(self, within: float, on_closed: Callable[[], None]) -> None:
        try:
            reader, self._writer = await asyncio.wait_for(
                asyncio.open_unix_connection(self.path, limit=MAX_LINE), within
            )
        except (OSError, TimeoutError) as exc:
            raise BleakError(
                f"virtual radio at {self.path} not reachable ({str(exc) or type(exc).__name__}); "
                "is `chessbridge emulate` running with that radio?"
            ) from exc
        self._on_closed = on_closed
        self._reader_task = asyncio.create_task(self._read(reader), name="virtual-radio")

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    async def request(self, op: str, *, wait: bool = True, **fields: Any) -> dict[str, Any]:
        writer = self._writer
        if writer is None:
            raise BleakError("not connected")
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        if wait:
            self._pending[ident] = future
        message = {"op": op, "id": ident, **fields}
        try:
            writer.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            await writer.drain()
        except (OSError, RuntimeError) as exc:
            self._pending.pop(ident, None)
            raise BleakError(f"virtual radio connection lost: {exc}") from exc
        if not wait:
            return {}
        reply = await future
        error = reply.get("error")
        if error is not None:
            raise BleakError(str(error))
        return reply

    async def close(self) -> None:
        writer, self._writer = self._writer, None
        task, self._reader_task = self._reader_task, None
        if task is not None:
            task.cancel()
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
        self._fail_pending("disconnected")

    async def _read(self, reader: asyncio.StreamReader) -> None:
        try:
            while True:
                try:
                    line = await reader.readline()
                except (OSError, ValueError, asyncio.LimitOverrunError):
                    break
                if not line:
                    break
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                ident = message.get("id")
                future = self._pending.pop(ident, None) if isinstance(ident, int) else None
                if future is not None:
                    if not future.done():
                        future.set_result(message)
                else:
                    self._on_message(message)
        finally:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
                self._fail_pending("the virtual radio closed the connection")
                self._on_closed()

    def _fail_pending(self, reason: str) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(BleakError(reason))


def _radio_of(address_or_ble_device: BLEDevice | str, radio: str | None) -> str:
    if radio is not None:
        return radio
    if isinstance(address_or_ble_device, BLEDevice):
        details = address_or_ble_device.details
        if isinstance(details, dict) and isinstance(details.get("radio"), str):
            return cast("str", details["radio"])
    raise BleakError("the virtual radio backend needs radio=PATH or a device found on that radio")


class VirtualRadioClient(BaseBleakClient):
    """A GATT client on the virtual radio (a ``BaseBleakClient`` for ``BleakClient(backend=)``)."""

    def __init__(
        self,
        address_or_ble_device: BLEDevice | str,
        *,
        disconnected_callback: Callable[[], None] | None,
        timeout: float,
        services: set[str] | None = None,
        radio: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            address_or_ble_device, disconnected_callback=disconnected_callback, timeout=timeout
        )
        self._line = _Line(_radio_of(address_or_ble_device, radio), self._on_message)
        self._name = (
            address_or_ble_device.name
            if isinstance(address_or_ble_device, BLEDevice) and address_or_ble_device.name
            else self.address
        )
        self._mtu = 23
        self._connected = False
        self._closing = False
        self._callbacks: dict[int, NotifyCallback] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def mtu_size(self) -> int:
        return self._mtu

    @property
    def is_connected(self) -> bool:
        return self._connected

    async def connect(self, pair: bool, **kwargs: Any) -> None:
        if self._connected:
            return
        self._closing = False
        await self._line.open(self._timeout, self._on_closed)
        try:
            async with asyncio.timeout(self._timeout):
                try:
                    reply = await self._line.request("connect", address=self.address)
                except BleakError as exc:
                    if "in range" in str(exc):
                        raise BleakDeviceNotFoundError(self.address, str(exc)) from exc
                    raise
                self._mtu = int(reply.get("mtu", 23))
                self._name = str(reply.get("name") or self._name)
                self.services = self._collection((await self._line.request("services"))["services"])
        except BaseException:
            self._closing = True
            await self._line.close()
            raise
        self._connected = True

    async def disconnect(self) -> None:
        self._closing = True
        if self._line.is_open:
            with contextlib.suppress(BleakError, TimeoutError):
                async with asyncio.timeout(2.0):
                    await self._line.request("disconnect")
        await self._line.close()
        self._connected = False
        self._callbacks.clear()

    async def pair(self, *args: Any, **kwargs: Any) -> None:
        """Boards on the virtual radio need no pairing."""

    async def unpair(self) -> None:
        """Boards on the virtual radio need no pairing."""

    async def read_gatt_char(
        self, characteristic: BleakGATTCharacteristic, *, use_cached: bool = False, **kwargs: Any
    ) -> bytearray:
        reply = await self._line.request("read", handle=characteristic.handle)
        return bytearray.fromhex(str(reply.get("value", "")))

    async def read_gatt_descriptor(
        self, descriptor: BleakGATTDescriptor, *, use_cached: bool = False, **kwargs: Any
    ) -> bytearray:
        raise BleakError("the virtual radio has no descriptors")

    async def write_gatt_char(
        self, characteristic: BleakGATTCharacteristic, data: SizedBuffer, response: bool
    ) -> None:
        value = bytes(memoryview(data))
        await self._line.request(
            "write",
            wait=response,
            handle=characteristic.handle,
            value=value.hex(),
            response=response,
        )

    async def write_gatt_descriptor(
        self, descriptor: BleakGATTDescriptor, data: SizedBuffer
    ) -> None:
        raise BleakError("the virtual radio has no descriptors")

    async def start_notify(
        self, characteristic: BleakGATTCharacteristic, callback: NotifyCallback, **kwargs: Any
    ) -> None:
        self._callbacks[characteristic.handle] = callback
        await self._line.request("subscribe", handle=characteristic.handle)

    async def stop_notify(self, characteristic: BleakGATTCharacteristic) -> None:
        self._callbacks.pop(characteristic.handle, None)
        await self._line.request("unsubscribe", handle=characteristic.handle)

    # -- from the radio -----------------------------------------------------------------------

    def _on_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "notify":
            callback = self._callbacks.get(message.get("handle"))  # type: ignore[arg-type]
            if callback is not None:
                with contextlib.suppress(ValueError):
                    callback(bytearray.fromhex(str(message.get("value", ""))))
        # "disconnect" (the board went away) needs nothing: the radio hangs up right after it,
        # and the end of the line calls the disconnected callback.

    def _on_closed(self) -> None:
        was_connected, self._connected = self._connected, False
        self._callbacks.clear()
        if was_connected and not self._closing and self._disconnected_callback is not None:
            self._disconnected_callback()

    def _collection(self, raw: list[dict[str, Any]]) -> BleakGATTServiceCollection:
        collection = BleakGATTServiceCollection()
        for service_raw in raw:
            service = BleakGATTService(service_raw, int(service_raw["handle"]), service_raw["uuid"])
            collection.add_service(service)
            for char_raw in service_raw["characteristics"]:
                properties = cast("list[CharacteristicPropertyName]", list(char_raw["properties"]))
                collection.add_characteristic(
                    BleakGATTCharacteristic(
                        char_raw,
                        int(char_raw["handle"]),
                        char_raw["uuid"],
                        properties,
                        lambda: self._mtu - ATT_HEADER,
                        service,
                    )
                )
        return collection


class VirtualRadioScanner(BaseBleakScanner):
    """A scanner on the virtual radio (a ``BaseBleakScanner`` for ``BleakScanner(backend=)``)."""

    def __init__(
        self,
        detection_callback: AdvertisementDataCallback | None,
        service_uuids: list[str] | None,
        scanning_mode: str = "active",
        *,
        radio: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(detection_callback, service_uuids)
        if radio is None:
            raise BleakError("the virtual radio scanner needs radio=PATH")
        self._line = _Line(radio, self._on_message)

    async def start(self) -> None:
        self.seen_devices = {}
        await self._line.open(5.0, lambda: None)
        try:
            await self._line.request("scan")
        except BaseException:
            await self._line.close()
            raise

    async def stop(self) -> None:
        await self._line.close()

    def _on_message(self, message: dict[str, Any]) -> None:
        if message.get("op") != "advertise":
            return
        try:
            address = str(message["address"])
            name = message.get("name")
            advertisement = AdvertisementData(
                local_name=None if name is None else str(name),
                manufacturer_data={
                    int(key): bytes.fromhex(value)
                    for key, value in dict(message.get("manufacturer_data") or {}).items()
                },
                service_data={},
                service_uuids=[str(uuid).lower() for uuid in message.get("services") or ()],
                tx_power=None,
                rssi=int(message.get("rssi", -127)),
                platform_data=(message,),
            )
        except (KeyError, ValueError, TypeError):
            return
        if not self.is_allowed_uuid(advertisement.service_uuids):
            return  # as bleak's own backends do: filtered out before it is seen
        device = self.create_or_update_device(
            address, address, advertisement.local_name, {"radio": self._line.path}, advertisement
        )
        self.call_detection_callbacks(device, advertisement)
