"""The serial port shell against a pseudo-terminal whose other end stops reading."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty

import pytest

from drivers._serial import SerialPort
from drivers.errors import LinkLostError

pytestmark = pytest.mark.pty


async def test_a_port_whose_other_end_reads_nothing_still_closes() -> None:
    """A transport closes once it has written what it holds; a board (or pty) that no longer
    reads would keep it, and the daemon stopping, waiting for ever. The close is bounded."""
    master, slave = os.openpty()
    tty.setraw(master)
    try:
        port = await SerialPort.open(os.ttyname(slave), baudrate=9600, example="dgt:/dev/ttyACM0")
        # Far more than the pty's buffer: the rest stays in the transport, unwritten.
        await asyncio.wait_for(port.write(b"\x00" * 4096), 5.0)
        writer = port._writer  # the transport, to fill it beyond the pty
        assert writer is not None
        writer.write(b"\x00" * 1_000_000)
        assert writer.transport.get_write_buffer_size() > 0
        await asyncio.wait_for(port.close(), 12.0)  # a limit: the port allows itself 2 s
        assert not port.is_open
    finally:
        os.close(master)
        os.close(slave)


class _Pty:
    """A pseudo-terminal whose master end the test writes as a board would."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        self.path = os.ttyname(self.slave)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


async def _open(pty: _Pty) -> SerialPort:
    return await SerialPort.open(pty.path, baudrate=9600, example="dgt:/dev/ttyACM0")


async def test_the_pump_feeds_bytes_read_before_it_then_each_read_as_it_comes() -> None:
    """What came while the board was identified goes first, with the time it arrived; then
    every read is fed at once (in the loop's callback that read it), in order."""
    pty = _Pty()
    fed: list[tuple[bytes, float]] = []
    arrived = asyncio.Event()
    try:
        port = await _open(pty)
        os.write(pty.master, b"early")
        assert await asyncio.wait_for(port.read(5.0), 5.0) == b"early"
        os.write(pty.master, b"held")
        await asyncio.sleep(0.2)  # read by the loop, held by the port: nobody asked yet
        loop = asyncio.get_running_loop()
        held_by = loop.time()

        def feed(data: bytes, at: float) -> None:
            fed.append((data, at))
            arrived.set()

        pump = asyncio.create_task(port.pump(feed, dead_after=30.0))
        for chunk in (b"one", b"two"):
            arrived.clear()
            os.write(pty.master, chunk)
            await asyncio.wait_for(arrived.wait(), 5.0)
        assert b"".join(data for data, _ in fed) == b"heldonetwo"
        assert fed[0][1] < held_by  # the held bytes keep the time they arrived
        assert [at for _, at in fed] == sorted(at for _, at in fed)
        pump.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pump
        assert not port.is_open
    finally:
        pty.close()


async def test_the_pump_ends_with_the_feeds_error_the_boards_silence_or_its_loss() -> None:
    """A feed that raises ends the pump with its exception; a board silent for ``dead_after``,
    or a port that fails, end it with LinkLostError saying which."""
    pty = _Pty()
    try:
        port = await _open(pty)

        def failing(data: bytes, at: float) -> None:
            raise ValueError(f"cannot take {data!r}")

        pump = asyncio.create_task(port.pump(failing, dead_after=30.0))
        await asyncio.sleep(0.1)
        os.write(pty.master, b"x")
        with pytest.raises(ValueError, match="cannot take b'x'"):
            await asyncio.wait_for(pump, 5.0)
        assert not port.is_open

        port = await _open(pty)
        with pytest.raises(LinkLostError, match=r"silent for 0\.3 s"):
            await asyncio.wait_for(port.pump(lambda data, at: None, dead_after=0.3), 5.0)

        port = await _open(pty)
        pump = asyncio.create_task(port.pump(lambda data, at: None, dead_after=30.0))
        await asyncio.sleep(0.1)
        pty.close()  # the board unplugged: the port fails
        with pytest.raises(LinkLostError, match=r"lost|closed"):
            await asyncio.wait_for(pump, 5.0)
    finally:
        pty.close()
