"""Shared fixtures: a real Mosquitto broker, unique table ids, MQTT subscribers, and a guard
that fails any test logging an unexpected ERROR.

Brokers are private ``mosquitto`` processes (the Debian package) on a free 127.0.0.1 port with a
generated config; never a mock and never a public broker.

- ``mosquitto`` (session): one shared broker; give each test its own ``table_id``. Do not stop it.
- ``mosquitto_private`` (function): a broker of the test's own, free to ``stop()``/``start()``/
  ``restart()`` (same port) or ``kill()``; ``await astop()`` etc. do the same off the event loop.
- ``mosquitto_factory`` (function): ``mosquitto_factory(users={"t1": "pw"}, acl="...",
  persistence=True, extra_config="...")`` starts a broker with that configuration.
- ``mqtt_subscribe`` (function): ``async with mqtt_subscribe(broker, "chessbridge/1/#") as sub:``
  collects messages; ``await sub.wait_for(lambda msgs: ...)``.
- ``table_id`` (function): a fresh table id, unique across tests and runs.
- ``silent_port`` (function): the path of a pseudo-terminal that answers nothing.
- ``small_disk`` (function): a real file system of its own, 4 MiB of tmpfs mounted for the test
  (``fill()`` it to the last byte, ``free()`` it again); skipped where the test may not mount.

Mark a test ``@pytest.mark.allow_error_log`` when it expects ERROR log records.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Protocol

import aiomqtt
import pytest

MOSQUITTO_CANDIDATES = ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto")
_START_TIMEOUT = 10.0
_STOP_TIMEOUT = 10.0

_BROKER_FIXTURES = frozenset({"mosquitto", "mosquitto_private", "mosquitto_factory"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "allow_error_log: the test expects ERROR log records; do not fail on them"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses a broker fixture ``mosquitto`` (for ``-m "not mosquitto"``)."""
    for item in items:
        if _BROKER_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mosquitto)


# --- the broker --------------------------------------------------------------------------------


def mosquitto_binary() -> str:
    """The ``mosquitto`` executable: on PATH or in /usr/sbin; fails the test if absent."""
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in MOSQUITTO_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(
        "mosquitto not found: install the Debian package (scripts/test does) "
        'or deselect these tests with -m "not mosquitto"'
    )


