"""bleak's own BleakScanner and BleakClient, through their ``backend=`` seam, on the virtual radio.

The board is the Chessnut emulator; expected bytes are literals from board-protocols.md §3. A
last test speaks the radio's JSON lines by hand, as docs/virtual-radio.md describes them, so
the documented format is checked apart from the backends that implement it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from bleak import BleakClient, BleakScanner
from bleak.backends.characteristic import BleakGATTCharacteristic
from bleak.backends.device import BLEDevice
from bleak.exc import BleakError

from drivers.ble.backend import VirtualRadioClient, VirtualRadioScanner
from drivers.ble.radio import Advertisement, Central, Characteristic, Service, VirtualRadio
from drivers.chessnut.emulator import ChessnutEmulator

FEN_NOTIFY = "1b7e8262-2877-41c3-b46e-cf057c562023"
OP_WRITE = "1b7e8272-2877-41c3-b46e-cf057c562023"
OP_NOTIFY = "1b7e8273-2877-41c3-b46e-cf057c562023"
NUS = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"
# §3: the start position as the board reports it.
START = bytes.fromhex("0124 5823318544444444") + bytes(16) + bytes.fromhex("77777777A6C99B6A")
DEADLINE = 5.0


class Beacon:
    """A plain peripheral advertising one service, with nothing behind it."""

    address = "AA:00:00:00:00:02"
    advertisement = Advertisement(name="Thermometer", services=(NUS,), rssi=-80)
    services: Sequence[Service] = (Service(NUS, (Characteristic(NUS, ("read",)),)),)

    def on_connect(self, central: Central) -> None: ...
    def on_disconnect(self) -> None: ...
    def on_write(self, uuid: str, value: bytes) -> None: ...
    def on_read(self, uuid: str) -> bytes:
        return b"21.5"


@pytest.fixture
async def chessnut() -> AsyncIterator[ChessnutEmulator]:
    async with ChessnutEmulator(battery=64) as emu:
        yield emu


async def find(radio: str, name: str, **kwargs: Any) -> BLEDevice:
    async with (
        asyncio.timeout(DEADLINE),
        BleakScanner(backend=VirtualRadioScanner, radio=radio, **kwargs) as scanner,
    ):
        async for device, adv in scanner.advertisement_data():
            if adv.local_name == name:
                return device
    raise AssertionError("unreachable")


async def test_the_scanner_hears_the_board_advertise(chessnut: ChessnutEmulator) -> None:
    async with (
        asyncio.timeout(DEADLINE),
        BleakScanner(backend=VirtualRadioScanner, radio=chessnut.radio.path) as scanner,
    ):
        device, adv = await anext(scanner.advertisement_data())
    assert device.address == chessnut.address
    assert adv.local_name == "Chessnut Air"
    assert adv.rssi == -58
    assert 0x4450 in adv.manufacturer_data
    assert scanner.backend_id == "VirtualRadioScanner"


async def test_the_scanner_filters_by_service_as_bleak_does(chessnut: ChessnutEmulator) -> None:
    chessnut.radio.add(Beacon())
    device = await find(chessnut.radio.path, "Thermometer", service_uuids=[NUS])
    assert device.address == Beacon.address
    async with BleakScanner(
        backend=VirtualRadioScanner, radio=chessnut.radio.path, service_uuids=[NUS]
    ) as scanner:
        await asyncio.sleep(0.6)  # a few advertising intervals
    assert [d.address for d in scanner.discovered_devices] == [Beacon.address]


async def test_a_client_gets_the_position_in_mtu_sized_notifications(
    chessnut: ChessnutEmulator,
) -> None:
    device = await find(chessnut.radio.path, "Chessnut Air")
    received: list[bytes] = []
    changed = asyncio.Event()

    def on_notify(sender: BleakGATTCharacteristic, data: bytearray) -> None:
        assert sender.uuid == FEN_NOTIFY
        received.append(bytes(data))
        changed.set()

    async with BleakClient(device, backend=VirtualRadioClient, timeout=DEADLINE) as client:
        assert client.is_connected
        assert client.mtu_size == 23
        assert client.services.get_characteristic(OP_WRITE) is not None
        await client.start_notify(FEN_NOTIFY, on_notify)
        await client.write_gatt_char(OP_WRITE, bytes.fromhex("210100"), response=True)
        async with asyncio.timeout(DEADLINE):
            while len(b"".join(received)) < 38:
                changed.clear()
                await changed.wait()
        assert all(len(chunk) <= 20 for chunk in received)
        assert b"".join(received)[:34] == START
        received.clear()
        await chessnut.lift("e2")
        async with asyncio.timeout(DEADLINE):
            while len(b"".join(received)) < 38:
                changed.clear()
                await changed.wait()
        after = b"".join(received)
        # e2: rank 2 is bytes 26..29, e2 is the high nibble of byte 27 (h2 g2 | f2 e2 | ...).
        assert after[2 + 25] == 0x07  # f2 pawn, e2 empty
        assert after[2 + 24 :][:1] == b"\x77"
    assert not client.is_connected


async def test_a_client_writes_commands_and_reads_answers(chessnut: ChessnutEmulator) -> None:
    device = await find(chessnut.radio.path, "Chessnut Air")
    answers: asyncio.Queue[bytes] = asyncio.Queue()
    async with BleakClient(device, backend=VirtualRadioClient, timeout=DEADLINE) as client:
        await client.start_notify(OP_NOTIFY, lambda _, data: answers.put_nowait(bytes(data)))
        await client.write_gatt_char(OP_WRITE, bytes.fromhex("290100"), response=True)
        assert await asyncio.wait_for(answers.get(), DEADLINE) == bytes.fromhex("2A024000")
        await client.write_gatt_char(
            OP_WRITE, bytes.fromhex("0A08 0000 0000 0800 0800"), response=False
        )
        async with asyncio.timeout(DEADLINE):
            while chessnut.lit != {"e2", "e4"}:  # noqa: ASYNC110  # polls emulator state
                await asyncio.sleep(0.01)
        with pytest.raises(BleakError, match="does not allow"):
            await client.write_gatt_char(FEN_NOTIFY, b"\x00", response=True)


async def test_the_disconnected_callback_fires_when_the_board_is_switched_off(
    chessnut: ChessnutEmulator,
) -> None:
    device = await find(chessnut.radio.path, "Chessnut Air")
    gone = asyncio.Event()
    client = BleakClient(
        device, disconnected_callback=lambda _: gone.set(), backend=VirtualRadioClient
    )
    await client.connect()
    assert chessnut.connected
    await chessnut.power_off()
    await asyncio.wait_for(gone.wait(), DEADLINE)
    assert not up(client)
    with pytest.raises(BleakError, match="in range"):
        await client.connect()  # switched off: not in range
    await chessnut.power_on()
    gone.clear()
    await client.connect()
    assert up(client)
    await client.disconnect()  # asked for: no callback
    assert not up(client)
    assert not gone.is_set()


def up(client: BleakClient) -> bool:
    return client.is_connected


async def test_a_board_takes_one_central_at_a_time(chessnut: ChessnutEmulator) -> None:
    device = await find(chessnut.radio.path, "Chessnut Air")
    async with BleakClient(device, backend=VirtualRadioClient):
        second = BleakClient(
            chessnut.address, backend=VirtualRadioClient, radio=chessnut.radio.path
        )
        with pytest.raises(BleakError, match="another central"):
            await second.connect()


async def test_an_absent_radio_is_a_bleak_error_saying_what_to_do() -> None:
    client = BleakClient(
        "EC:1B:00:00:00:09", backend=VirtualRadioClient, radio="/nonexistent/radio"
    )
    with pytest.raises(BleakError, match="chessbridge emulate"):
        await client.connect()


class Line:
    """A central written by hand from docs/virtual-radio.md."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    def send(self, **message: Any) -> None:
        self.writer.write(json.dumps(message).encode() + b"\n")

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()

    async def next(self, op: str) -> dict[str, Any]:
        async with asyncio.timeout(DEADLINE):
            while True:
                message = json.loads(await self.reader.readline())
                assert isinstance(message, dict)
                if message["op"] == op:
                    return message


