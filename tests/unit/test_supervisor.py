"""The board supervisor against a scripted link: open, recover, reconnect, hold and release.

The link here is a behavioural fake of the ``BoardLink`` protocol (a scripted board, as
python-chess's ``MockTransport`` is a scripted engine); the real DGT link is exercised against
the pty emulator in tests/integration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import chess
import pytest

from bridge.table.supervisor import BoardSupervisor
from drivers import BoardUri
from drivers.errors import BoardNotFoundError, LinkLostError
from drivers.events import (
    BoardEvent,
    BoardInfo,
    BoardSnapshot,
    ClockSide,
    Occupant,
    SquareEmptied,
)
from drivers.link import (
    BoardLink,
    Capabilities,
    EventCallback,
    RecoveredStep,
    StoredPress,
)

START = tuple(chess.Board().piece_at(sq) for sq in chess.SQUARES)


class ScriptedBoard:
    """A board behind a scripted link: how each open goes, what it says, what it stored."""

    def __init__(
        self,
        opens: list[bool],
        stored: list[RecoveredStep] | None,
        *,
        reread: BoardSnapshot | None = None,
    ) -> None:
        self.opens = opens
        self.stored = stored
        self.reread = reread
        """The full board the link reports again after the memory, as the protocol says."""
        self.links: list[ScriptedLink] = []
        self.recalled_with: list[list[Occupant | None]] = []

    def factory(self, uri: BoardUri, on_event: EventCallback) -> BoardLink:
        link = ScriptedLink(self, on_event, self.opens.pop(0))
        self.links.append(link)
        return link


class ScriptedLink(Capabilities):
    """A link with a memory and nothing else (its other capabilities: ``Capabilities``')."""

    def __init__(self, board: ScriptedBoard, on_event: EventCallback, opens: bool) -> None:
        self.board = board
        self.on_event = on_event
        self.opens = opens
        self.dead = asyncio.Event()

    @property
    def info(self) -> BoardInfo:
        return BoardInfo(at=0.0, serial="42")

    @property
    def memory(self) -> ScriptedLink:
        return self

    async def recall(self, last_seen: Sequence[Occupant | None]) -> list[RecoveredStep] | None:
        self.board.recalled_with.append(list(last_seen))
        self.on_event(SquareEmptied(square=chess.E2, at=1.0))  # live, during the recall
        if self.board.reread is not None:
            self.on_event(self.board.reread)
            self.on_event(SquareEmptied(square=chess.D2, at=3.0))  # after the board was read
        return self.board.stored

    async def open(self) -> None:
        if not self.opens:
            raise BoardNotFoundError("/dev/x", "no board at /dev/x")
        self.on_event(BoardSnapshot(squares=START, at=0.5))

    async def run(self) -> None:
        await self.dead.wait()
        raise LinkLostError("/dev/x", "board at /dev/x lost")

    async def close(self) -> None:
        pass


class Table:
    """Records what the supervisor feeds, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object]] = []
        self.times: list[float] = []
        self.supervisor: BoardSupervisor | None = None

    def board_event(self, event: BoardEvent) -> None:
        self.log.append(("event", type(event).__name__))
        self.times.append(event.at)

    def board_changed(self) -> None:
        assert self.supervisor is not None
        self.log.append(("state", self.supervisor.state))

    def last_seen(self) -> Sequence[Occupant | None]:
        return START

    def recovered(
        self, steps: list[RecoveredStep] | None, snapshot: BoardSnapshot | None, at: float
    ) -> None:
        self.log.append(("recovered", (steps, snapshot is not None)))
        self.times.append(at)


def supervised(board: ScriptedBoard) -> tuple[BoardSupervisor, Table]:
    table = Table()
    supervisor = BoardSupervisor(
        BoardUri("dgt", "/dev/x"),
        table,
        reconnect_min=0.01,
        reconnect_max=0.02,
        link_factory=board.factory,
    )
    table.supervisor = supervisor
    return supervisor, table


async def test_a_fresh_game_gets_events_live_and_recalls_nothing() -> None:
    board = ScriptedBoard([True], stored=[(chess.E2, None)])
    supervisor, table = supervised(board)
    await supervisor.open(recover=False)
    task = asyncio.create_task(supervisor.run(recover=False))
    await asyncio.sleep(0.05)
    task.cancel()
    assert table.log == [("event", "BoardSnapshot"), ("state", "connected")]
    assert board.recalled_with == []


async def test_a_resumed_game_holds_events_until_the_memory_is_replayed() -> None:
    changes: list[RecoveredStep] = [(chess.E2, None), (chess.E4, chess.Piece(chess.PAWN, True))]
    board = ScriptedBoard([True], stored=changes)
    supervisor, table = supervised(board)
    await supervisor.open(recover=True)
    task = asyncio.create_task(supervisor.run(recover=True))
    await asyncio.sleep(0.05)
    task.cancel()
    assert table.log == [
        ("state", "connected"),
        ("recovered", (changes, True)),  # the full board read at open, after the memory
        ("event", "SquareEmptied"),  # what arrived during the recall, after both
    ]
    assert table.times == [0.5, 1.0]  # the board read at open; the event as it arrived
    assert board.recalled_with == [list(START)]


async def test_what_came_before_the_board_read_after_the_memory_is_in_it() -> None:
    """The memory and the board read after it cover everything until then: square events held
    before that reading are dropped (they would count twice), later ones keep their time."""
    steps: list[RecoveredStep] = [(chess.E2, None), StoredPress(ClockSide.LEFT)]
    reread = BoardSnapshot(squares=START, at=2.0)
    board = ScriptedBoard([True], stored=steps, reread=reread)
    supervisor, table = supervised(board)
    await supervisor.open(recover=True)
    task = asyncio.create_task(supervisor.run(recover=True))
    await asyncio.sleep(0.05)
    task.cancel()
    assert table.log == [
        ("state", "connected"),
        ("recovered", (steps, True)),
        ("event", "SquareEmptied"),
    ]
    assert table.times == [2.0, 3.0]


async def test_a_lost_link_is_reopened_with_backoff_and_recovers() -> None:
    board = ScriptedBoard([True, False, False, True], stored=None)
    supervisor, table = supervised(board)
    await supervisor.open(recover=False)
    task = asyncio.create_task(supervisor.run(recover=False))
    await asyncio.sleep(0.02)
    board.links[0].dead.set()
    for _ in range(100):
        await asyncio.sleep(0.02)
        if len(board.links) == 4 and ("recovered", (None, True)) in table.log:
            break
    task.cancel()
    assert len(board.links) == 4
    assert ("state", "disconnected") in table.log
    assert table.log[-3:] == [
        ("state", "connected"),
        ("recovered", (None, True)),
        ("event", "SquareEmptied"),
    ]
    assert (supervisor.state, supervisor.error) == ("connected", None)


async def test_a_board_that_cannot_be_opened_at_start_raises() -> None:
    supervisor, _ = supervised(ScriptedBoard([False], stored=None))
    with pytest.raises(BoardNotFoundError, match="no board"):
        await supervisor.open(recover=False)


async def test_an_identity_said_once_is_line_noise_twice_in_a_row_the_boards() -> None:
    # A DGT message has no checksum: noise can frame a plausible serial number or firmware.
    # The board's identity does not change while it is connected; a new value counts when the
    # board says it twice in a row (its answer to the keep-alive comes every second).
    board = ScriptedBoard([True], stored=None)
    supervisor, _ = supervised(board)
    await supervisor.open(recover=False)
    link = board.links[0]
    link.on_event(BoardInfo(at=1.0, serial="13", battery_percent=80))
    assert (supervisor.info.serial, supervisor.info.battery_percent) == ("42", 80)
    link.on_event(BoardInfo(at=2.0, serial="42"))
    link.on_event(BoardInfo(at=3.0, serial="13"))
    assert supervisor.info.serial == "42"  # not twice in a row
    link.on_event(BoardInfo(at=4.0, version="1.9"))
    assert supervisor.info.version == "1.9"  # none known before: taken as said
    link.on_event(BoardInfo(at=5.0, version="7.0"))
    link.on_event(BoardInfo(at=6.0, serial="13"))
    assert (supervisor.info.serial, supervisor.info.version) == ("13", "1.9")
