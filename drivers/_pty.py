"""A board's USB serial port, played by a pseudo-terminal: the service every serial emulator
shares (the *Service* of pyatv's fake devices), and :class:`PtyBoard`, the cable's lifecycle
around it (start, stop, plug, unplug) that every serial emulator shares too.

The host opens :attr:`PtyDevice.path` with pyserial exactly as it would open a real board: a
stable symlink, re-pointed at a new pty each time the cable is plugged back in (real ttyACM
numbers change too). Unplugged, the pty is closed: the host's reads fail, as with a real cable
pulled, and bytes the board sends meanwhile go nowhere. Writes are buffered and flushed as the
host reads; a host that stops reading loses what exceeds 1 MiB, as a UART would drop it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import time
import tty
from collections.abc import Callable
from types import TracebackType
from typing import Final, Self

READ_SIZE: Final = 4096
MAX_PENDING: Final = 1 << 20
"""Bytes kept for a host that is not reading."""

HostBytes = Callable[[bytes, float], None]
"""Receives what the host wrote, with the monotonic time it was read."""


class PtyDevice:
    """One emulated serial device: start, plug/unplug, send; host bytes go to ``on_data``."""

    def __init__(self, name: str, on_data: HostBytes) -> None:
        self.name = name
        self.on_write: Callable[[bytes, float], None] | None = None
        """Called with each chunk the host could read, and the loop time it was written."""
        self.last_write_at: float | None = None
        self._on_data = on_data
        self._loop: asyncio.AbstractEventLoop | None = None
        self._dir: str | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._device: str | None = None
        self._out = bytearray()

    async def start(self) -> None:
        """Create the pty and the stable symlink :attr:`path`: the board is plugged in."""
        if self._loop is not None:
            raise RuntimeError(f"{self.name} emulator already started")
        self._loop = asyncio.get_running_loop()
        self._dir = tempfile.mkdtemp(prefix=f"{self.name}-emulator-")
        self._open()

    async def stop(self) -> None:
        """Close the pty and remove the symlink and its directory."""
        if self._loop is None:
            return
        self._close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = None
        self._loop = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop serving the device, between :meth:`start` and :meth:`stop`."""
        return self._loop

    @property
    def path(self) -> str:
        """The stable device path (a symlink re-pointed on every plug) for the host to open."""
        if self._dir is None:
            raise RuntimeError(f"{self.name} emulator not started")
        return os.path.join(self._dir, self.name)

    @property
    def device(self) -> str | None:
        """The raw pty name while plugged in (it may change across plug cycles)."""
        return self._device

    @property
    def is_started(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._loop is not None

    @property
    def is_plugged(self) -> bool:
        """True while the pty exists."""
        return self._master is not None

    @property
    def pending(self) -> int:
        """Bytes sent (:meth:`send`) that the pty has not taken yet (the host is not reading
        them fast enough); more than ``MAX_PENDING`` and :meth:`send` drops them."""
        return len(self._out)

    def unplug(self) -> None:
        """Pull the cable: the pty closes, the host's reads fail and :attr:`path` disappears."""
        self._close()

    def plug(self) -> None:
        """Plug the cable back in, on a new pty."""
        if self._loop is None:
            raise RuntimeError(f"{self.name} emulator not started")
        if self._master is None:
            self._open()

    def send(self, data: bytes) -> None:
        """Bytes from the board to the host (dropped while unplugged)."""
        if self._master is None:
            return
        if len(self._out) + len(data) > MAX_PENDING:
            return
        self._out += data
        self._flush()

    def _open(self) -> None:
        assert self._loop is not None
        assert self._dir is not None
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self._device = os.ttyname(slave)
        staging = self.path + ".new"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        os.symlink(self._device, staging)
        os.replace(staging, self.path)
        self._loop.add_reader(master, self._on_readable)

    def _close(self) -> None:
        if self._master is not None and self._loop is not None:
            self._loop.remove_reader(self._master)
            self._loop.remove_writer(self._master)
        for fd in (self._master, self._slave):
            if fd is not None:
                os.close(fd)
        self._master = self._slave = self._device = None
        self._out.clear()
        if self._dir is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)

    def _on_readable(self) -> None:
        if self._master is None:
            return
        try:
            data = os.read(self._master, READ_SIZE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # EIO: no process has the slave open; nothing to read
        self._on_data(data, time.monotonic())

    def _flush(self) -> None:
        assert self._loop is not None
        while self._out and self._master is not None:
            try:
                written = os.write(self._master, self._out)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                self._out.clear()
                break
            chunk = bytes(self._out[:written])
            del self._out[:written]
            self.last_write_at = self._loop.time()
            if self.on_write is not None:
                self.on_write(chunk, self.last_write_at)
        if self._master is not None:
            if self._out:
                self._loop.add_writer(self._master, self._flush)
            else:
                self._loop.remove_writer(self._master)


class PtyBoard:
    """An emulated serial board on a :class:`PtyDevice`; subclass it with the board's protocol.

    This is the cable: :meth:`start`/:meth:`stop` (or ``async with``), :meth:`unplug` and
    :meth:`plug`. What the board does when the cable goes in or out is its family's, in the hooks
    :meth:`_plugged_in`, :meth:`_plugged_back` and :meth:`_pulled_out`; what it does with the
    host's bytes, in :meth:`_on_host_bytes`.
    """

    def __init__(self, name: str) -> None:
        self._port = PtyDevice(name, self._on_host_bytes)

    async def start(self) -> None:
        """Create the pty and the stable symlink :attr:`path`; the board is plugged in."""
        await self._port.start()
        self._plugged_in()

    async def stop(self) -> None:
        """Close the pty and remove the symlink and its directory."""
        self._pulled_out()
        await self._port.stop()

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

    @property
    def address(self) -> str:
        """The pty path: the board URI is ``{scheme}:{address}``."""
        return self._port.path

    @property
    def path(self) -> str:
        """Stable device path (a symlink re-pointed on every plug) for the host to open."""
        return self._port.path

    @property
    def is_plugged(self) -> bool:
        """True while the pty exists."""
        return self._port.is_plugged

    @property
    def pending(self) -> int:
        """Bytes from the board not yet taken by the pty (see :attr:`PtyDevice.pending`)."""
        return self._port.pending

    async def unplug(self) -> None:
        """Pull the cable: the pty closes, the host's reads fail and :attr:`path` disappears."""
        self._pulled_out()
        self._port.unplug()

    async def plug(self) -> None:
        """Plug the cable back in, on a new pty (nothing if it is in)."""
        if not self._port.is_plugged:
            self._port.plug()
            self._plugged_back()

    async def press(self, side: str) -> None:
        """A board without a clock: nothing happens (a family with one overrides this)."""
        await asyncio.sleep(0)

    async def inject(self, raw: bytes) -> None:
        """Write raw bytes to the host as they are (noise, broken messages)."""
        self._port.send(raw)
        await asyncio.sleep(0)

    def _plugged_in(self) -> None:
        """The board has just been started (plugged in the first time); nothing by default."""

    def _plugged_back(self) -> None:
        """The cable has just been plugged back in; by default, as when first plugged in."""
        self._plugged_in()

    def _pulled_out(self) -> None:
        """The cable is about to be pulled (or the emulator stopped); nothing by default."""

    def _on_host_bytes(self, data: bytes, now: float) -> None:
        """What the board does with bytes the host wrote (read at monotonic time ``now``)."""
        raise NotImplementedError
