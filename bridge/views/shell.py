"""``chessbridge watch``: a live terminal view of one table or all tables (the I/O shell).

One MQTT subscription to ``chessbridge/1/table/{table or +}/#``, reconnecting with backoff
(:mod:`bridge.mqtt.session`), that folds every payload into a :class:`~bridge.views.model.
TableView` and either redraws the screen (:mod:`bridge.views.render`, on a terminal) or prints
one line per event (``--plain``, or when the output is not a terminal). On a terminal the
screen uses Unicode pieces and colours when the terminal can show them (:func:`screen_style`;
``NO_COLOR`` turns colours off). A :class:`Caption` lets another part of the process (the demo)
show lines above the tables.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import shutil
import sys
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Final, TextIO

import aiomqtt
import msgspec

from bridge.logs import escape
from bridge.mqtt import session
from bridge.mqtt.session import (
    SubscriptionRefusedError,
    check_tls,
    refused_credentials,
    run_sessions,
    subscribe,
)
from bridge.views.model import PayloadError, TableView
from bridge.views.render import PLAIN, Style, fit, render, room
from bridge.wire import payloads
from bridge.wire.config import BrokerSettings
from drivers.backoff import Backoff

EXIT_REFUSED: Final = 2
"""Exit status when the broker refuses our credentials or the arguments are unusable."""

_REDRAW_INTERVAL: Final = 0.1
"""At most this many redraws per second: 1 / this."""

_RECONNECT_MIN: Final = 0.5
_RECONNECT_MAX: Final = 30.0
_KEEPALIVE: Final = 30
_NOTES_KEPT: Final = 3
_PROG: Final = "chessbridge watch"

# Paho reports a dropped connection at ERROR; we say it ourselves on stderr, once, plainly.
_MQTT_LOGGER: Final = logging.getLogger("bridge.watch.mqtt")
_MQTT_LOGGER.setLevel(logging.CRITICAL)


def topic_filter(table: str | None) -> str:
    """``chessbridge/1/table/{table or +}/#``.

    Raises:
        ValueError: the table id cannot be a topic level.
    """
    if table is None:
        return f"{payloads.TOPIC_ROOT}/table/+/#"
    return payloads.topic(table, "#")


class Caption:
    """Lines shown above the tables on the screen, or as plain lines, while a view runs."""

    def __init__(self) -> None:
        self.lines: tuple[str, ...] = ()
        self._listeners: list[Callable[[tuple[str, ...]], None]] = []

    def show(self, *lines: str) -> None:
        """Replace the caption (no lines: clear it)."""
        self.lines = lines
        for listener in self._listeners:
            listener(lines)

    def listen(self, listener: Callable[[tuple[str, ...]], None]) -> None:
        """Call ``listener`` with the new lines on every :meth:`show`."""
        self._listeners.append(listener)


def screen_style(out: TextIO, environ: Mapping[str, str] = os.environ) -> Style:
    """What ``out`` can show: Unicode pieces if its encoding has them and the terminal is not
    the Linux console (whose font lacks them); colours unless ``NO_COLOR`` is set or the
    terminal is dumb."""
    term = environ.get("TERM", "")
    encoding = getattr(out, "encoding", None) or "ascii"
    try:
        codecs.encode("♔♚", encoding)
        unicode = term != "linux"
    except (UnicodeEncodeError, LookupError):
        unicode = False
    colour = term not in ("", "dumb") and "NO_COLOR" not in environ
    return Style(unicode=unicode, colour=colour)


class _OutputClosedError(Exception):
    """Writing to ``out`` failed (e.g. a closed pipe): nobody is watching any more."""


class _RefusedError(Exception):
    """The broker will not let us in (credentials) or not let us subscribe."""


def _printable(envelope: payloads.Envelope) -> payloads.Envelope:
    """``envelope`` with every text in it (its data's, at any depth, names included) written
    printable (:func:`bridge.logs.escape`): a payload is text from outside, and a control
    character or an escape sequence in it (a player's name from ``assign``, a board's model)
    would move the cursor, repaint or retitle the terminal."""
    return msgspec.structs.replace(
        envelope, game=escape(envelope.game), data=_escaped(envelope.data)
    )


def _escaped(value: object) -> Any:
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {_escaped(key): _escaped(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_escaped(item) for item in value]
    return value


def _say(message: str) -> None:
    """One line on stderr."""
    print(f"{_PROG}: {message}", file=sys.stderr, flush=True)


class _Watcher:
    """The state of one ``watch`` run: the views, the output mode, the connection."""

    def __init__(
        self,
        broker: BrokerSettings,
        topics: str,
        *,
        table: str | None,
        screen: bool,
        out: TextIO,
        width: int | None,
        style: Style = PLAIN,
        caption: Caption | None = None,
        room: bool = False,
    ) -> None:
        self.settings = broker
        self.nodes = session.Nodes(broker)
        self.room = room
        self.topics = topics
        self.table = table
        self.screen = screen
        self.out = out
        self.width = width
        self.views: dict[str, TableView] = {}
        self.notes: deque[str] = deque(maxlen=_NOTES_KEPT)
        self.connection = "connecting"
        self._subscribed = False
        self.dirty = asyncio.Event()
        self.dirty.set()
        self._cleared = False
        self.style = style
        self.caption = caption if caption is not None else Caption()
        self.caption.listen(self._on_caption)

    def _on_caption(self, lines: tuple[str, ...]) -> None:
        if self.screen:
            self.dirty.set()
            return
        with contextlib.suppress(_OutputClosedError):
            for line in lines:
                self._write(line + "\n")

    @property
    def broker(self) -> str:
        """The broker node connected to (or tried next)."""
        return self.nodes.address

    # -- output ---------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            raise _OutputClosedError(str(exc)) from exc

    def emit(self, line: str) -> None:
        """A plain-mode line, or a screen redraw request."""
        if self.screen:
            self.dirty.set()
        else:
            self._write(line + "\n")

    def warn(self, message: str) -> None:
        """A warning: a plain line, or one of the last notes on the screen."""
        message = escape(message)  # it may quote a topic or a payload
        if self.screen:
            self.notes.append(f"warning: {message}")
            self.dirty.set()
        else:
            self._write(f"warning: {message}\n")

    def draw(self) -> None:
        """Redraw the whole screen (cursor home, each line cleared to its end)."""
        size = shutil.get_terminal_size()
        width = self.width if self.width is not None else size.columns
        what = f"table {self.table}" if self.table is not None else "all tables"
        title = f"chessbridge watch  {self.broker}  {self.connection}  ({what})"
        rows = max(size.lines - 1, 3)
        if self.room:
            text = room(  # in columns when it takes them; never taller than the screen
                self.views,
                width,
                title=title,
                notes=[*self.caption.lines, *self.notes],
                color=self.style.colour,
                height=rows,
            )
        else:
            text = render(
                self.views,
                width,
                title=title,
                caption=self.caption.lines,
                notes=list(self.notes),
                style=self.style,
            )
        lines = text.splitlines()
        if len(lines) > rows:
            lines = [
                *lines[: rows - 1],
                fit("... more below: a taller terminal shows it, or watch one with --table", width),
            ]
        prefix = "" if self._cleared else "\x1b[2J\x1b[?25l"  # clear once, hide the cursor
        self._cleared = True
        self._write(prefix + "\x1b[H" + "".join(f"{line}\x1b[K\n" for line in lines) + "\x1b[J")

    def restore_terminal(self) -> None:
        """Show the cursor again after the last screen."""
        if self._cleared:
            with contextlib.suppress(_OutputClosedError):
                self._write("\x1b[?25h")

    async def redraw_loop(self) -> None:
        """Redraw on every change, at most once per ``_REDRAW_INTERVAL``."""
        while True:
            await self.dirty.wait()
            self.dirty.clear()
            self.draw()
            await asyncio.sleep(_REDRAW_INTERVAL)

    # -- messages -------------------------------------------------------------------------

    def handle(self, topic: str, raw: object) -> None:
        """One received message: decode, drop duplicates, update the view, report."""
        where = payloads.split_topic(topic)
        if where is None:
            return
        table, suffix = where
        if suffix.partition("/")[0] in (payloads.REQUEST_PREFIX, payloads.RESPONSE_PREFIX):
            return  # arbiter commands and their answers are not game state
        if not isinstance(raw, bytes | bytearray):
            self.warn(f"{table}: unreadable payload on {topic}")
            return
        if not raw:
            return  # an empty retained payload clears the topic; nothing to show
        try:
            envelope = _printable(payloads.decode_envelope(bytes(raw)))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            self.warn(f"{table}: malformed payload on {topic}: {exc}")
            return
        view = self.views.get(table)
        if view is None:
            view = self.views[table] = TableView(escape(table))
        try:
            applied = view.apply(envelope)
        except PayloadError as exc:
            self.warn(f"{table}: malformed payload on {topic}: {exc}")
            return
        if applied is None:
            return
        if applied.line is not None:
            self.emit(applied.line)
        elif self.screen:
            self.dirty.set()

    # -- the connection -------------------------------------------------------------------

    def _set_connection(self, state: str) -> None:
        self.connection = state
        if self.screen:
            self.dirty.set()

    async def connect_loop(self) -> None:
        """Stay subscribed, reconnecting with capped, jittered exponential backoff.

        Raises:
            _RefusedError: the broker refused our credentials or the subscription.
            _OutputClosedError: the output went away.
        """
        self._failed = False
        await run_sessions(
            self._session,
            backoff=Backoff(_RECONNECT_MIN, _RECONNECT_MAX),
            failed=self._failure,
            stop=asyncio.Event(),  # runs until cancelled
            nodes=self.nodes,
        )

    async def _session(self) -> None:
        self._session_started = False
        async with session.client(
            self.nodes.current, keepalive=_KEEPALIVE, logger=_MQTT_LOGGER
        ) as client:
            self._session_started = True
            await self._subscribe(client)
            self._subscribed = True
            self._set_connection("connected")
            if self._failed:
                _say(f"reconnected to MQTT broker {self.broker}")
            elif not self.screen:
                _say(f"connected to MQTT broker {self.broker}, watching {self.topics}")
            self._failed = False
            async for message in client.messages:
                self.handle(message.topic.value, message.payload)

    def _failure(self, exc: aiomqtt.MqttError, wait: float) -> None:
        if not self._session_started and refused_credentials(exc):
            raise _RefusedError(
                f"MQTT broker {self.broker} refused the connection ({exc}): check "
                "the username/password in the config or environment"
            ) from exc
        self._set_connection("reconnecting")
        verb = "lost the connection to" if self._session_started else "cannot connect to"
        _say(f"{verb} MQTT broker {self.broker} ({exc}); retrying in {wait:.1f} s")
        self._failed = True

    async def _subscribe(self, client: aiomqtt.Client) -> None:
        try:
            await subscribe(client, self.topics, granted_before=self._subscribed)
        except SubscriptionRefusedError as exc:
            raise _RefusedError(f"MQTT broker {self.broker} {exc}") from None


async def watch(
    broker: BrokerSettings,
    *,
    table: str | None,
    plain: bool,
    stop: asyncio.Event | None,
    out: TextIO = sys.stdout,
    width: int | None = None,
    caption: Caption | None = None,
    style: Style | None = None,
    room_view: bool = False,
) -> int:
    """Show the tables live until ``stop`` is set (or Ctrl-C / cancellation); returns the exit code.

    Args:
        broker: where the broker is, the credentials (never shown) and TLS files.
        table: one table id, or ``None`` for all tables.
        plain: one line per event even on a terminal.
        stop: set it to end the view; ``None`` runs until cancelled.
        out: where the view goes; a non-terminal stream always gets plain lines.
        width: columns of the screen (default: the terminal's).
        caption: lines to show above the tables (plain mode: printed as they change).
        style: Unicode and colours on the screen (default: what ``out`` can show).
        room_view: one line per table on the screen (colour where ``style`` has it).

    Returns:
        0 when stopped, cancelled or when ``out`` was closed; 2 for a bad table id or TLS
        files that cannot be used, or when the broker refuses the credentials or the
        subscription. Connection failures are retried for ever with backoff and reported on
        stderr.
    """
    try:
        check_tls(broker)
        topics = topic_filter(table)
    except ValueError as exc:
        _say(str(exc))
        return EXIT_REFUSED
    screen = not plain and _is_terminal(out)
    watcher = _Watcher(
        broker,
        topics,
        table=table,
        screen=screen,
        out=out,
        width=width,
        style=style if style is not None else screen_style(out) if screen else PLAIN,
        caption=caption,
        room=room_view,
    )
    stopped = stop if stop is not None else asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    try:
        connection = asyncio.create_task(watcher.connect_loop(), name="watch connection")
        waiter = asyncio.create_task(_wait(stopped), name="watch stop")
        tasks = [connection, waiter]
        if screen:
            tasks.append(asyncio.create_task(watcher.redraw_loop(), name="watch screen"))
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            task.result()
    except asyncio.CancelledError:
        return 0
    except _RefusedError as exc:
        _say(str(exc))
        return EXIT_REFUSED
    except _OutputClosedError:
        return 0
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if screen:
            with contextlib.suppress(_OutputClosedError):
                watcher.draw()
            watcher.restore_terminal()
    return 0


async def _wait(event: asyncio.Event) -> None:
    await event.wait()


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (OSError, ValueError):
        return False
