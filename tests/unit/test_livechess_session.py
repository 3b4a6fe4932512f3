"""One LiveChess client's calls and feeds, against a hall fed by a real engine played by hand:
the lichess page's order and acceptance rules (lichess-org/lila ``ui/dgt/src/play.ts``: numeric
ids, the board compared with a position's placement, ``san`` counted by its new length)."""

from __future__ import annotations

import json
from typing import Any

import chess
import pytest

from bridge.livechess.hall import Hall
from bridge.livechess.session import NewGame, Session
from bridge.wire import payloads
from drivers.choreography import Lift, Place
from tests.published import Published

P = chess.Piece.from_symbol
START = chess.STARTING_FEN


class Client:
    """A session and the hall it reads, with a table that publishes into both as a server
    would tell them (every change handed to the session)."""

    def __init__(self, *, setup: bool = True, board: chess.Board | None = None) -> None:
        self.hall = Hall()
        self.session = Session(self.hall, setup=setup)
        self.out: list[dict[str, Any]] = []
        self.table = Published(self._publish, board=board)

    def _publish(self, table: str, envelope: Any) -> None:
        if self.hall.apply(table, envelope, 7):
            self.out += [json.loads(m) for m in self.session.changed(table, 9)]

    def call(self, message: dict[str, Any] | str) -> tuple[list[dict[str, Any]], NewGame | None]:
        text = message if isinstance(message, str) else json.dumps(message)
        replies, job = self.session.receive(text, 9)
        return [json.loads(reply) for reply in replies], job

    def take(self) -> list[dict[str, Any]]:
        out, self.out = self.out, []
        return out

    def subscribe(self, serialnr: str = "01234", feed: int = 1) -> list[dict[str, Any]]:
        replies, _ = self.call(
            {
                "id": 2,
                "call": "subscribe",
                "param": {"feed": "eboardevent", "id": feed, "param": {"serialnr": serialnr}},
            }
        )
        return replies

    def setup(
        self, fen: str, call: int = 3, feed: int = 1
    ) -> tuple[list[dict[str, Any]], NewGame | None]:
        return self.call(
            {
                "id": call,
                "call": "call",
                "param": {"id": feed, "method": "setup", "param": {"fen": fen}},
            }
        )


class Page:
    """The lichess page's rules for feeds: the board kept, new moves counted as the new length
    of ``san`` minus the old, the same list again ignored."""

    def __init__(self) -> None:
        self.last_san: list[str] | None = None
        self.board: str | None = None
        self.moves: list[str] = []

    def setup_sent(self) -> None:
        self.last_san = []

    def feed(self, message: dict[str, Any]) -> None:
        assert message["response"] == "feed"
        param = message["param"]
        if param.get("board"):
            self.board = param["board"]
        san = param.get("san")
        if san is None or len(san) == 0 or san == self.last_san:
            return
        new = 1 if self.last_san is None else len(san) - len(self.last_san)
        self.moves += san[len(san) - new :] if new > 0 else []
        self.last_san = san


def test_the_lichess_pages_sequence() -> None:
    client = Client()
    [answer], _ = client.call('{"id":1,"call":"eboards"}')
    assert answer["response"] == "call"
    assert answer["id"] == 1
    assert isinstance(answer["time"], int)
    [board] = answer["param"]
    assert board["serialnr"] == "01234"
    assert board["state"] == "ACTIVE"
    assert board["board"] == chess.Board().board_fen()

    subscribed, first = client.subscribe()
    assert subscribed == {"response": "call", "id": 2, "param": None, "time": 9}
    assert first["response"] == "feed"
    assert first["id"] == 1  # the feed's own id, not the call's
    assert first["param"] == {
        "serialnr": "01234",
        "flipped": False,
        "board": chess.Board().board_fen(),
        "clock": None,
    }

    page = Page()
    replies, job = client.setup(START)
    page.setup_sent()
    assert job is None
    answer, after = replies
    assert (answer["response"], answer["id"], answer["param"]) == ("call", 3, None)
    assert after["param"]["start"] == START
    assert after["param"]["san"] == []
    assert after["param"]["match"] is True
    page.feed(after)

    game = chess.Board()
    for san in ("e4", "c5", "Nf3"):
        client.table.play(san)
        game.push_san(san)
        for message in client.take():
            page.feed(message)
        assert page.board == game.board_fen()
    assert page.moves == ["e4", "c5", "Nf3"]


