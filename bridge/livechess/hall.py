"""The boards the LiveChess API serves, folded from the tables' payloads (pure: no I/O, no clock).

Each table is a :class:`LiveTable`: the views' :class:`~bridge.views.model.TableView` of its
payloads (duplicates dropped, superseding moves applied, each retained ``game`` taken), and
beside it what a LiveChess client sees that a game does not say: the physical board and when the
clock was last read. :class:`Hall` holds the tables, in table id order, each with a serial
number unique among them.

The physical board is the game's position with :attr:`LiveTable.lifted`: the squares where the
board differs from it, each with what stands there, known from the table's ``event/touch``
(every lift and place, in the player's frame). A touch sets its square; a move explains the
squares it touched (they read as the position after it); a square that reads as the position
is forgotten. A ``game`` that replaces the position otherwise (a new game, an arbiter's
takeback or correction: the pieces did not move by themselves) keeps the pieces where they
stood, once the table has been seen to publish touches; a ``game`` that only adds moves missed
is taken as those moves. A table that publishes no touches (``[engine] touch_events = false``)
shows the game's position; a venue's table is taken to publish them once one was seen.

The mapping (docs/livechess.md): ``serialnr`` is the board's serial number where it reports
one, else the table id (and the table id for the second of two boards reporting the same);
``state`` is ``ACTIVE`` while the board is connected, ``NOTRESPONDING`` while it is connecting
or lost or the table's daemon is, ``null`` before the table said anything of its board;
``battery`` is the board's, as ``"84%"``; ``source`` the board's URI; ``comment`` the table.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

import chess

from bridge.views.model import TableView, natural_key
from bridge.wire import payloads
from bridge.wire.payloads import Envelope, MoveData, MoveRecord, TouchData

MAX_TABLES: Final = 10_000
"""Tables served at most (a foreign publisher on the broker cannot grow the hall for ever)."""

ACTIVE: Final = "ACTIVE"
NOT_RESPONDING: Final = "NOTRESPONDING"

Clock = dict[str, int | bool | None]
"""``{"white": s, "black": s, "run": true | false | null, "time": ms}``: ``run`` is true while
White's clock runs, false while Black's does, null while stopped; ``time`` when it was read."""


class LiveTable:
    """One table as LiveChess clients see it."""

    def __init__(self, table_id: str) -> None:
        self.id = table_id
        self.view = TableView(table_id)
        self.lifted: dict[chess.Square, chess.Piece | None] = {}
        """Where the board differs from the game's position, and what stands there."""
        self.touching = False
        """Whether the table publishes its touches: one was seen, or its daemon says so."""
        self.clock_read: int | None = None
        """When the clock's times last changed (milliseconds since the epoch)."""

    # -- folding ----------------------------------------------------------------------------

    def apply(self, envelope: Envelope, received_ms: int) -> bool:
        """Fold one payload in (``received_ms``: when it came); whether it was taken.

        Raises:
            PayloadError: the payload's ``data`` does not fit its type; nothing changed.
        """
        view = self.view
        position, moves, game, clocks = view.position, view.moves, view.game_id, view.clocks
        folded = view.folded(envelope)
        if view.apply(envelope) is None:
            return False
        if envelope.type == "touch" and not folded:
            self.touching = True
            self._touched(payloads.data_as(envelope, TouchData))
        elif envelope.type == "move" and not folded:
            self._explained(payloads.data_as(envelope, MoveData).touched)
        elif envelope.type == "game" and (view.game_id != game or not _extends(view.moves, moves)):
            self._stood(position)
        self._forget_agreed()
        if view.clocks != clocks:
            self.clock_read = received_ms
        return True

    def _touched(self, touch: TouchData) -> None:
        square = chess.parse_square(touch.square)
        piece = None if touch.action == "lift" or touch.piece is None else touch.piece
        self.lifted[square] = None if piece is None else chess.Piece.from_symbol(piece)

    def _explained(self, squares: tuple[str, ...]) -> None:
        for name in squares:
            self.lifted.pop(chess.parse_square(name), None)

    def _stood(self, before: chess.Board | None) -> None:
        """The game's position was replaced, not played on: the pieces stay where they stood."""
        after = self.view.position
        if not self.touching or before is None or after is None:
            return
        for square in chess.SQUARES:
            piece = before.piece_at(square)
            if square not in self.lifted and piece != after.piece_at(square):
                self.lifted[square] = piece

    def _forget_agreed(self) -> None:
        position = self.view.position
        if position is None:
            return
        for square, piece in list(self.lifted.items()):
            if position.piece_at(square) == piece:
                del self.lifted[square]

    # -- what clients see -------------------------------------------------------------------

    @property
    def matches(self) -> bool:
        """Whether the board stands as the game's position."""
        return self.view.position is not None and not self.lifted

    def placement(self, *, flipped: bool = False) -> str | None:
        """The board as the placement field of a FEN (``None`` before the table's game is
        known); ``flipped``: turned round."""
        position = self.view.position
        if position is None:
            return None
        board = chess.BaseBoard(position.board_fen())
        for square, piece in self.lifted.items():
            board.set_piece_at(square, piece)
        if flipped:
            board = board.transform(chess.flip_vertical).transform(chess.flip_horizontal)
        return board.board_fen()

    @property
    def start_fen(self) -> str:
        """The position the game started from."""
        return self.view.start_fen or chess.STARTING_FEN

    @property
    def sans(self) -> list[str]:
        """The game's moves in SAN, as the table recorded them."""
        return [move.san for move in self.view.moves]

    @property
    def clock(self) -> Clock | None:
        """The clock as LiveChess gives it (``None``: no clock known)."""
        clocks = self.view.clocks
        if clocks is None:
            return None
        run = None if clocks.running is None else clocks.running == "white"
        return {"white": clocks.white, "black": clocks.black, "run": run, "time": self.clock_read}

    @property
    def state(self) -> str | None:
        """``ACTIVE``, ``NOTRESPONDING``, or ``None`` before the table said anything of its
        board."""
        board = self.view.board
        if board is None:
            return None
        if self.view.status in ("offline", "lost") or board.state != "connected":
            return NOT_RESPONDING
        return ACTIVE

    def entry(self, serialnr: str, *, flipped: bool = False) -> dict[str, object]:
        """The board's entry in ``eboards``."""
        board = self.view.board
        players = self.view.players or {}
        comment = f"table {self.id}"
        if "white" in players and "black" in players:
            comment += f": {players['white']} - {players['black']}"
        return {
            "serialnr": serialnr,
            "source": None if board is None else board.uri,
            "state": self.state,
            "battery": None if board is None or board.battery is None else f"{board.battery}%",
            "comment": comment,
            "board": self.placement(flipped=flipped),
            "flipped": flipped,
            "clock": self.clock,
        }


