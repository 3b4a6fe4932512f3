"""bridge.table.sdnotify against a real AF_UNIX datagram socket standing in for systemd."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from bridge.table import sdnotify


class FakeSystemd:
    """The receiving end of ``NOTIFY_SOCKET``: a datagram socket the test reads."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def received(self) -> list[str]:
        """Every datagram waiting on the socket, oldest first (all sent synchronously)."""
        messages: list[str] = []
        while True:
            try:
                messages.append(self.sock.recv(4096).decode("utf-8"))
            except BlockingIOError:
                return messages


def _bind(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.setblocking(False)
    return sock


@pytest.fixture
def systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeSystemd]:
    """A socket bound in tmp_path, named by NOTIFY_SOCKET; no watchdog variables."""
    path = tmp_path / "notify"
    monkeypatch.setenv("NOTIFY_SOCKET", str(path))
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    with _bind(str(path)) as sock:
        yield FakeSystemd(sock)


def test_ready_stopping_status_and_watchdog_send_their_assignment(systemd: FakeSystemd) -> None:
    assert sdnotify.ready()
    assert sdnotify.status("online; board connected\nseq 12")
    assert sdnotify.watchdog()
    assert sdnotify.stopping()
    assert systemd.received() == [
        "READY=1",
        "STATUS=online; board connected seq 12",
        "WATCHDOG=1",
        "STOPPING=1",
    ]


def test_several_assignments_go_in_one_datagram(systemd: FakeSystemd) -> None:
    assert sdnotify.notify("READY=1", "STATUS=up")
    assert systemd.received() == ["READY=1\nSTATUS=up"]


def test_abstract_socket_name(monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"chessbridge-test-{uuid.uuid4().hex}"
    with _bind("\0" + name) as sock:
        monkeypatch.setenv("NOTIFY_SOCKET", "@" + name)
        assert sdnotify.ready()
        assert FakeSystemd(sock).received() == ["READY=1"]


@pytest.mark.parametrize("value", [None, "", "@", "relative/path", "vsock:2:1234"])
def test_no_op_without_a_usable_notify_socket(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    else:
        monkeypatch.setenv("NOTIFY_SOCKET", value)
    assert not sdnotify.ready()
    assert not sdnotify.watchdog()
    assert not sdnotify.stopping()
    assert not sdnotify.status("x")


def test_unreachable_socket_is_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "nobody-listens"))
    assert not sdnotify.ready()


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        (None, None, None),
        ("30000000", None, 15.0),
        ("30000000", "self", 15.0),
        ("30000000", "other", None),
        ("0", None, None),
        ("-5", None, None),
        ("soon", None, None),
    ],
)
def test_watchdog_interval_is_half_of_watchdog_usec_for_this_process(
    monkeypatch: pytest.MonkeyPatch, usec: str | None, pid: str | None, expected: float | None
) -> None:
    if usec is None:
        monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    else:
        monkeypatch.setenv("WATCHDOG_USEC", usec)
    if pid is None:
        monkeypatch.delenv("WATCHDOG_PID", raising=False)
    else:
        monkeypatch.setenv("WATCHDOG_PID", str(os.getpid() if pid == "self" else os.getpid() + 1))
    assert sdnotify.watchdog_interval() == expected


async def test_watchdog_loop_pings_only_while_healthy(
    systemd: FakeSystemd, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WATCHDOG_USEC", "20000")  # pings every 10 ms
    answers = [True, False, False, True, False, True]
    asked_all = asyncio.Event()
    pings_since_last_ask: list[int] = []

    def healthy() -> bool:
        # Pings so far arrived synchronously: record them before answering.
        pings_since_last_ask.append(len(systemd.received()))
        answer = answers[len(pings_since_last_ask) - 1]
        if len(pings_since_last_ask) == len(answers):
            asked_all.set()
        return answer

    loop = asyncio.create_task(sdnotify.watchdog_loop(healthy))
    await asyncio.wait_for(asked_all.wait(), 5.0)
    loop.cancel()
    with pytest.raises(asyncio.CancelledError):
        await loop
    # healthy() is asked before each ping; each True answer was followed by exactly one ping.
    assert pings_since_last_ask == [0, 1, 0, 0, 1, 0]
    assert systemd.received() == ["WATCHDOG=1"]


async def test_watchdog_loop_returns_when_the_watchdog_is_off(systemd: FakeSystemd) -> None:
    await asyncio.wait_for(sdnotify.watchdog_loop(lambda: True), 1.0)
    assert systemd.received() == []