def test_ids_given_as_text_are_answered_as_numbers() -> None:
    client = Client()
    [answer], _ = client.call('{"id":"1","call":"eboards"}')
    assert answer["id"] == 1
    [error], _ = client.call('{"id":"7","call":"nonsense"}')
    assert error["response"] == "error"
    assert error["id"] == 7


def test_every_lift_and_place_is_a_feed_with_the_board() -> None:
    client = Client()
    client.subscribe()
    client.take()
    boards = []
    for step in (Lift(chess.G1), Place(chess.F3, P("N"))):
        client.table.do([step])
        first, *_ = client.take()  # the place's, then the move's (its san)
        boards.append(first["param"]["board"])
    lifted = chess.BaseBoard()
    lifted.remove_piece_at(chess.G1)
    played = chess.Board()
    played.push_san("Nf3")
    assert boards == [lifted.board_fen(), played.board_fen()]


def test_setup_again_mid_game_starts_san_there() -> None:
    client = Client()
    client.subscribe()
    client.setup(START)
    client.table.play("d4")
    client.table.play("d5")
    assert client.take()[-1]["param"]["san"] == ["d4", "d5"]
    position = client.table.arbiter.board.fen()
    replies, job = client.setup(position, call=4)
    assert job is None
    assert replies[1]["param"]["start"] == position
    assert replies[1]["param"]["san"] == []
    client.table.play("c4")
    assert client.take()[-1]["param"]["san"] == ["c4"]


def test_nothing_shown_changed_means_no_feed() -> None:
    client = Client()
    client.subscribe()
    client.setup(START)
    client.take()
    client.table.snapshot()  # the retained game again, the same
    alert = payloads.AlertData(
        kind="clock", article="6.7", ply=1, color="white", message="m", details={}, id=1
    )
    client.table.publish("alert", alert)
    assert client.take() == []


def test_a_superseded_move_changes_the_list_without_lengthening_it() -> None:
    castle = chess.Board("r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 0 8")
    client = Client(board=castle)
    client.subscribe()
    client.setup(castle.fen())
    client.take()
    page = Page()
    page.setup_sent()
    client.table.do([Lift(chess.H1), Place(chess.F1, P("R"))])
    client.table.wait(1.0)
    client.table.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    client.table.wait(1.0)
    sans = [m["param"]["san"] for m in client.take() if "san" in m["param"]]
    assert ["Rf1"] in sans
    assert sans[-1] == ["O-O"]
    assert max(len(s) for s in sans) == 1
    for san in sans:
        page.feed({"response": "feed", "param": {"san": san}})
    assert page.moves == ["Rf1"], "the page counts no new move: it never sees O-O"


@pytest.mark.parametrize("allowed", [True, False])
def test_setup_of_another_position(allowed: bool) -> None:
    client = Client(setup=allowed)
    client.subscribe()
    client.table.play("e4")
    client.take()
    other = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    replies, job = client.setup(other)
    if not allowed:
        [error] = replies
        assert job is None
        assert error["response"] == "error"
        assert error["id"] == 3
        assert "setup refused" in error["param"]["message"]
        assert client.table.arbiter.board.move_stack, "the table's game is unchanged"
        return
    assert replies == []
    assert job == NewGame(call=3, feed=1, table="t1", fen=other)
    client.table.play("e5")  # meanwhile: held until the setup is answered
    assert client.take() == []
    client.table.new_game(other)
    done = [json.loads(m) for m in client.session.setup_done(job, None, 11)]
    answer, full = done
    assert (answer["response"], answer["id"]) == ("call", 3)
    assert full["param"]["start"] == other
    assert full["param"]["san"] == []


