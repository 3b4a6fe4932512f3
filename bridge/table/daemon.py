"""The table daemon: board → engine → publisher, and the arbiter's commands. The composition root.

One asyncio loop runs three things: the board supervisor (:mod:`bridge.table.supervisor`: the
link of whatever family, reconnecting and recovering), the publisher (its own reconnect loop and
durable outbox), and the engine's timer (armed with ``loop.call_at`` at
``Arbiter.next_deadline()``). The table is the supervisor's sink: the engine is fed in the loop's
thread, each board event at the time it arrived (``event.at``, the loop's clock), so that events
held during a recovery are judged as they happened; the engine's time never goes back, and timers
that fell due before an event are fired first.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import shutil
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

import chess
import msgspec

from bridge import __version__
from bridge.arbiter import rules
from bridge.arbiter.engine import Arbiter, EngineConfig, GameSnapshot
from bridge.arbiter.facts import ClockPressed, Fact, MovePlayed, TouchReported
from bridge.mqtt.outbox import Outbox
from bridge.mqtt.publisher import Publisher
from bridge.mqtt.records import StoredAnswer
from bridge.table import sdnotify
from bridge.table.lights import SquareLights
from bridge.table.supervisor import BoardSupervisor
from bridge.wire import payloads
from bridge.wire.config import BrokerSettings, Config, link_settings
from drivers import FAMILIES, BoardUri, create_link
from drivers.errors import LinkError
from drivers.events import BoardEvent, BoardSnapshot, ClockSide, Occupant
from drivers.link import LedDisplay, RecoveredStep

if TYPE_CHECKING:
    from bridge.table.commands import CommandOutcome
    from bridge.wire.commands import Response

log = logging.getLogger("chessbridge")

GAME_KEY: Final = "game"
"""Outbox key/value entry holding the game in progress."""

GAME_DELAY: Final = 0.02
"""Seconds the retained ``game`` waits after the events that changed it (they go first)."""

GAME_INTERVAL: Final = 0.5
"""Least seconds between two publications of the retained ``game`` for what is not a move (a
press, an alert, a command): a move, its touches and its press make one publication."""

GAME_AFTER_MOVE: Final = 0.45
"""Seconds the retained ``game`` may wait after a move for the mover's clock press (the press
ends the wait), so that a move and its press at a human pace are one publication. A move whose
press came first (a promotion completed after it, 2018 7.5.2) or with it does not wait, and no
move waits longer: the game follows every move within 0.5 s (docs/mqtt.md)."""

CHECKPOINT_EVERY: Final = 10.0
"""Seconds between outbox checkpoints (the WAL is not checkpointed inside commits)."""

BOARD_CLOSE: Final = 5.0
"""Seconds the board's link may take to close when the daemon stops."""
RETRY_EVERY: Final = 2.0
"""Seconds between tries to write the outbox while the disk refuses (full, failing)."""


class SavedGame(msgspec.Struct, frozen=True, kw_only=True):
    """The game in progress as kept on disk, to resume after a restart."""

    id: str
    start_fen: str
    moves: list[str]
    rules: str
    result: str | None = None
    assignment: payloads.Assignment = msgspec.field(default_factory=payloads.Assignment)
    clock_white_side: Literal["left", "right"] | None = None
    """Which clock side was White's, once known: a restart must not have to guess it again."""


class DaemonOptions(msgspec.Struct, kw_only=True):
    """What ``chessbridge run`` was asked to do."""

    board: BoardUri
    table: str
    broker: BrokerSettings
    rules: str
    state_dir: Path
    config: Config = msgspec.field(default_factory=Config)
    reconnect_min: float = 0.5
    reconnect_max: float = 10.0


