"""A table's payloads as its daemon publishes them, without the daemon: an engine fed by hand
(tests/table.py), each fact as its event, the retained ``game`` after every step that changed
the game and the retained ``board``, encoded by the wire layer and handed, decoded, to a
consumer (``on(table_id, envelope)``) in ``seq`` order."""

from __future__ import annotations

from collections.abc import Callable

import chess
import msgspec

from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import Fact, TouchReported
from bridge.table.daemon import game_data
from bridge.wire import payloads
from drivers.choreography import Step, steps
from tests.table import HandFed

TS = 1_777_777_777.0
Consumer = Callable[[str, payloads.Envelope], object]


class Published:
    """One table's engine, what it publishes handed to ``on``."""

    def __init__(
        self,
        on: Consumer,
        table: str = "t1",
        board: chess.Board | None = None,
        *,
        serial: str | None = "01234",
        touches: bool = True,
        game: str = "g1",
    ) -> None:
        self.on = on
        self.table = table
        self.hand = HandFed(Arbiter(EngineConfig(), board))
        self.touches = touches
        self.game = game
        self.epoch = 1
        self.seq = 0
        self.set_board("connected", serial=serial)
        self.snapshot()

    @property
    def arbiter(self) -> Arbiter:
        return self.hand.arbiter

    def publish(
        self, type_: str, data: msgspec.Struct, extra: dict[str, str | int | None] | None = None
    ) -> None:
        self.seq += 1
        raw = payloads.encode(self.table, self.game, self.epoch, self.seq, TS, type_, data, extra)
        self.on(self.table, payloads.decode_envelope(raw))

    def set_board(
        self, state: str, *, serial: str | None = "01234", battery: int | None = None
    ) -> None:
        data = payloads.BoardData(
            state=state,  # type: ignore[arg-type]
            driver="dgt",
            uri="dgt:/dev/ttyACM0",
            serial=serial,
            battery=battery,
        )
        self.publish("board", data)

    def status(self, state: str) -> None:
        data = payloads.StatusData(state=state)  # type: ignore[arg-type]
        self.publish("status", data, extra={"state": state})

    def snapshot(self) -> None:
        self.publish("game", game_data(self.arbiter.snapshot(), self.game, "fide-2018", self.seq))

    def facts(self, facts: list[Fact]) -> None:
        """Each fact as its event, then the game if it changed."""
        changed = False
        for fact in facts:
            if isinstance(fact, TouchReported) and not self.touches:
                continue
            type_, _, data = payloads.fact_data(fact)
            self.publish(type_, data)
            changed = changed or not isinstance(fact, TouchReported)
        if changed:
            self.snapshot()

    def do(self, seq: list[Step], interval: float = 0.05) -> None:
        """Lifts and places by hand, one by one, each published as it comes."""
        for step in seq:
            self.facts(self.hand.do([step], interval))

    def wait(self, seconds: float) -> None:
        self.facts(self.hand.wait(seconds))

    def play(self, san: str) -> chess.Move:
        """Make the move ``san`` by hand and let it be released."""
        board = self.arbiter.board.copy()
        move = board.parse_san(san)
        self.do(steps(board, move))
        self.wait(1.0)
        return move

    def new_game(self, fen: str = chess.STARTING_FEN, game: str = "g2") -> None:
        """An arbiter's new game: the engine's game replaced, the board left as it stands."""
        self.game = game
        self.arbiter.set_game(chess.Board(fen))
        self.snapshot()
