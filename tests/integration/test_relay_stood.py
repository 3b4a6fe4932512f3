"""An illegal move that stood, end to end: an emulated DGT board with its clock, ``chessbridge
run`` (a subprocess) judging it under a fast-play edition, a real Mosquitto, and the relay.

A player makes an illegal move and presses; the opponent does not claim and replies, so the move
stands (1997 C.3, 2018 A.4.2) and the game goes on to a result. The relay's PGN must then read
back in python-chess and pgn-extract as two games: part 1 up to the illegal move, part 2 from
the position it left (``[SetUp "1"]``, ``[FEN]``), linked by their headers and comments. In
standard play the same move is put right and the game stays one game, with the penalty noted.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from bridge.demo.game import perform, press_side
from bridge.views.model import TableView
from bridge.views.render import render_table
from bridge.wire import payloads
from drivers.choreography import Style
from drivers.dgt.emulator import DgtEmulator
from tests.conftest import Mosquitto, Subscribe, Subscription
from tests.integration.test_end_to_end import daemon
from tests.pgn_check import pgn_extract_accepts, read_games, sans
from tests.relay_harness import Relay, eventually, running_relay

pytestmark = [pytest.mark.pty, pytest.mark.mosquitto]

SPEED = 6.0
"""Hands (and the clock) this many times faster than people."""


def on(sub: Subscription, suffix: str) -> list[dict[str, Any]]:
    """The envelopes received on ``suffix`` of the table, in order."""
    return [json.loads(bytes(m.payload)) for m in sub.on(suffix)]


def alerts(sub: Subscription, kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in on(sub, "event/alert") if e["data"]["kind"] == kind]


def said(node: chess.pgn.GameNode) -> str:
    """A comment on one line (the PGN wraps long ones)."""
    return " ".join(node.comment.split())


@dataclass
class Hands:
    """The players at the emulated board: moves made by hand, each completed by a press."""

    emu: DgtEmulator
    sub: Subscription
    rng: random.Random
    board: chess.Board

    def pause(self) -> float:
        return self.rng.uniform(0.12, 0.3) / SPEED

    async def play(self, sans_: str) -> None:
        """Legal moves, each pressed; each one's event is awaited before the next."""
        for san in sans_.split():
            move = self.board.parse_san(san)
            seen = len(self.sub.on("event/move"))
            await perform(self.emu, self.board, move, self.rng.choice(list(Style)), self.rng, SPEED)
            mover = self.board.turn
            self.board.push(move)
            await asyncio.sleep(self.pause())
            if not self.board.is_checkmate():
                await self.emu.press(press_side(mover))
            await self.moved(seen)

    async def moved(self, before: int) -> None:
        """Until the table has published more than ``before`` moves."""
        await self.sub.wait_for(lambda _: len(self.sub.on("event/move")) > before, within=10)

    async def shift(self, origin: str, target: str, *, press: bool = True) -> None:
        """Lift the piece on ``origin`` and put it on ``target``, legal or not; then press."""
        mover = self.board.turn
        piece = await self.emu.lift(origin)
        assert piece is not None
        await asyncio.sleep(self.pause())
        await self.emu.place(target, piece)
        await asyncio.sleep(self.pause())
        if press:
            await self.emu.press(press_side(mover))

    async def press(self, color: chess.Color) -> None:
        await self.emu.press(press_side(color))


async def ask(sub: Subscription, table: str, command: str, **fields: Any) -> dict[str, Any]:
    """An arbiter's command over MQTT; the ``data`` of its response."""
    body = {"transaction": uuid.uuid4().hex, "expires_at": time.time() + 60, **fields}
    suffix = f"response/{command}"
    before = len(sub.on(suffix))
    topic = payloads.topic(table, f"request/{command}")
    await sub.client.publish(topic, json.dumps(body).encode(), qos=1)
    await sub.wait_for(lambda _: len(sub.on(suffix)) > before, within=10)
    response: dict[str, Any] = on(sub, suffix)[before]["data"]
    assert response["status"] == "ok", response
    return response


async def shown(relay: Relay, table: str, done: Callable[[list[chess.pgn.Game]], bool]) -> str:
    """The table's PGN once ``done`` holds for its games."""

    async def check() -> str | None:
        async with relay.http.get(f"/table/{table}.pgn") as response:
            if response.status != 200:
                return None
            text = await response.text()
        return text if done(read_games(text)) else None

    return await eventually(check)


def notes(games: list[chess.pgn.Game]) -> str:
    """Every comment of ``games``, on one line."""
    return " ".join(said(node) for g in games for node in [g, *g.mainline()])


def game(sub: Subscription) -> dict[str, Any]:
    """The last retained ``game`` data received."""
    data: dict[str, Any] = on(sub, "game")[-1]["data"]
    return data