class TableDaemon:
    """One table: a board, its engine, its publisher."""

    def __init__(self, options: DaemonOptions) -> None:
        self.options = options
        self.outbox = Outbox(options.state_dir, defer_sync=True)  # synced in run()
        self._engine_config = engine_config(options)
        self.assignment = payloads.Assignment()
        self.game_id, self.arbiter = self._load_game()
        self.publisher = Publisher(
            options.table,
            options.broker,
            self.outbox,
            game_id=self.game_id,
            on_request=self._on_request,
        )
        self._describe(options)
        self.outbox.on_trouble = self._storage_trouble
        if self.outbox.trouble is not None:  # opened on a full disk
            self._storage_trouble(self.outbox.trouble)
        self.board = BoardSupervisor(
            options.board,
            self,
            reconnect_min=options.reconnect_min,
            reconnect_max=options.reconnect_max,
            link_factory=functools.partial(
                create_link,
                settings=msgspec.structs.replace(
                    link_settings(options.config), state_dir=str(options.state_dir)
                ),
            ),
        )
        self.first_open = self.board.first_open
        self._shown_rotated = False
        self.lights = SquareLights()
        self._game_due = False
        self._game_timer: asyncio.TimerHandle | None = None
        self._game_sent_at = float("-inf")
        self._pressed_by: chess.Color | None = None
        """Who pressed the clock last (``None``: nobody yet, or colours not known)."""
        self.moves = MoveLists()
        """The game's moves, kept move by move for the retained game and the saved one."""
        self._last_seq = self.outbox.last_seq
        self._timer: asyncio.TimerHandle | None = None
        self._engine_now = float("-inf")
        """The latest time the engine was given (its time never goes back)."""

    # -- running ----------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set. A board that cannot be opened at start raises LinkError.

        The board is opened before anything is published, so a wrong path or a device that is
        not a board ends the process at once with one clear line (systemd restarts it later).
        """
        resuming = bool(self.arbiter.board.move_stack)
        # The new epoch is made durable while the board opens (an fsync takes milliseconds, more
        # on an SD card), and before anything of it can be sent.
        durable = asyncio.create_task(asyncio.to_thread(self.outbox.sync))
        try:
            await self.board.open(recover=resuming)
        except LinkError:
            await durable
            self.outbox.close()
            raise
        await durable
        self._publish_game()
        sdnotify.ready()  # the board answers; the broker may come later (moves wait in the outbox)
        publisher = asyncio.create_task(self.publisher.run(), name="publisher")
        board = asyncio.create_task(self.board.run(recover=resuming), name="board")
        stopper = asyncio.create_task(stop.wait(), name="stop")
        # systemd's watchdog is fed from this loop, only while both supervisors are alive: a
        # hung loop or a dead supervisor gets the service restarted (Restart=on-failure).
        watchdog = asyncio.create_task(
            sdnotify.watchdog_loop(lambda: not publisher.done() and not board.done()),
            name="watchdog",
        )
        checkpoints = asyncio.create_task(self._upkeep(), name="upkeep")
        try:
            done, _ = await asyncio.wait(
                {publisher, board, stopper}, return_when=asyncio.FIRST_COMPLETED
            )
            for task in done:
                if task is not stopper:
                    task.result()  # re-raise a crash
        finally:
            sdnotify.stopping()
            self._flush_game()
            for task in (board, stopper, watchdog, checkpoints):
                task.cancel()
            # The board's link closes its port or radio as it goes; bounded, so that a link
            # that cannot close never keeps the daemon (and what it has to publish) from going.
            _, closing = await asyncio.wait({board}, timeout=BOARD_CLOSE)
            if closing:
                log.warning("the board link did not close within %g s; going on", BOARD_CLOSE)
            elif not board.cancelled() and board.exception() is not None:
                log.debug("the board task ended with %r", board.exception())
            if self._timer is not None:
                self._timer.cancel()
            await self.publisher.stop()
            publisher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await publisher
            self.outbox.close()

    async def _upkeep(self) -> None:
        """Fold the outbox's write-ahead log into its database (off the event loop); while the
        disk refuses writes, try again every ``RETRY_EVERY`` seconds instead."""
        loop = asyncio.get_running_loop()
        checkpointed = loop.time()
        while True:
            await asyncio.sleep(RETRY_EVERY)
            if self.outbox.trouble is not None:
                self.outbox.retry()
                continue
            if loop.time() - checkpointed < CHECKPOINT_EVERY:
                continue
            checkpointed = loop.time()
            try:
                await asyncio.to_thread(self.outbox.checkpoint)
            except sqlite3.Error as exc:
                log.warning("outbox checkpoint failed (%s); will retry", exc)

    def _storage_trouble(self, reason: str | None) -> None:
        """The outbox stopped (or started again) writing to the disk: say so, once."""
        where = self.outbox.state_dir
        if reason is None:
            log.info("the outbox in %s is written to the disk again", where)
            self.publisher.set_problem(None)
            sdnotify.status("outbox written again")
            return
        free = ""
        with contextlib.suppress(OSError):
            usage = shutil.disk_usage(where)
            free = f" ({usage.free / 1e6:.1f} MB free of {usage.total / 1e6:.1f} MB)"
        log.error(
            "cannot write the outbox in %s: %s%s; free space on that file system: the game goes "
            "on in memory and over MQTT, and is written once there is room (a restart before "
            "then loses what was not sent)",
            where,
            reason,
            free,
        )
        self.publisher.set_problem(
            f"the outbox cannot be written ({reason}, in {where}): the game is kept in memory "
            "until space is freed there"
        )
        sdnotify.status(f"outbox not written: {reason}")

    # -- events -----------------------------------------------------------------------------

    # BoardSink: what the board supervisor feeds.

    def board_event(self, event: BoardEvent) -> None:
        """A physical event: the engine judges it at the time it arrived."""
        now = self._advance(event.at)
        self._emit(self.arbiter.feed(event, now))

    def board_changed(self) -> None:
        """The link's state or the board's identity changed: the retained ``board`` again."""
        board = self.board
        sdnotify.status(f"board {board.state}" + (f": {board.error}" if board.error else ""))
        self._publish_board()
        if board.state != "connected":
            self.lights.forget()
        self.lights.update(self.arbiter, (), self._leds())

    def last_seen(self) -> Sequence[Occupant | None]:
        """The board as the engine last saw it (board frame)."""
        return self.arbiter.last_seen()

    def recovered(
        self, steps: list[RecoveredStep] | None, snapshot: BoardSnapshot | None, at: float
    ) -> None:
        """Replay what the board stored, then take its full board (read at ``at``) as the truth."""
        now = self._advance(at)
        self._emit(self.arbiter.recover(steps, snapshot, now))

    def _advance(self, at: float) -> float:
        """The engine's time for something that happened at ``at``, after the timers due."""
        now = max(at, self._engine_now)
        deadline = self.arbiter.next_deadline()
        while deadline is not None and deadline <= now:
            self._engine_now = max(deadline, self._engine_now)
            self._emit(self.arbiter.handle_timer(self._engine_now))
            following = self.arbiter.next_deadline()
            if following == deadline:
                break  # nothing came due after all: never loop on one deadline
            deadline = following
        self._engine_now = now
        return now

    def _now(self) -> float:
        """The engine's time now (for timers and commands)."""
        return self._advance(asyncio.get_running_loop().time())

    def _on_timer(self) -> None:
        self._timer = None
        self._emit(self.arbiter.handle_timer(self._now()))

    def _emit(self, facts: list[Fact]) -> None:
        """Publish the facts of one step and save the game with them: one transaction, so a
        crash cannot keep the move's event without the game (or the other way round)."""
        game_changed = False
        touches = self.options.config.engine.touch_events
        played: list[MovePlayed] = []
        with self.outbox.batch():
            for fact in facts:
                if isinstance(fact, TouchReported) and not touches:
                    continue
                self._last_seq = self.publisher.publish_fact(fact)
                if isinstance(fact, MovePlayed):
                    played.append(fact)
                    self.moves.played(fact)
                elif isinstance(fact, ClockPressed):
                    self._pressed_by = fact.by
                game_changed = game_changed or not isinstance(fact, TouchReported)
            if game_changed:
                self._save_game()
            # A move whose press came before it or with it (the clock already runs for the
            # opponent) has nothing to wait for: its game goes right after its events.
            at_once = bool(played) and self._pressed_by == played[-1].color
            if at_once:
                self._game_sent_with_move()
        self.publisher.send_now()  # committed: on the wire before anything else is done
        if played and not at_once:
            self._game_changed(GAME_AFTER_MOVE, coalesce=False)
        elif game_changed and not at_once:
            self._game_changed()
        for move in played:
            log.info("ply %d: %s (%s)", move.ply, move.san, move.completed_by.value)
        if self.arbiter.rotated != self._shown_rotated and self.board.state == "connected":
            self._publish_board()
        self._arm_timer()
        self.lights.update(self.arbiter, facts, self._leds())

    def _game_changed(self, wait: float = GAME_DELAY, *, coalesce: bool = True) -> None:
        """Publish the retained ``game`` within ``wait`` seconds: after the events that changed
        it (they go to the broker first), no later than a publication already due sooner and,
        with ``coalesce``, at most once every ``GAME_INTERVAL`` seconds (a move's is never put
        off by that: it is due ``wait`` after the move, whatever went before)."""
        loop = asyncio.get_running_loop()
        at = loop.time() + wait
        if coalesce:
            at = max(at, self._game_sent_at + GAME_INTERVAL)
        timer = self._game_timer
        if timer is not None:
            if timer.when() <= at:
                return
            timer.cancel()
        self._game_due = True
        self._game_timer = loop.call_at(at, self._flush_game)

    def _leds(self) -> LedDisplay | None:
        link = self.board.link
        return None if link is None or self.board.state != "connected" else link.leds

    def _game_sent_with_move(self) -> None:
        """Publish the retained ``game`` now, in the move's step right after its events (so in
        their transaction), and drop any publication due later."""
        if self._game_timer is not None:
            self._game_timer.cancel()
            self._game_timer = None
        self._game_due = False
        self._publish_game()
        self._game_sent_at = asyncio.get_running_loop().time()

    def _flush_game(self) -> None:
        if self._game_timer is not None:
            self._game_timer.cancel()
            self._game_timer = None
        if self._game_due:
            self._game_due = False
            self._publish_game()
            self._game_sent_at = asyncio.get_running_loop().time()

    def _arm_timer(self) -> None:
        deadline = self.arbiter.next_deadline()
        if self._timer is not None:
            if deadline is not None and self._timer.when() == deadline:
                return
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            self._timer = asyncio.get_running_loop().call_at(deadline, self._on_timer)

    # -- retained state ---------------------------------------------------------------------

    def _publish_board(self) -> None:
        board = self.board
        info = board.info
        orientation: Literal["normal", "rotated"] | None = None
        if board.state == "connected":
            orientation = "rotated" if self.arbiter.rotated else "normal"
            self._shown_rotated = self.arbiter.rotated
        self.publisher.set_board(
            payloads.BoardData(
                state=board.state,
                driver=self.options.board.scheme,
                uri=str(self.options.board),
                model=info.trademark,
                serial=info.serial,
                firmware=info.version,
                battery=info.battery_percent,
                charging=info.charging,
                rssi=info.rssi,
                orientation=orientation,
                error=board.error,
            )
        )

    def _publish_game(self) -> None:
        snap = self.arbiter.snapshot()
        moves = self.moves.of(self.arbiter)
        self._last_seq = self.publisher.set_game(
            game_data(
                snap,
                self.game_id,
                self.options.rules,
                self._last_seq,
                assignment=self.assignment,
                moves=moves,
            )
        )

    def _save_game(self) -> None:
        arbiter = self.arbiter
        side = arbiter.white_side
        saved = SavedGame(
            id=self.game_id,
            start_fen=arbiter.start_fen,
            moves=list(self.moves.of(arbiter).uci),
            rules=self.options.rules,
            result=None if arbiter.result is None else arbiter.result.result,
            assignment=self.assignment,
            clock_white_side=None if side is None else side.value,
        )
        self.outbox.put(GAME_KEY, msgspec.json.encode(saved))

    def _describe(self, options: DaemonOptions) -> None:
        """The optional retained descriptions for dashboards (``[discovery]``), built once."""
        wanted = options.config.discovery
        if not (wanted.index or wanted.home_assistant):
            return
        from bridge.wire import discovery  # only with [discovery] on

        table, driver = options.table, options.board.scheme
        if wanted.index:
            entry = discovery.index_entry(
                table,
                driver=driver,
                rules=options.rules,
                version=__version__,
                ts=time.time(),
                home_assistant=wanted.home_assistant,
            )
            self.publisher.describe(discovery.index_topic(table), entry)
        if wanted.home_assistant:
            config = discovery.home_assistant_config(table, driver=driver, version=__version__)
            topic = discovery.home_assistant_topic(table, wanted.home_assistant_prefix)
            self.publisher.describe(topic, config)

    def _load_game(self) -> tuple[str, Arbiter]:
        raw = self.outbox.get(GAME_KEY)
        if raw is not None:
            try:
                saved = msgspec.json.decode(raw, type=SavedGame)
                board = chess.Board(saved.start_fen)
                for uci in saved.moves:
                    board.push_uci(uci)
            except (msgspec.DecodeError, msgspec.ValidationError, ValueError) as exc:
                log.error("saved game in %s unreadable (%s); starting a new game", GAME_KEY, exc)
            else:
                self.assignment = saved.assignment
                if saved.result is None:
                    log.info("resuming game %s at ply %d", saved.id, board.ply())
                    config = self._engine_config
                    if config.white_side is None and saved.clock_white_side is not None:
                        side = ClockSide(saved.clock_white_side)
                        config = msgspec.structs.replace(config, white_side=side)
                    return saved.id, Arbiter(config, board)
        return new_game_id(self.options.table), Arbiter(self._engine_config)

    # -- arbiter commands ---------------------------------------------------------------------

    async def _on_request(self, command: str, raw: bytes) -> None:
        """One ``request/{command}`` from the broker: :meth:`carry_out`."""
        await self.carry_out(command, raw)

    async def carry_out(self, command: str, raw: bytes) -> Response | None:
        """Carry out one ``request/{command}`` and publish its outcome: the wire layer parses
        it (bridge.wire.commands), the table carries it out (bridge.table.commands). The
        broker's requests come here, and those made in this process (the LiveChess API's
        ``setup``): the response is published either way, and returned (``None``: a request
        ignored, its command name unusable).

        A request is carried out once: a repeat of an answered transaction (until its
        ``expires_at``) gets the first response and changes nothing.
        """
        # Only once a request arrives: not on the way to online.
        from bridge.table import commands
        from bridge.wire import commands as wire

        wall_now = time.time()
        request = wire.parse(command, raw, wall_now=wall_now)
        if isinstance(request, wire.Refusal):
            if request.silent:
                log.warning("ignoring a request with an unusable command name %r", command[:64])
                return None
            self._respond(commands.CommandOutcome.refused(request))
            return request.response
        first = self.outbox.answer(command, request.transaction, wall_now)
        if first is not None:
            response = msgspec.json.decode(first.response, type=wire.Response)
            self._respond(commands.repeat_of(request, response, first.digest))
            return response
        outcome = commands.carry_out(
            request, arbiter=self.arbiter, assignment=self.assignment, now=self._now()
        )
        setting, link = outcome.set_clock, self.board.link
        if setting is not None:
            clock = None if link is None else link.clock
            if link is None or self.board.state != "connected":
                outcome = outcome.failed("the board (and its clock) is not connected")
            elif clock is None:
                outcome = outcome.failed(
                    f"the {self.options.board.scheme} board has no clock the host can set"
                )
            else:
                await clock.set_clock(setting)
        # The changes, the response and the record of the answer: one transaction.
        with self.outbox.batch():
            outcome = self._apply(outcome)
            self._respond(outcome)
            answer = StoredAnswer(request.digest, msgspec.json.encode(outcome.response))
            self.outbox.remember_answer(
                command, request.transaction, answer, expires=request.expires, now=wall_now
            )
        return outcome.response

    def _apply(self, outcome: CommandOutcome) -> CommandOutcome:
        """What only the shell can do of an accepted request; the outcome with its data."""
        if outcome.new_game:
            game_id = new_game_id(self.options.table)
            if self.game_id == game_id or self.game_id.startswith(game_id + "-"):
                # Another game started in the same second: number this one.
                suffix = self.game_id[len(game_id) + 1 :]
                game_id += f"-{int(suffix) + 1 if suffix.isdigit() else 2}"
            self.game_id = self.publisher.game_id = game_id
            outcome = outcome.with_data(game=self.game_id)
        if outcome.assignment is not None:
            self.assignment = outcome.assignment
        if outcome.game_changed:
            self.moves.forget()  # a correction may keep the number of moves: rebuilt
        if outcome.facts:
            self._emit(list(outcome.facts))  # saves and republishes the game
        elif outcome.game_changed:
            self._save_game()
            self._publish_game()
            self._arm_timer()
            self.lights.update(self.arbiter, (), self._leds())
        if outcome.replay_from is not None:
            outcome = outcome.with_data(**self._replay(outcome.replay_from))
        return outcome

    def _respond(self, outcome: CommandOutcome) -> None:
        response = outcome.response
        what = "repeat, answered as before" if outcome.repeated else response.error or "done"
        log.info("%s %s: %s", outcome.command, response.status, what)
        self.publisher.publish("response", outcome.topic_suffix, response)

    def _replay(self, from_seq: int) -> dict[str, int | bool | None]:
        """Queue the journaled events from ``from_seq`` again, with their original seq."""
        from bridge.wire.commands import MAX_REPLAY

        rows = self.outbox.journal_since(from_seq, MAX_REPLAY + 1)
        more = len(rows) > MAX_REPLAY
        rows = rows[:MAX_REPLAY]
        self.outbox.requeue(rows)
        return {
            "count": len(rows),
            "first_seq": rows[0].seq if rows else None,
            "last_seq": rows[-1].seq if rows else None,
            "oldest_available": self.outbox.journal_oldest(),
            "truncated": more,
        }