def _extends(now: list[MoveRecord], before: list[MoveRecord]) -> bool:
    """Whether the moves ``now`` are the moves ``before`` and maybe more after them."""
    return len(now) >= len(before) and all(
        (a.ply, a.uci) == (b.ply, b.uci) for a, b in zip(now, before, strict=False)
    )


class Hall:
    """Every table the API serves."""

    def __init__(self) -> None:
        self.tables: dict[str, LiveTable] = {}

    def add(self, table_id: str) -> LiveTable:
        """The table ``table_id``, added if new.

        Raises:
            OverflowError: already :data:`MAX_TABLES` tables and this is a new one.
        """
        table = self.tables.get(table_id)
        if table is None:
            if len(self.tables) >= MAX_TABLES:
                raise OverflowError(f"more than {MAX_TABLES} tables; ignoring {table_id!r}")
            table = self.tables[table_id] = LiveTable(table_id)
        return table

    def apply(self, table_id: str, envelope: Envelope, received_ms: int) -> bool:
        """Fold one payload into its table; whether it was taken.

        Raises:
            PayloadError: the payload's ``data`` does not fit its type.
            OverflowError: a new table beyond :data:`MAX_TABLES`.
        """
        return self.add(table_id).apply(envelope, received_ms)

    def ordered(self) -> list[LiveTable]:
        """The tables by table id (``t2`` before ``t10``)."""
        return sorted(self.tables.values(), key=lambda table: natural_key(table.id))

    def serials(self) -> dict[str, str]:
        """Each table's serial number (table id → ``serialnr``), unique among them."""
        taken: set[str] = set()
        out: dict[str, str] = {}
        for table in self.ordered():
            board = table.view.board
            serial = board.serial if board is not None and board.serial else table.id
            if serial in taken:
                serial = table.id if table.id not in taken else f"{serial} ({table.id})"
            taken.add(serial)
            out[table.id] = serial
        return out

    def eboards(self, flipped: Collection[str] = ()) -> list[dict[str, object]]:
        """The ``eboards`` list: every board in table id order, those of the tables in
        ``flipped`` turned round."""
        serials = self.serials()
        return [
            table.entry(serials[table.id], flipped=table.id in flipped) for table in self.ordered()
        ]

    def find(self, serialnr: str) -> LiveTable | None:
        """The table of board ``serialnr`` (a table id is taken too)."""
        for table_id, serial in self.serials().items():
            if serial == serialnr:
                return self.tables[table_id]
        return self.tables.get(serialnr)