def test_a_setup_the_table_refused_is_an_error() -> None:
    client = Client()
    client.subscribe()
    _, job = client.setup("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    assert job is not None
    [error] = [json.loads(m) for m in client.session.setup_done(job, "no answer", 11)]
    assert error == {"response": "error", "id": 3, "param": {"message": "no answer"}, "time": 11}


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        ('{"id":5,"call":"sources"}', "unknown call 'sources'"),
        (
            '{"id":5,"call":"subscribe","param":{"feed":"x","id":1,"param":{"serialnr":"1"}}}',
            "feed",
        ),
        (
            '{"id":5,"call":"subscribe","param":{"feed":"eboardevent","id":1,'
            '"param":{"serialnr":"999"}}}',
            "no board with serialnr '999'",
        ),
        (
            '{"id":5,"call":"call","param":{"id":1,"method":"setup","param":{"fen":"nonsense"}}}',
            "not a FEN",
        ),
        (
            '{"id":5,"call":"call","param":{"id":1,"method":"setup",'
            '"param":{"fen":"8/8/8/8/8/8/8/8 w - - 0 1"}}}',
            "not a position a game can be played from",
        ),
        (
            '{"id":5,"call":"call","param":{"id":9,"method":"flip","param":{"flip":true}}}',
            "no feed 9",
        ),
        ('{"id":5,"call":"call","param":{"id":1,"method":"reset","param":{}}}', "unknown method"),
        ('{"id":5,"call":"unsubscribe","param":{"id":"x"}}', "feed id must be a number"),
    ],
)
def test_a_bad_call_is_an_error_with_its_id_and_changes_nothing(message: str, wanted: str) -> None:
    client = Client()
    client.subscribe()
    client.take()
    [error], job = client.call(message)
    assert job is None
    assert error["response"] == "error"
    assert error["id"] == 5
    assert wanted in error["param"]["message"]
    assert client.session.feeds[1].flipped is False
    assert client.table.arbiter.board.move_stack == []


@pytest.mark.parametrize("message", ["nonsense", "[1]", '{"call":"eboards"}', '{"id":true}'])
def test_a_call_without_a_usable_id_is_an_error_with_a_null_id(message: str) -> None:
    [error], _ = Client().call(message)
    assert error["response"] == "error"
    assert error["id"] is None


def test_flip_turns_this_clients_board_only() -> None:
    client = Client()
    client.subscribe()
    other = Session(client.hall, setup=True)
    replies, _ = client.call(
        {"id": 4, "call": "call", "param": {"id": 1, "method": "flip", "param": {"flip": True}}}
    )
    answer, feed = replies
    assert answer["id"] == 4
    assert feed["param"]["flipped"] is True
    assert feed["param"]["board"] == "RNBKQBNR/PPPPPPPP/8/8/8/8/pppppppp/rnbkqbnr"
    assert client.session.eboards()[0]["flipped"] is True
    assert other.eboards()[0]["flipped"] is False
    assert client.hall.tables["t1"].placement() == chess.Board().board_fen()


def test_unsubscribed_feeds_stop() -> None:
    client = Client()
    client.subscribe()
    [answer], _ = client.call({"id": 4, "call": "unsubscribe", "param": {"id": 1}})
    assert answer["id"] == 4
    client.table.play("e4")
    assert client.take() == []


def test_a_new_game_at_the_table_starts_san_again_from_its_start() -> None:
    client = Client()
    client.subscribe()
    client.setup(START)
    client.table.play("e4")
    client.take()
    client.table.new_game("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    [feed] = client.take()
    assert feed["param"]["start"] == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    assert feed["param"]["san"] == []
    assert feed["param"]["match"] is False  # the pieces still stand as they did
