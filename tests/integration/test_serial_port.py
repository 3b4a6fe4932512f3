"""The serial port shell against a pseudo-terminal whose other end stops reading."""

from __future__ import annotations

import asyncio
import os
import tty

import pytest

from drivers._serial import SerialPort

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