async def test_the_documented_json_lines_drive_the_radio(chessnut: ChessnutEmulator) -> None:
    radio: VirtualRadio = chessnut.radio
    scanner = Line(*await asyncio.open_unix_connection(radio.path))
    scanner.send(op="scan", id=1)
    assert await scanner.next("scan") == {"op": "scan", "id": 1}
    advert = await scanner.next("advertise")
    assert advert["address"] == chessnut.address
    assert advert["name"] == "Chessnut Air"
    assert advert["manufacturer_data"] == {str(0x4450): "0100"}
    await scanner.close()

    line = Line(*await asyncio.open_unix_connection(radio.path))
    line.send(op="connect", id=1, address=chessnut.address.lower())
    connected = await line.next("connect")
    assert connected == {
        "op": "connect",
        "id": 1,
        "address": chessnut.address,
        "name": "Chessnut Air",
        "mtu": 23,
    }
    line.send(op="services", id=2)
    services = (await line.next("services"))["services"]
    handles = {c["uuid"]: c["handle"] for s in services for c in s["characteristics"]}
    assert [s["uuid"] for s in services][:2] == [
        "1b7e8261-2877-41c3-b46e-cf057c562023",
        "1b7e8271-2877-41c3-b46e-cf057c562023",
    ]
    line.send(op="subscribe", id=3, handle=handles[OP_NOTIFY])
    assert await line.next("subscribe") == {"op": "subscribe", "id": 3}
    line.send(op="write", id=4, handle=handles[OP_WRITE], value="290100", response=True)
    assert await line.next("write") == {"op": "write", "id": 4}
    notify = await line.next("notify")
    assert notify == {"op": "notify", "handle": handles[OP_NOTIFY], "value": "2a024000"}
    line.send(op="read", id=5, handle=handles[OP_WRITE])
    assert "does not allow read" in (await line.next("read"))["error"]
    line.send(op="teleport", id=6)
    assert "unknown op" in (await line.next("teleport"))["error"]
    await chessnut.power_off()
    assert (await line.next("disconnect"))["reason"] == "the board was switched off"
    assert await line.reader.readline() == b""  # and the radio hangs up
    await line.close()