def arbiters_view(sub: Subscription, table: str) -> TableView:
    """Every payload received, folded in arrival order as ``chessbridge watch`` does."""
    view = TableView(table)
    for message in sub.messages:
        split = payloads.split_topic(message.topic.value)
        if split is not None and not split[1].startswith(payloads.REQUEST_PREFIX):
            view.apply(payloads.decode_envelope(bytes(message.payload)))
    return view


@dataclass(frozen=True)
class Stood:
    """One game with an illegal move that stands, and what the broadcast must show."""

    rules: str
    opening: str
    illegal: tuple[str, str] | None
    """The squares of the illegal move; ``None``: the clock pressed without a move (2018)."""
    offender: chess.Color
    reply: str
    later: str
    named: str
    article: str
    result: str
    reason: str


STOOD = [
    pytest.param(
        Stood(
            rules="fide-1997-blitz",
            opening="e4 e5 Bc4",
            illegal=("f8", "f6"),  # a bishop moved like a rook, over its own pawn
            offender=chess.BLACK,
            reply="Qh5",
            later="Nc6 Qxf7#",
            named="2... Bf8-f6 by Black",
            article="C.3",
            result="1-0",
            reason="checkmate",
        ),
        id="1997-blitz-to-mate",
    ),
    pytest.param(
        Stood(
            rules="fide-2018-blitz",
            opening="e4 e5 Nf3 Nc6 Bc4 Nf6",
            illegal=("c4", "c5"),  # a bishop moved like a rook
            offender=chess.WHITE,
            reply="d6",
            later="Nc3 Bg4",
            named="4. Bc4-c5 by White",
            article="A.4.2, B.4",
            result="0-1",
            reason="White resigned",
        ),
        id="2018-blitz-resigned",
    ),
    pytest.param(
        Stood(
            rules="fide-2018-blitz",
            opening="e4 e5",
            illegal=None,
            offender=chess.WHITE,
            reply="Nc6",
            later="Nf3 Nf6",
            named="2. (the clock pressed without a move) by White",
            article="A.4.2, B.4",
            result="1/2-1/2",
            reason="draw agreed",
        ),
        id="2018-blitz-press-without-a-move",
    ),
]


@pytest.mark.parametrize("case", STOOD)
async def test_an_illegal_move_that_stood_is_broadcast_as_two_linked_games(
    case: Stood,
    mosquitto: Mosquitto,
    mqtt_subscribe: Subscribe,
    table_id: str,
    tmp_path: Path,
) -> None:
    rng = random.Random(3)
    async with (
        DgtEmulator(speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "#")) as sub,
        daemon(
            f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "table", "--rules", case.rules
        ),
        running_relay(mosquitto, tmp_path / "relay") as relay,
    ):
        await started(sub)
        emu.set_clock(900, 900, running=press_side(chess.WHITE))
        hands = Hands(emu, sub, rng, chess.Board())
        await hands.play(case.opening)
        part_one = case.opening.split()

        # The illegal move, completed by its press: an illegal_move alert, nothing recorded.
        irregular = hands.board.copy(stack=False)
        if case.illegal is None:
            await hands.press(case.offender)
        else:
            await hands.shift(*case.illegal)
            origin, target = (chess.parse_square(s) for s in case.illegal)
            irregular.set_piece_at(target, irregular.remove_piece_at(origin))
        irregular.turn = not case.offender
        await sub.wait_for(lambda _: bool(alerts(sub, "illegal_move")), within=10)
        # Until the opponent replies, the broadcast notes the illegal move and its penalty.
        offender = "White" if case.offender == chess.WHITE else "Black"
        await shown(relay, table_id, lambda g: f"Illegal move by {offender}" in notes(g))

        # No claim: the opponent replies and the move stands.
        hands.board = chess.Board(irregular.fen())
        await hands.play(case.reply)
        await sub.wait_for(lambda _: bool(alerts(sub, "illegal_move_stood")), within=10)
        (stood,) = alerts(sub, "illegal_move_stood")
        assert (stood["article"], stood["details"]["move"]) == (case.article, irregular_uci(case))
        assert stood["details"]["fen"].split()[:2] == irregular.fen().split()[:2]
        start_fen: str = stood["details"]["fen"]

        await hands.play(case.later)
        if hands.board.is_checkmate():
            await sub.wait_for(lambda _: bool(on(sub, "event/result")), within=10)
        else:
            await ask(sub, table_id, "set_result", result=case.result, reason=case.reason)
        part_two = [case.reply, *case.later.split()]
        text = await shown(relay, table_id, lambda g: bool(g) and g[-1].headers["Result"] != "*")

        # The broadcast: two games, every move as played, linked.
        first, second = read_games(text)
        assert sans(first) == part_one
        assert sans(second) == part_two
        assert (first.headers["Part"], second.headers["Part"]) == ("1", "2")
        assert second.headers["Event"] == first.headers["Event"] + " (part 2)"
        assert (second.headers["SetUp"], second.headers["FEN"]) == ("1", start_fen)
        assert "SetUp" not in first.headers
        assert (first.headers["Result"], second.headers["Result"]) == ("*", case.result)
        assert second.headers["Table"] == first.headers["Table"] == table_id
        assert (
            f"Illegal move {case.named} stood (Art. {case.article}): nobody claimed before the "
            "opponent moved. The game continues in part 2" in said(first.end())
        )
        assert f"continues after the illegal move {case.named}, which stood" in said(second)
        assert case.reason in said(second.end())
        assert "Illegal move by" not in " ".join(text.split())  # it stood: no penalty noted
        assert None not in [node.clock() for node in second.mainline()]
        pgn_extract_accepts(text)

        everything = await relay.text("/round.pgn")
        mine = [g for g in read_games(everything) if g.headers["Table"] == table_id]
        assert [sans(g) for g in mine] == [part_one, part_two]
        pgn_extract_accepts(everything)

        # The arbiters: the retained game goes on from that position; page and view agree.
        await sub.wait_for(lambda _: game(sub)["result"] == case.result, within=10)
        data = game(sub)
        assert data["start_fen"] == start_fen
        assert data["moves"]["san"] == part_two
        assert data["moves"]["first_ply"] == chess.Board(start_fen).ply() + 1
        replay = chess.Board(start_fen)
        for uci in data["moves"]["uci"]:
            replay.push_uci(uci)
        assert replay.fen() == data["fen"]

        async with relay.http.get(f"/api/table/{table_id}") as response:
            page = await response.json()
        assert page["parts"] == 2
        assert [m["part"] for m in page["moves"]] == [1] * len(part_one) + [2] * len(part_two)
        assert any(case.named in note for note in page["notes"])

        view = arbiters_view(sub, table_id)
        assert view.start_fen == start_fen
        assert [m.san for m in view.moves] == part_two
        assert view.result is not None
        assert view.result.result == case.result
        assert any(a.kind == "illegal_move_stood" for a in view.alerts)
        assert any(case.later.split()[-1] in line for line in render_table(view, 100))


