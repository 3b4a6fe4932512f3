"""Tell systemd how the daemon is doing: the ``sd_notify`` protocol, without a dependency.

Under ``Type=notify`` systemd passes the path of a Unix datagram socket in ``NOTIFY_SOCKET``; the
service sends newline-separated ``KEY=VALUE`` assignments to it: ``READY=1`` once started,
``STOPPING=1`` when shutting down, ``STATUS=...`` for ``systemctl status``, and ``WATCHDOG=1``
at least once per ``WatchdogSec=`` (passed as ``WATCHDOG_USEC``), or systemd kills the service
and, with ``Restart=on-failure``, starts it again.

Every function here is a no-op returning ``False`` when ``NOTIFY_SOCKET`` is not set (not run by
systemd), names an address this module does not support, or cannot be reached: notification is
advisory and never stops the daemon. A name starting with ``@`` is a Linux abstract socket.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable
from typing import Final

_LOGGER = logging.getLogger(__name__)

ENV_SOCKET: Final = "NOTIFY_SOCKET"
ENV_WATCHDOG_USEC: Final = "WATCHDOG_USEC"
ENV_WATCHDOG_PID: Final = "WATCHDOG_PID"


def notify(*assignments: str) -> bool:
    """Send ``KEY=VALUE`` assignments in one datagram; ``True`` if it was sent."""
    address = _address(os.environ.get(ENV_SOCKET, ""))
    if address is None:
        return False
    message = "\n".join(assignments).encode("utf-8")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message)
    except OSError as exc:
        _LOGGER.debug("cannot notify systemd at %r: %s", address, exc)
        return False
    return True


def ready() -> bool:
    """``READY=1``: start-up is complete (``Type=notify`` waits for this)."""
    return notify("READY=1")


def stopping() -> bool:
    """``STOPPING=1``: the daemon is shutting down."""
    return notify("STOPPING=1")


def status(text: str) -> bool:
    """``STATUS=text``: one line shown by ``systemctl status`` (newlines become spaces)."""
    return notify("STATUS=" + " ".join(text.splitlines()))


def watchdog() -> bool:
    """``WATCHDOG=1``: the daemon is alive and well."""
    return notify("WATCHDOG=1")


def watchdog_interval() -> float | None:
    """Seconds between two ``WATCHDOG=1`` pings: half of ``WATCHDOG_USEC``, as systemd advises.

    ``None`` when the watchdog is off: ``WATCHDOG_USEC`` unset, not a positive integer, or
    ``WATCHDOG_PID`` set to another process's id (the variables were inherited, not meant for
    this process).
    """
    pid = os.environ.get(ENV_WATCHDOG_PID)
    if pid is not None and pid.strip() != str(os.getpid()):
        return None
    try:
        usec = int(os.environ.get(ENV_WATCHDOG_USEC, ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    return usec / 2_000_000


async def watchdog_loop(healthy: Callable[[], bool]) -> None:
    """Ping the watchdog every :func:`watchdog_interval` seconds while ``healthy()`` is true.

    Runs until cancelled; returns at once when the watchdog is off. The pings stop while
    ``healthy()`` is false, and when the event loop is blocked the loop does not run at all: in
    both cases systemd sees no ping within ``WatchdogSec=`` and restarts the service. An
    exception raised by ``healthy()`` ends the loop (and so the pings).
    """
    period = watchdog_interval()
    if period is None:
        return
    while True:
        if healthy():
            watchdog()
        await asyncio.sleep(period)


def _address(name: str) -> str | None:
    """The socket address of a ``NOTIFY_SOCKET`` value, or ``None`` if unsupported."""
    if name.startswith("@") and len(name) > 1:
        return "\0" + name[1:]  # the abstract namespace
    if name.startswith("/"):
        return name
    return None  # empty, or a form this module does not speak (such as vsock:)