def engine_config(options: DaemonOptions) -> EngineConfig:
    """The engine's settings: the config file's, else the board family's timing, else defaults."""
    engine = options.config.engine
    family = FAMILIES[options.board.scheme]
    white = None if engine.clock_white_side is None else ClockSide(engine.clock_white_side)
    config = EngineConfig(white_side=white, rules=rules.edition(options.rules))
    dwell = engine.dwell if engine.dwell is not None else family.dwell
    flicker = engine.flicker if engine.flicker is not None else family.flicker
    if dwell is not None:
        config = msgspec.structs.replace(config, dwell=dwell)
    if flicker is not None:
        config = msgspec.structs.replace(config, flicker=flicker)
    if family.scan is not None:
        config = msgspec.structs.replace(config, scan=family.scan)
    return config


def new_game_id(table: str, now: Callable[[], dt.datetime] | None = None) -> str:
    """A fresh game id: the table and the UTC start time."""
    stamp = (now or (lambda: dt.datetime.now(dt.UTC)))()
    return f"{table}-{stamp.strftime('%Y%m%dT%H%M%SZ')}"


class MoveLists:
    """The game's moves as the retained ``game`` and the saved game hold them, kept up to date
    move by move (a move appended, a superseding one replacing the last) instead of being
    rebuilt from the whole game at every publication; rebuilt whenever the game was changed
    otherwise (a takeback, a correction, a position set, a new game, an illegal move that
    stood).

    Such a change replaces the engine's board (``Arbiter.set_game`` and the restart after an
    illegal move that stood take a new one): the lists are tied to the board they were made
    from, so a correction that keeps the number of moves (``correct_move``) is rebuilt too, and
    ``start_fen`` + ``moves`` replays to ``fen``. The shell also calls :meth:`forget` after
    every command that changed the game.
    """

    def __init__(self) -> None:
        self._first_ply = 1
        self._uci: list[str] = []
        self._san: list[str] = []
        self._list: payloads.MoveList | None = None
        self._board: chess.Board | None = None
        """The engine's board the lists follow (``None``: rebuild at the next :meth:`of`)."""

    def forget(self) -> None:
        """The game was changed other than move by move: rebuild at the next :meth:`of`."""
        self._board = None
        self._list = None

    def played(self, move: MovePlayed) -> None:
        """``move`` was recorded (or replaced the last one)."""
        index = move.ply - self._first_ply
        if index < 0 or index > len(self._uci):
            self._board = None  # not this game's: :meth:`of` rebuilds
            return
        del self._uci[index:], self._san[index:]
        self._uci.append(move.move.uci())
        self._san.append(move.san)
        self._list = None

    def of(self, arbiter: Arbiter) -> payloads.MoveList:
        """The moves of ``arbiter``'s game (rebuilt when its board was replaced, or when their
        count differs)."""
        board = arbiter.board
        if board is not self._board or len(board.move_stack) != len(self._uci):
            snap = arbiter.snapshot()
            self._board = board
            self._first_ply = chess.Board(snap.start_fen).ply() + 1
            self._uci = [uci for uci, _ in snap.moves]
            self._san = [san for _, san in snap.moves]
            self._list = None
        if self._list is None:
            self._list = payloads.MoveList(
                first_ply=self._first_ply, uci=tuple(self._uci), san=tuple(self._san)
            )
        return self._list