async def test_in_standard_play_an_illegal_move_put_right_stays_one_game_with_its_penalty(
    mosquitto: Mosquitto, mqtt_subscribe: Subscribe, table_id: str, tmp_path: Path
) -> None:
    """2018 standard: the illegal move never stands. The offender puts the bishop back, the
    opponent restarts his clock, and the game goes on: one game, the penalty as a comment."""
    rng = random.Random(5)
    async with (
        DgtEmulator(speed=SPEED) as emu,
        mqtt_subscribe(mosquitto, payloads.topic(table_id, "#")) as sub,
        daemon(
            f"dgt:{emu.path}", table_id, mosquitto.url, tmp_path / "table", "--rules", "fide-2018"
        ),
        running_relay(mosquitto, tmp_path / "relay") as relay,
    ):
        await started(sub)
        emu.set_clock(900, 900, running=press_side(chess.WHITE))
        hands = Hands(emu, sub, rng, chess.Board())
        await hands.play("e4 e5 Nf3 Nc6 Bc4 Nf6")
        await hands.shift("c4", "c5")
        await sub.wait_for(lambda _: bool(alerts(sub, "illegal_move")), within=10)
        await hands.shift("c5", "c4", press=False)  # the position before it, reinstated
        await hands.press(chess.BLACK)  # Black hands the clock back
        await hands.play("Nc3 d6")
        await ask(sub, table_id, "set_result", result="1/2-1/2", reason="draw agreed")
        played = ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "Nc3", "d6"]
        text = await shown(relay, table_id, lambda g: bool(g) and g[-1].headers["Result"] != "*")

        (only,) = read_games(text)
        assert sans(only) == played
        assert "Part" not in only.headers
        assert "FEN" not in only.headers
        nodes = list(only.mainline())
        assert said(nodes[5]).startswith("Illegal move by White (Art. 7.5.1): 2 minutes extra")
        assert [n for n in nodes if "Illegal" in n.comment] == [nodes[5]]
        assert alerts(sub, "illegal_move_stood") == []
        pgn_extract_accepts(text)
        assert "start_fen" not in game(sub)  # the standard position: left out


def irregular_uci(case: Stood) -> str | None:
    return None if case.illegal is None else case.illegal[0] + case.illegal[1]


async def started(sub: Subscription) -> None:
    """The daemon online, its board connected, its first snapshot out."""

    def up(_: object) -> bool:
        online = any(e["data"]["state"] == "online" for e in on(sub, "status"))
        return online and any(e["data"]["state"] == "connected" for e in on(sub, "board"))

    await sub.wait_for(up, within=15)
    await sub.wait_for(lambda _: bool(sub.on("game")), within=10)
