"""The generic Bluetooth LE link (drivers.ble.link) on the virtual radio, through real bleak.

The Chessnut emulator plays the board; a small peripheral of the tests' own stands in for
devices that are not boards, and for a family whose writes must be cut to the MTU.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Sequence

import chess
import pytest

from drivers import create_link, parse_board_uri
from drivers.ble.link import BleBoardLink, BleFamily
from drivers.ble.radio import Advertisement, Central, Characteristic, Service, VirtualRadio
from drivers.chessnut.emulator import ChessnutEmulator
from drivers.errors import BoardNotFoundError, LinkLostError, NotABoardError
from drivers.events import (
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    SquareEmptied,
    SquareOccupied,
)
from drivers.link import BoardLink, LinkSettings
from tests import emulated

DEADLINE = 5.0
RX = "6e400002-b5a3-f393-e0a9-e50e24dcca9e"
TX = "6e400003-b5a3-f393-e0a9-e50e24dcca9e"
NUS = "6e400001-b5a3-f393-e0a9-e50e24dcca9e"


class Echo:
    """A Nordic-UART device: what is written to RX is recorded, ``hello`` makes it answer."""

    def __init__(self, address: str = "AA:00:00:00:00:03", *, answers: bool = True) -> None:
        self.address = address
        self.advertisement = Advertisement(name="Echo", services=(NUS,))
        self.services: Sequence[Service] = (
            Service(
                NUS,
                (
                    Characteristic(RX, ("write-without-response",)),
                    Characteristic(TX, ("notify",)),
                ),
            ),
        )
        self.writes: list[bytes] = []
        self.answers = answers
        self.central: Central | None = None

    def on_connect(self, central: Central) -> None:
        self.central = central

    def on_disconnect(self) -> None:
        self.central = None

    def on_write(self, uuid: str, value: bytes) -> None:
        self.writes.append(value)
        if value == b"hello" and self.answers and self.central is not None:
            self.central.notify(TX, b"board")

    def on_read(self, uuid: str) -> bytes:
        return b""


class EchoCodec:
    """Any notification is the whole (empty) board."""

    def feed(self, source: str, data: bytes, at: float) -> list[BoardEvent]:
        return [BoardSnapshot(squares=(None,) * 64, at=at)] if source == TX else []


ECHO = BleFamily(
    scheme="echo",
    label="Echo",
    service=NUS,
    names=("Echo",),
    notify=(TX,),
    write=RX,
    codec=EchoCodec,
    startup=(b"hello",),
    write_gap=0.01,
)


@pytest.fixture
async def chessnut() -> AsyncIterator[ChessnutEmulator]:
    async with ChessnutEmulator(battery=64) as emu:
        yield emu


def settings(radio: VirtualRadio, scan: float = 3.0) -> LinkSettings:
    return LinkSettings(ble_radio=radio.path, ble_scan_timeout=scan, ble_connect_timeout=3.0)


def chessnut_link(
    emu: ChessnutEmulator, events: list[BoardEvent], address: str | None = None
) -> BoardLink:
    uri = parse_board_uri(f"chessnut:{address or emu.address}")
    return create_link(uri, events.append, settings(emu.radio))


until = functools.partial(emulated.until, within=DEADLINE, every=0.01)


async def test_open_finds_connects_and_identifies_the_board(chessnut: ChessnutEmulator) -> None:
    events: list[BoardEvent] = []
    link = chessnut_link(chessnut, events)
    await link.open()
    try:
        assert link.info.trademark == "Chessnut Air"
        assert link.info.rssi == -58
        assert isinstance(events[0], BoardSnapshot)
        assert events[0].squares == tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)
        assert (link.memory, link.clock) == (None, None)
        assert link.leds is not None
        assert link.battery is not None
        assert chessnut.written[0] == bytes.fromhex("210100")  # real-time reporting on
    finally:
        await link.close()
    assert not chessnut.connected


async def test_a_board_is_also_found_by_its_advertised_name(chessnut: ChessnutEmulator) -> None:
    events: list[BoardEvent] = []
    link = chessnut_link(chessnut, events, address="Chessnut Air")
    await link.open()
    await link.close()
    assert isinstance(events[0], BoardSnapshot)


async def test_run_delivers_lifts_and_places_and_answers_battery_and_lights(
    chessnut: ChessnutEmulator,
) -> None:
    events: list[BoardEvent] = []
    link = chessnut_link(chessnut, events)
    await link.open()
    runner = asyncio.create_task(link.run())
    try:
        await chessnut.lift("g1")
        await chessnut.place("f3", "N")
        await until(lambda: len([e for e in events if not isinstance(e, BoardInfo)]) >= 3)
        moves = [e for e in events if isinstance(e, SquareEmptied | SquareOccupied)]
        assert moves == [
            SquareEmptied(square=chess.G1, at=moves[0].at),
            SquareOccupied(square=chess.F3, piece=chess.Piece.from_symbol("N"), at=moves[1].at),
        ]
        gauge = link.battery
        assert gauge is not None
        assert await gauge.battery() == 64
        assert link.info.battery_percent == 64
        leds = link.leds
        assert leds is not None
        await leds.show([chess.G1, chess.F3])
        await until(lambda: chessnut.lit == {"g1", "f3"})
        await leds.show([])
        await until(lambda: chessnut.lit == frozenset())
    finally:
        runner.cancel()
        with pytest.raises(asyncio.CancelledError):
            await runner


async def test_a_board_switched_off_ends_run_with_link_lost(chessnut: ChessnutEmulator) -> None:
    link = chessnut_link(chessnut, [])
    await link.open()
    runner = asyncio.create_task(link.run())
    await chessnut.power_off()
    with pytest.raises(LinkLostError, match=f"board at chessnut:{chessnut.address}"):
        await asyncio.wait_for(runner, DEADLINE)


async def test_a_board_out_of_range_is_not_found(chessnut: ChessnutEmulator) -> None:
    await chessnut.power_off()
    link = create_link(
        parse_board_uri(f"chessnut:{chessnut.address}"),
        lambda _: None,
        settings(chessnut.radio, 0.5),
    )
    with pytest.raises(BoardNotFoundError, match="not connected to another app"):
        await link.open()


async def test_a_board_taken_by_another_app_cannot_be_connected(
    chessnut: ChessnutEmulator,
) -> None:
    first = chessnut_link(chessnut, [])
    await first.open()
    try:
        # It advertises no more while connected: the second link cannot even find it.
        second = create_link(
            parse_board_uri(f"chessnut:{chessnut.address}"),
            lambda _: None,
            settings(chessnut.radio, 0.5),
        )
        with pytest.raises(BoardNotFoundError):
            await second.open()
    finally:
        await first.close()


async def test_another_device_at_the_address_is_not_a_board(chessnut: ChessnutEmulator) -> None:
    chessnut.radio.add(Echo())
    link = create_link(
        parse_board_uri("chessnut:AA:00:00:00:00:03"), lambda _: None, settings(chessnut.radio)
    )
    with pytest.raises(NotABoardError, match="lacks characteristic"):
        await link.open()
    assert not chessnut.radio.is_connected("AA:00:00:00:00:03")


async def test_a_device_that_never_reports_a_board_is_not_a_board() -> None:
    async with VirtualRadio() as radio:
        radio.add(Echo(answers=False))
        link = BleBoardLink(ECHO, "Echo", lambda _: None, settings(radio), identify_timeout=0.5)
        with pytest.raises(NotABoardError, match="sent no board"):
            await link.open()
        assert not radio.is_connected("AA:00:00:00:00:03")


async def test_writes_are_cut_to_the_mtu_and_kept_in_order() -> None:
    async with VirtualRadio() as radio:
        echo = Echo()
        radio.add(echo)
        link = BleBoardLink(ECHO, "AA:00:00:00:00:03", lambda _: None, settings(radio))
        await link.open()
        try:
            long = bytes(range(50))
            await link.send(long, b"end")
            await until(lambda: echo.writes[-1:] == [b"end"])
            assert echo.writes[0] == b"hello"
            assert [len(w) for w in echo.writes[1:-1]] == [20, 20, 10]  # MTU 23: 20 a write
            assert b"".join(echo.writes[1:-1]) == long
        finally:
            await link.close()


async def test_a_pegasus_reports_where_pieces_stand_lights_and_battery() -> None:
    from drivers.events import UNKNOWN
    from drivers.pegasus.emulator import PegasusEmulator

    async with PegasusEmulator(serial="24680") as emu:
        events: list[BoardEvent] = []
        link = create_link(
            parse_board_uri(f"pegasus:{emu.address}"), events.append, settings(emu.radio)
        )
        await link.open()
        runner = asyncio.create_task(link.run())
        try:
            snapshot = next(e for e in events if isinstance(e, BoardSnapshot))
            assert snapshot.squares == tuple(
                UNKNOWN if chess.Board().piece_at(sq) else None for sq in chess.SQUARES
            )
            assert link.info.version == "1.02"
            assert link.info.trademark == "DGT Pegasus"  # its model, not the four lines
            assert link.info.serial == "24680"  # read out of the trademark
            assert emu.received[:2] == [b"\x40", bytes.fromhex("60020000")]  # reset, lights off
            await emu.lift("e2")
            await emu.place("e4", "P")
            await until(lambda: any(isinstance(e, SquareOccupied) for e in events))
            changes = [e for e in events if isinstance(e, SquareEmptied | SquareOccupied)]
            assert changes == [
                SquareEmptied(square=chess.E2, at=changes[0].at),
                SquareOccupied(square=chess.E4, piece=UNKNOWN, at=changes[1].at),
            ]
            gauge, leds = link.battery, link.leds
            assert gauge is not None
            assert leds is not None
            assert await gauge.battery() == 72
            await leds.show([chess.E2, chess.E4])
            await until(lambda: emu.lit == {"e2", "e4"})
        finally:
            runner.cancel()
            with pytest.raises(asyncio.CancelledError):
                await runner


async def test_a_millennium_board_over_bluetooth_le() -> None:
    from drivers.millennium_ble.emulator import MillenniumBleEmulator

    async with MillenniumBleEmulator() as emu:
        events: list[BoardEvent] = []
        link = create_link(
            parse_board_uri(f"millennium-ble:{emu.address}"), events.append, settings(emu.radio)
        )
        await link.open()
        runner = asyncio.create_task(link.run())
        try:
            snapshot = next(e for e in events if isinstance(e, BoardSnapshot))
            assert snapshot.squares == tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)
            assert link.info.version == "1.04"
            assert link.battery is None
            # Set up as the codec asks: reports on every change (E2ROM 02 = 3).
            assert emu.e2rom[0x02] == 3
            await emu.lift("b1")
            await emu.place("c3", "N")
            await until(lambda: any(isinstance(e, SquareOccupied) for e in events))
            changes = [e for e in events if isinstance(e, SquareEmptied | SquareOccupied)]
            assert changes == [
                SquareEmptied(square=chess.B1, at=changes[0].at),
                SquareOccupied(
                    square=chess.C3, piece=chess.Piece.from_symbol("N"), at=changes[1].at
                ),
            ]
            leds = link.leds
            assert leds is not None
            await leds.show([chess.B1, chess.C3])  # 167 bytes: cut to the MTU
            await until(lambda: emu.lit == {"b1", "c3"})
            await leds.show([])
            await until(lambda: emu.lit == frozenset())
            assert [t[0] for t in emu.received] == ["V", "W", "W", "S", "L", "X"]
        finally:
            runner.cancel()
            with pytest.raises(asyncio.CancelledError):
                await runner