def game_data(
    snap: GameSnapshot,
    game_id: str,
    rules: str,
    last_seq: int,
    *,
    assignment: payloads.Assignment | None = None,
    moves: payloads.MoveList | None = None,
) -> payloads.GameData:
    """The retained ``game`` payload of an engine snapshot (with the table's assignment).

    ``moves``: the game's moves kept up to date by the caller (:class:`MoveLists`); by default
    they are made from the snapshot's.
    """
    if moves is None:
        moves = payloads.MoveList(
            first_ply=chess.Board(snap.start_fen).ply() + 1,
            uci=tuple(uci for uci, _ in snap.moves),
            san=tuple(san for _, san in snap.moves),
        )
    result = snap.result
    return payloads.GameData(
        id=game_id,
        fen=snap.fen,
        start_fen=payloads.game_start(snap.start_fen),
        moves=moves,
        clocks=payloads.clocks(snap.clock),
        turn=payloads.color_name(snap.turn),
        alerts=tuple(payloads.alert_data(alert) for alert in snap.alerts),
        result=None if result is None else result.result,
        reason=None if result is None else result.reason,
        article=None if result is None else result.article,
        claimable=snap.claimable,
        rules=rules,
        last_seq=last_seq,
        players=None if assignment is None else assignment.players(),
        event=None if assignment is None else assignment.event,
        round=None if assignment is None else assignment.round,
        board=None if assignment is None or assignment.board is None else str(assignment.board),
    )
