"""The DGT emulator seen from a host: plain pyserial on its pty, bytes decoded by hand.

Expected bytes are literals from board-protocols.md (§1.5-§1.13 tables, §8 capture), never built
with the project's codec. All waits poll with generous deadlines; nothing asserts a duration.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Callable

import pytest
import serial

from drivers.dgt.emulator import DgtEmulator, serve_forever
from tests.emulated import DEADLINE, SerialHost, until

pytestmark = pytest.mark.pty

FAST = 50.0  # clock speed: a displayed second every 20 ms

# §8: first message of arnsholt/dgtdriver 1.inbytes, the start position.
START_DUMP = (
    bytes.fromhex("86 00 43 08 09 0A 0C 0B 0A 09 08")
    + bytes([0x07] * 8)
    + bytes(32)
    + bytes([0x01] * 8)
    + bytes.fromhex("02 03 04 06 05 04 03 02")
)


class Host(SerialHost):
    """A DGT host: bytes and whole messages (§1.4)."""

    def send(self, data: bytes) -> None:
        self.port.write(data)

    async def raw(self, count: int) -> bytes:
        async with asyncio.timeout(DEADLINE):
            while len(self.buffer) < count:
                await self.fill()
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data

    async def frame(self) -> bytes:
        """Next whole message (§1.4: MSB-set id, 14-bit total length)."""
        async with asyncio.timeout(DEADLINE):
            while True:
                if len(self.buffer) >= 3:
                    assert self.buffer[0] & 0x80, self.buffer.hex(" ")
                    length = self.buffer[1] << 7 | self.buffer[2]
                    if len(self.buffer) >= length:
                        data = bytes(self.buffer[:length])
                        del self.buffer[:length]
                        return data
                await self.fill()

    async def frame_where(self, wanted: Callable[[bytes], bool]) -> bytes:
        while not wanted(frame := await self.frame()):
            pass
        return frame

    async def frame_with_id(self, message_id: int) -> bytes:
        return await self.frame_where(lambda f: f[0] == message_id)

    async def times_where(self, wanted: Callable[[Times], bool]) -> Times:
        """Next BWTIME clock-times message (acks skipped) satisfying ``wanted``."""
        frame = await self.frame_where(
            lambda f: f[0] == 0x8D and not is_ack(f) and wanted(times_of(f))
        )
        return times_of(frame)


async def read_until_error(host: Host) -> None:
    async with asyncio.timeout(DEADLINE):
        while True:
            host.port.read(1)
            await asyncio.sleep(0.002)


async def exists(path: str) -> bool:
    return await asyncio.to_thread(os.path.exists, path)


async def switch_mode(emu: DgtEmulator, host: Host, command: int, mode: str) -> None:
    host.send(bytes([command]))
    await until(lambda: emu.mode == mode)


# --- §1.7 decoding by hand -----------------------------------------------------------------------

Times = tuple[int, int, int, int, int]  # left s, right s, status, right hours byte, left hours byte


def bcd(value: int) -> int:
    return (value >> 4) * 10 + (value & 0x0F)


def times_of(frame: bytes) -> Times:
    def seconds(hours: int, minutes: int, secs: int) -> int:
        return (hours & 0x0F) * 3600 + bcd(minutes) * 60 + bcd(secs)

    right = seconds(frame[3], frame[4], frame[5])
    left = seconds(frame[6], frame[7], frame[8])
    return left, right, frame[9], frame[3], frame[6]


def is_ack(frame: bytes) -> bool:
    return (frame[3] & 0x0F) == 0x0A or (frame[6] & 0x0F) == 0x0A


def ack_of(frame: bytes) -> tuple[int, int, int, int]:
    b3, b4, b5, b6, b7, b8 = frame[3:9]
    return (
        (b4 & 0x7F) | ((b6 << 3) & 0x80),
        (b5 & 0x7F) | ((b6 << 2) & 0x80),
        (b7 & 0x7F) | ((b3 << 3) & 0x80),
        (b8 & 0x7F) | ((b3 << 2) & 0x80),
    )


def ee_tags(payload: bytes) -> list[bytes]:
    """§1.11: split an EE_MOVES payload into tags."""
    tags: list[bytes] = []
    i = 0
    while i < len(payload):
        first = payload[i]
        if 0x40 <= first <= 0x5F:
            size = 2
        elif 0x60 <= first <= 0x69 or 0x70 <= first <= 0x79:
            size = 3
        else:
            size = 1
        tags.append(payload[i : i + size])
        i += size
    return tags


# --- tests ----------------------------------------------------------------------------------------


async def test_power_up_in_bus_mode_is_silent() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        emu.set_clock(10, 10, running="left")
        with Host(emu.path) as host:
            await emu.lift("e2")
            await emu.place("e4", "P")
            await emu.press("left")
            assert await host.quiet(0.2) == b""
            assert emu.mode == "bus"
            # §1.12 BUS_PING (checksum 0x87 % 128) is not answered, then VERSION leaves bus mode.
            host.send(bytes.fromhex("87 00 00 07 4D"))
            assert await host.frame() == bytes.fromhex("93 00 05 01 07")
            assert emu.mode == "idle"
            assert emu.received == [bytes.fromhex("87 00 00 07"), b"\x4d"]


async def test_board_dump_of_start_position() -> None:
    async with DgtEmulator() as emu:
        with Host(emu.path) as host:
            host.send(b"\x42")
            assert await host.frame() == START_DUMP


async def test_update_nice_reports_every_square_change() -> None:
    async with DgtEmulator() as emu:
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            await emu.lift("e2")
            await emu.place("e4", "P")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 34 00")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 24 01")
            # d7 lifted, then put on e4: the board reports the new piece without an empty first.
            assert await emu.lift("d7") == "p"
            await emu.place("e4", "p")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 0B 00")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 24 07")
            assert await emu.lift("e5") is None
            assert emu.position["e4"] == "p"
            assert "d7" not in emu.position
            assert "e2" not in emu.position


async def test_idle_sends_nothing_and_update_board_sends_no_clock() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        emu.set_clock(600, 600, running="left")
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x40, "idle")
            await emu.lift("e2")
            host.send(b"\x42")  # the dump must be the very next message
            dump = await host.frame()
            assert dump[0] == 0x86
            assert dump[3 + 52] == 0x00
            await switch_mode(emu, host, 0x44, "update_board")
            await emu.lift("d2")
            assert await host.frame() == bytes.fromhex("8E 00 05 33 00")


async def test_clock_counts_down_and_lever_press_flips_running_side() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        emu.set_clock(60, 90, running="left")
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            left, right, status, _, _ = await host.times_where(lambda t: t[0] < 59)
            assert right == 90
            assert status & 0x01  # running
            assert not status & 0x02  # left lever high
            assert not status & 0x20  # clock connected
            await emu.press("left")
            left, right, status, _, _ = await host.times_where(lambda t: t[1] < 89)
            assert status & 0x03 == 0x03  # running, right lever high
            frozen = left
            left, right, _, _, _ = await host.times_where(lambda t: t[1] < 80)
            assert left == frozen
            await emu.press("left")  # already down: nothing changes
            assert emu.clock_running == "right"
            await emu.press("right")
            left, _, status, _, _ = await host.times_where(lambda t: t[0] < frozen)
            assert status & 0x03 == 0x01


async def test_paused_clock_starts_on_first_press_and_adds_increment() -> None:
    async with DgtEmulator(speed=1.0) as emu:
        emu.set_clock(60, 60, increment=10)
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            left, right, status, right_hours, left_hours = await host.times_where(lambda t: True)
            assert (left, right, status & 0x01) == (60, 60, 0)
            assert right_hours & 0x20  # §1.7 D5: Fischer indicator
            assert left_hours & 0x20
            await emu.press("left")  # paused: left goes down, right starts, no increment
            await host.times_where(lambda t: bool(t[2] & 0x01) and bool(t[2] & 0x02))
            await emu.press("right")  # right ran and gets 10 s
            left, right, status, _, _ = await host.times_where(lambda t: not t[2] & 0x02)
            assert 65 <= right <= 70
            assert status & 0x01


async def test_flag_falls_and_blocks_at_zero() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        emu.set_clock(30, 2, running="right")
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            left, _, status, right_hours, _ = await host.times_where(lambda t: t[1] == 0)
            assert left == 30
            assert right_hours & 0x50 == 0x50  # D4 blocked, D6 flag shown
            assert not status & 0x01
            assert emu.clock_running is None


async def test_setnrun_is_acknowledged_and_runs() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            # §1.8: left 0:05:00, right 0:03:00, left counts down, toggle on lever.
            host.send(bytes.fromhex("2B 0A 03 0A 00 05 00 00 03 00 09 00"))
            ack = await host.frame_where(lambda f: f[0] == 0x8D and is_ack(f))
            assert len(ack) == 10
            assert ack_of(ack)[:2] == (0x10, 0x0A)
            _, right, status, _, _ = await host.times_where(lambda t: t[0] < 299)
            assert right == 180
            assert status & 0x01


async def test_clock_commands_version_ascii_beep_end() -> None:
    async with DgtEmulator() as emu:
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            host.send(bytes.fromhex("2B 03 03 09 00"))
            ack0, ack1, ack2, _ = ack_of(await host.frame_where(is_ack))
            assert (ack0, ack1, ack2 >> 4, ack2 & 0x0F) == (0x10, 0x09, 2, 2)
            host.send(bytes.fromhex("2B 0C 03 0C") + b"e2e4 ok " + bytes.fromhex("00 00"))
            assert ack_of(await host.frame_where(is_ack))[:2] == (0x10, 0x0C)
            assert emu.clock_text == "e2e4 ok "
            host.send(bytes.fromhex("2B 04 03 0B 05 00"))
            assert ack_of(await host.frame_where(is_ack))[:2] == (0x10, 0x0B)
            assert emu.clock_beeps == [5]
            host.send(bytes.fromhex("2B 03 03 08 00"))
            assert ack_of(await host.frame_where(is_ack))[:2] == (0x10, 0x08)
            host.send(bytes.fromhex("2B 03 03 03 00"))
            assert ack_of(await host.frame_where(is_ack))[:2] == (0x10, 0x03)
            assert emu.clock_text is None


async def test_clock_commands_are_not_acknowledged_in_idle() -> None:
    async with DgtEmulator() as emu:
        with Host(emu.path) as host:
            host.send(bytes.fromhex("2B 0C 03 0C") + b"  idle  " + bytes.fromhex("00 00 4D"))
            assert await host.frame() == bytes.fromhex("93 00 05 01 07")
            assert emu.clock_text == "  idle  "


async def test_identity_replies() -> None:
    async with DgtEmulator(serial="01025", version=(3, 1)) as emu:
        with Host(emu.path) as host:
            host.send(b"\x4d")
            assert await host.frame() == bytes.fromhex("93 00 05 03 01")
            host.send(b"\x45")
            assert await host.frame() == bytes.fromhex("91 00 08") + b"01025"
            host.send(b"\x46")  # §1.5: serial 01025 → 0x08 0x01
            assert await host.frame() == bytes.fromhex("90 00 05 08 01")
            host.send(b"\x55")
            long_serial = await host.frame()
            assert long_serial[:3] == bytes.fromhex("A2 00 0D")
            assert long_serial[3:].isascii()
            host.send(b"\x4c")
            battery = await host.frame()
            assert battery[:3] == bytes.fromhex("A0 00 0C")
            host.send(b"\x47")
            trademark = await host.frame()
            assert trademark[0] == 0x92
            assert b"Digital Game Technology" in trademark


async def test_board_without_clock() -> None:
    async with DgtEmulator(clock=False) as emu:
        with Host(emu.path) as host:
            host.send(b"\x41")
            frame = await host.frame()
            assert frame[:3] == bytes.fromhex("8D 00 0A")
            assert frame[9] & 0x20
            await switch_mode(emu, host, 0x4B, "update_nice")
            host.send(bytes.fromhex("2B 03 03 09 00 4D"))  # nobody acks; VERSION comes first
            assert await host.frame() == bytes.fromhex("93 00 05 01 07")
            await emu.press("left")  # no clock behind the board: nothing happens
            assert emu.clock_times is None
            host.send(b"\x41")
            assert (await host.frame())[9] & 0x20  # still "no clock connected"


async def test_update_mode_repeats_clock_data() -> None:
    async with DgtEmulator(speed=FAST) as emu:
        emu.set_clock(100, 200)
        with Host(emu.path) as host:
            await switch_mode(emu, host, 0x43, "update")
            first = await host.frame_with_id(0x8D)
            assert await host.frame_with_id(0x8D) == first
            assert times_of(first)[:2] == (100, 200)


async def test_ee_moves_include_changes_made_while_unplugged() -> None:
    async with DgtEmulator() as emu:
        await emu.unplug()
        assert not await exists(emu.path)
        await emu.lift("e2")
        await emu.place("e4", "P")
        await emu.plug()
        with Host(emu.path) as host:
            host.send(b"\x49")
            frame = await host.frame_with_id(0x8F)
            assert frame[1] << 7 | frame[2] == len(frame)
            tags = ee_tags(frame[3:])
            assert tags[-1] == b"\x6b"  # EE_EOF
            assert b"\x6a" in tags  # EE_POWERUP
            fields = [(t[0] & 0x0F, t[1]) for t in tags if 0x40 <= t[0] <= 0x5F]
            assert fields[-2:] == [(0x00, 0x34), (0x01, 0x24)]


async def test_unplug_and_plug() -> None:
    async with DgtEmulator() as emu:
        path = emu.path
        with Host(path) as host:
            await switch_mode(emu, host, 0x4B, "update_nice")
            await emu.unplug()
            assert not await exists(path)
            assert (emu.device, emu.is_plugged) == (None, False)
            with pytest.raises(serial.SerialException):  # the host sees the cable pulled
                await read_until_error(host)
            await emu.lift("g1")
        await emu.plug()
        assert emu.path == path
        assert await exists(path)
        assert emu.device is not None
        assert emu.mode == "bus"
        with Host(path) as host:
            host.send(b"\x42")
            dump = await host.frame()
            assert dump[3 + 62] == 0x00  # g1
            assert dump[3 + 61] == 0x04  # f1 bishop still there


async def test_rotated_board_keeps_its_own_numbering() -> None:
    async with DgtEmulator(rotated=True) as emu:
        with Host(emu.path) as host:
            host.send(b"\x42")
            assert await host.frame() == START_DUMP[:3] + START_DUMP[3:][::-1]
            await switch_mode(emu, host, 0x4B, "update_nice")
            await emu.lift("e2")
            await emu.place("e4", "P")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 0B 00")
            assert await host.frame_with_id(0x8E) == bytes.fromhex("8E 00 05 1B 01")
            assert emu.position["e4"] == "P"
            assert emu.position["e8"] == "k"


async def test_injected_bytes_arrive_verbatim_and_writes_are_stamped() -> None:
    seen: list[bytes] = []
    async with DgtEmulator() as emu:
        emu.on_write = lambda data, at: seen.append(data)
        with Host(emu.path) as host:
            await emu.inject(b"\x00\xff\x8e\x00\x05")
            assert await host.raw(5) == b"\x00\xff\x8e\x00\x05"
            await switch_mode(emu, host, 0x44, "update_board")
            await emu.lift("a2")
            assert await host.raw(5) == bytes.fromhex("8E 00 05 30 00")
            assert emu.last_write_at is not None
            assert emu.last_write_at <= asyncio.get_running_loop().time()
            assert b"".join(seen).endswith(bytes.fromhex("8E 00 05 30 00"))


async def test_survives_random_host_bytes() -> None:
    noise = random.Random(1234).randbytes(2000)
    async with DgtEmulator(speed=FAST) as emu:
        with Host(emu.path) as host:
            host.send(noise)
            await until(lambda: sum(map(len, emu.received)) >= len(noise) - 20)
            host.send(bytes(20) + b"\x40\x4d")  # 20 ignored bytes complete any partial command
            await host.frame_where(lambda f: f == bytes.fromhex("93 00 05 01 07"))
            assert emu.mode == "idle"


async def test_serve_forever_starts_and_stops() -> None:
    emu = DgtEmulator()
    task = asyncio.create_task(serve_forever(emu))
    await until(lambda: emu.is_plugged)
    path = emu.path
    assert await exists(path)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not emu.is_started
    assert not await exists(path)