def end_process(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    """Send ``sig`` to a server the tests started, wait for it (killed if it lingers), and
    close its stderr."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(_STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stderr is not None:
        process.stderr.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Mosquitto:
    """One private Mosquitto process; it keeps its port across stop/start."""

    host = "127.0.0.1"

    def __init__(
        self,
        directory: Path,
        *,
        port: int | None = None,
        anonymous: bool = True,
        persistence: bool = False,
        users: dict[str, str] | None = None,
        acl: str | None = None,
        extra_config: str = "",
    ) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.port = free_port() if port is None else port
        self.config_path = directory / "mosquitto.conf"
        self.log_path = directory / "mosquitto.log"
        self._process: subprocess.Popen[bytes] | None = None
        lines = [
            f"listener {self.port} {self.host}",
            f"allow_anonymous {'true' if anonymous and not users else 'false'}",
            f"persistence {'true' if persistence else 'false'}",
            f"log_dest file {self.log_path}",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "connection_messages true",
            # When run as root, mosquitto would switch to user "mosquitto", which cannot read
            # the test's private directory; stay the current user.
            f"user {pwd.getpwuid(os.getuid()).pw_name}",
        ]
        if persistence:
            lines += [f"persistence_location {directory}/", "autosave_interval 0"]
        if users:
            password_file = directory / "passwords"
            password_file.touch(mode=0o600)
            for name, secret in users.items():
                subprocess.run(
                    [_passwd_binary(), "-b", str(password_file), name, secret],
                    check=True,
                    capture_output=True,
                )
            lines.append(f"password_file {password_file}")
        if acl is not None:
            acl_file = directory / "acl"
            acl_file.write_text(acl)
            lines.append(f"acl_file {acl_file}")
        self.config_path.write_text("\n".join([*lines, extra_config, ""]))

    @property
    def url(self) -> str:
        """``mqtt://127.0.0.1:PORT``."""
        return f"mqtt://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._process is not None and self._process.poll() is None

    def log(self) -> str:
        """The broker's log so far (for failure messages)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def start(self) -> None:
        """Start the broker and wait until it accepts connections."""
        if self.running:
            return
        self._process = subprocess.Popen(
            [mosquitto_binary(), "-c", str(self.config_path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + _START_TIMEOUT
        while True:
            if self._process.poll() is not None:
                _, stderr = self._process.communicate()
                self._process = None
                raise RuntimeError(
                    f"mosquitto exited at start: {stderr.decode(errors='replace')}\n{self.log()}"
                )
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError as exc:
                if time.monotonic() > deadline:
                    self.kill()
                    message = f"mosquitto did not listen on {self.port}\n{self.log()}"
                    raise RuntimeError(message) from exc
                time.sleep(0.02)

    def stop(self) -> None:
        """Stop the broker the normal way (SIGTERM; it saves persistence if enabled)."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """Kill the broker at once (SIGKILL): nothing saved, connections just drop."""
        self._end(signal.SIGKILL)

    def restart(self) -> None:
        """Stop and start again on the same port."""
        self.stop()
        self.start()

    async def astart(self) -> None:
        """:meth:`start` off the event loop."""
        await asyncio.to_thread(self.start)

    async def astop(self) -> None:
        """:meth:`stop` off the event loop."""
        await asyncio.to_thread(self.stop)

    async def arestart(self) -> None:
        """:meth:`restart` off the event loop."""
        await asyncio.to_thread(self.restart)

    def _end(self, sig: signal.Signals) -> None:
        process, self._process = self._process, None
        if process is not None:
            end_process(process, sig)


def _passwd_binary() -> str:
    found = shutil.which("mosquitto_passwd")
    if found:
        return found
    pytest.fail("mosquitto_passwd not found (it comes with the mosquitto package)")


class MosquittoFactory(Protocol):
    """Starts a broker with the given configuration (see :class:`Mosquitto`)."""

    def __call__(
        self,
        *,
        anonymous: bool = True,
        persistence: bool = False,
        users: dict[str, str] | None = None,
        acl: str | None = None,
        extra_config: str = "",
    ) -> Mosquitto: ...


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """The shared broker of the session; never stop it (use ``mosquitto_private``)."""
    broker = Mosquitto(tmp_path_factory.mktemp("mosquitto"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def mosquitto_factory(tmp_path: Path) -> Iterator[MosquittoFactory]:
    """Start brokers with their own configuration; all stopped after the test."""
    started: list[Mosquitto] = []

    def start(
        *,
        anonymous: bool = True,
        persistence: bool = False,
        users: dict[str, str] | None = None,
        acl: str | None = None,
        extra_config: str = "",
    ) -> Mosquitto:
        broker = Mosquitto(
            tmp_path / f"mosquitto-{len(started)}",
            anonymous=anonymous,
            persistence=persistence,
            users=users,
            acl=acl,
            extra_config=extra_config,
        )
        started.append(broker)
        broker.start()
        return broker

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
def mosquitto_private(mosquitto_factory: MosquittoFactory) -> Mosquitto:
    """A broker of this test's own (no persistence): stop, restart or kill it freely."""
    return mosquitto_factory()


@pytest.fixture
def table_id() -> str:
    """A table id no other test or run uses (safe in topics and as an MQTT client id)."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def silent_port() -> Iterator[str]:
    """The path of a pseudo-terminal that answers nothing, as a modem or another device might."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


# --- a small disk ------------------------------------------------------------------------------


class SmallDisk:
    """A tmpfs of ``size`` bytes mounted at ``path``, for running out of space for real."""

    def __init__(self, path: Path, size: int) -> None:
        self.path = path
        self.size = size
        self._filler = path / "filler"

    def fill(self) -> None:
        """Take every free byte (the file system says ENOSPC to anyone else)."""
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            chunk = 65536
            while chunk >= 1:
                try:
                    os.write(fd, b"\0" * chunk)
                except OSError:
                    chunk //= 2  # the last few pages, then nothing
        finally:
            os.close(fd)

    def free(self) -> None:
        """Give the space back."""
        self._filler.unlink(missing_ok=True)

    def available(self) -> int:
        return shutil.disk_usage(self.path).free


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A 4 MiB tmpfs of the test's own (needs root or CAP_SYS_ADMIN: skipped otherwise)."""
    path = tmp_path / "disk"
    path.mkdir()
    size = 4 * 1024 * 1024
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount command to mount a small tmpfs for a full-disk test")
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full-disk test: {done.stderr.strip()}")
    try:
        yield SmallDisk(path, size)
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


# --- subscribers -------------------------------------------------------------------------------


class _BrokerGoneIsAWarning(logging.Filter):
    """Tests stop brokers on purpose: paho's ERROR for the dropped socket becomes a WARNING."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.ERROR and str(record.msg).startswith(
            ("failed to receive on socket", "timeout on socket")
        ):
            record.levelno = logging.WARNING
            record.levelname = "WARNING"
        return True


SUBSCRIBER_LOGGER = logging.getLogger("tests.mqtt")
SUBSCRIBER_LOGGER.addFilter(_BrokerGoneIsAWarning())


class Received:
    """Messages received by a subscriber, in arrival order, and a way to wait for some."""

    def __init__(self) -> None:
        self.messages: list[aiomqtt.Message] = []
        self._changed = asyncio.Event()

    def received(self, message: aiomqtt.Message) -> None:
        """Record one message and wake the waiters."""
        self.messages.append(message)
        self._changed.set()

    async def wait_for(
        self, predicate: Callable[[list[aiomqtt.Message]], bool], within: float = 20.0
    ) -> list[aiomqtt.Message]:
        """Wait until ``predicate(messages)`` holds; fails the test after ``within`` seconds."""
        try:
            async with asyncio.timeout(within):
                while not predicate(self.messages):
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            topics = [(m.topic.value, m.payload) for m in self.messages]
            pytest.fail(f"timed out after {within} s; received: {topics}")
        return self.messages

    def on(self, suffix: str) -> list[aiomqtt.Message]:
        """Messages whose topic ends with ``/suffix``."""
        return [m for m in self.messages if m.topic.value.endswith("/" + suffix)]


class Subscription(Received):
    """Messages received by one aiomqtt subscriber, in arrival order."""

    def __init__(self, client: aiomqtt.Client) -> None:
        super().__init__()
        self.client = client

    async def _collect(self) -> None:
        with contextlib.suppress(aiomqtt.MqttError):
            async for message in self.client.messages:
                self.received(message)


class Subscribe(Protocol):
    """``async with mqtt_subscribe(broker, topic_filter, ...) as sub``."""

    def __call__(
        self,
        broker: Mosquitto,
        topic_filter: str | None,
        *,
        identifier: str | None = None,
        clean_session: bool = True,
    ) -> contextlib.AbstractAsyncContextManager[Subscription]: ...


@pytest.fixture
def mqtt_subscribe() -> Subscribe:
    """An aiomqtt subscriber (QoS 1) that collects messages while the context is open.

    ``topic_filter=None`` subscribes to nothing: with ``clean_session=False`` and a fixed
    ``identifier`` the broker still delivers what it queued for that session.
    """

    @contextlib.asynccontextmanager
    async def subscribe(
        broker: Mosquitto,
        topic_filter: str | None,
        *,
        identifier: str | None = None,
        clean_session: bool = True,
    ) -> AsyncIterator[Subscription]:
        client = aiomqtt.Client(
            broker.host,
            broker.port,
            identifier=identifier,
            clean_session=clean_session,
            logger=SUBSCRIBER_LOGGER,
        )
        async with client:
            subscription = Subscription(client)
            collector = asyncio.create_task(subscription._collect())
            try:
                if topic_filter is not None:
                    await client.subscribe(topic_filter, qos=1)
                yield subscription
            finally:
                collector.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await collector

    return subscribe


# --- logging -----------------------------------------------------------------------------------


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(autouse=True)
def _fail_on_error_log(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the test if anything logged at ERROR or above, unless marked ``allow_error_log``."""
    handler = _ErrorRecords()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
    if handler.records and request.node.get_closest_marker("allow_error_log") is None:
        lines = "\n".join(
            f"{record.levelname} {record.name}: {record.getMessage()}" for record in handler.records
        )
        pytest.fail(f"unexpected ERROR log records (mark allow_error_log if expected):\n{lines}")


@contextlib.asynccontextmanager
async def subscribed_in_background(
    run: Coroutine[object, object, None], subscribed: asyncio.Event, within: float
) -> AsyncIterator[None]:
    """A consumer's ``run`` as a task, entered once it set ``subscribed`` (within ``within``
    seconds), cancelled on exit."""
    task = asyncio.create_task(run)
    try:
        async with asyncio.timeout(within):
            await subscribed.wait()
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
