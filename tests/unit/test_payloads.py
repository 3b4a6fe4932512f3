"""The wire format of docs/product.md §2: topics, the envelope, and each fact's JSON."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Final

import chess
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bridge.arbiter.facts import (
    AlertRaised,
    ClockChanged,
    ClockPressed,
    ClockTimes,
    CompletedBy,
    Fact,
    GameEnded,
    MovePlayed,
    TouchAction,
    TouchReported,
)
from bridge.wire import payloads

ENVELOPE_KEYS = ["v", "type", "table", "game", "epoch", "seq", "ts", "data"]
TS = 1_777_777_777.123_9  # 2026-05-03T03:09:37.123Z


def _encode(type_: str, data: msgspec.Struct, *, seq: int = 7) -> dict[str, object]:
    raw = payloads.encode("t042", "g1", 3, seq, TS, type_, data)
    decoded = json.loads(raw)
    assert isinstance(decoded, dict)
    return decoded


def _fact_body(fact: Fact) -> object:
    type_, _, data = payloads.fact_data(fact)
    return _encode(type_, data)["data"]


def test_topic() -> None:
    assert payloads.TOPIC_ROOT == "chessbridge/1"
    assert payloads.topic("t042", "event/move") == "chessbridge/1/table/t042/event/move"
    assert payloads.topic("board-7", "status") == "chessbridge/1/table/board-7/status"


@pytest.mark.parametrize("table", ["", "a/b", "t+", "#", "x\x00"])
def test_topic_rejects_table_ids_that_break_topics(table: str) -> None:
    with pytest.raises(ValueError, match="invalid table id"):
        payloads.topic(table, "status")


def test_envelope_fields_and_order() -> None:
    body = _encode("result", payloads.ResultData(result="1-0", reason="checkmate", article="5.1.1"))
    assert list(body) == ENVELOPE_KEYS
    assert body == {
        "v": 1,
        "type": "result",
        "table": "t042",
        "game": "g1",
        "epoch": 3,
        "seq": 7,
        "ts": "2026-05-03T03:09:37.123Z",
        "data": {"result": "1-0", "reason": "checkmate", "article": "5.1.1"},
    }


@pytest.mark.parametrize(
    ("ts", "text"),
    [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (0.9999, "1970-01-01T00:00:00.999Z"),
        (1_700_000_000.5, "2023-11-14T22:13:20.500Z"),
    ],
)
def test_ts_is_utc_iso_8601_with_milliseconds(ts: float, text: str) -> None:
    assert payloads.format_ts(ts) == text


def _datetime_text(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="milliseconds").removesuffix("+00:00")
        + "Z"
    )


@given(
    st.floats(min_value=0, max_value=2**33, allow_nan=False)
    | st.integers(min_value=0, max_value=2**33).map(lambda s: s + 0.9999995)
    | st.integers(min_value=0, max_value=2**33).map(lambda s: s + 0.0009995),
    st.floats(min_value=0, max_value=2**33, allow_nan=False),
)
def test_ts_is_the_text_datetime_writes_for_it_whatever_came_before(
    ts: float, before: float
) -> None:
    # the second is made once and kept: write another time first, in the same or another second
    payloads.format_ts(before)
    assert payloads.format_ts(ts) == _datetime_text(ts)
    assert payloads.format_ts(ts) == _datetime_text(ts)


def test_status_carries_top_level_state() -> None:
    raw = payloads.encode_status("t1", "g", 2, 9, TS, "online")
    body = json.loads(raw)
    assert body["state"] == "online"
    assert body["data"] == {"state": "online"}
    assert body["type"] == "status"
    envelope = payloads.decode_envelope(raw)
    assert envelope.state == "online"
    assert payloads.data_as(envelope, payloads.StatusData) == payloads.StatusData(state="online")


def test_extra_may_not_overwrite_the_envelope() -> None:
    with pytest.raises(ValueError, match="seq"):
        payloads.encode("t", "g", 1, 1, TS, "status", payloads.StatusData(state="lost"), {"seq": 0})


def test_decode_ignores_unknown_fields_and_validates() -> None:
    raw = payloads.encode(
        "t", "g", 1, 5, TS, "result", payloads.ResultData(result="0-1", reason="r", article="a")
    )
    body = json.loads(raw)
    body["later_minor_version_field"] = True
    envelope = payloads.decode_envelope(json.dumps(body).encode())
    assert (envelope.epoch, envelope.seq) == (1, 5)
    assert envelope.state is None
    del body["seq"]
    with pytest.raises(msgspec.ValidationError):
        payloads.decode_envelope(json.dumps(body).encode())


# --- facts ------------------------------------------------------------------------------------

E2E4 = MovePlayed(
    ply=1,
    move=chess.Move.from_uci("e2e4"),
    san="e4",
    fen="rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    color=chess.WHITE,
    touched=(chess.E2, chess.E4),
    completed_by=CompletedBy.CLOCK,
    clock=ClockTimes(white=5395, black=5400, running=chess.BLACK),
    supersedes=False,
    at=12.5,
)


def test_move() -> None:
    type_, suffix, data = payloads.fact_data(E2E4)
    assert (type_, suffix) == ("move", "event/move")
    assert _encode(type_, data)["data"] == {
        "ply": 1,
        "uci": "e2e4",
        "san": "e4",
        "fen": E2E4.fen,
        "color": "white",
        "touched": ["e2", "e4"],
        "clock": {"white": 5395, "black": 5400, "running": "black"},
        "completed_by": "clock",
    }


def test_a_moves_flags_are_sent_only_when_true() -> None:
    # supersedes and promotion_assumed are false on nearly every move: left out, as the
    # snapshot's additions are, they cost no bytes on the wire; a true one is always sent. A
    # payload without them (every move now, and tables before promotion_assumed) reads false.
    for supersedes in (False, True):
        for assumed in (False, True):
            fact = msgspec.structs.replace(E2E4, supersedes=supersedes, promotion_assumed=assumed)
            data = _fact_body(fact)
            assert isinstance(data, dict)
            assert ("supersedes" in data, "promotion_assumed" in data) == (supersedes, assumed)
            assert data.get("supersedes", False) is supersedes
            decoded = msgspec.json.decode(msgspec.json.encode(data), type=payloads.MoveData)
            assert (decoded.supersedes, decoded.promotion_assumed) == (supersedes, assumed)


def test_a_move_payload_with_its_flags_written_false_still_reads() -> None:
    # Payloads published before the flags were left out when false (a replay, an old table).
    data = msgspec.json.decode(msgspec.json.encode(payloads.fact_data(E2E4)[2]))
    data.update(supersedes=False, promotion_assumed=False)
    decoded = msgspec.json.decode(msgspec.json.encode(data), type=payloads.MoveData)
    assert (decoded.supersedes, decoded.promotion_assumed) == (False, False)


def test_move_promotion_without_clock() -> None:
    fact = MovePlayed(
        ply=40,
        move=chess.Move.from_uci("a2a1n"),
        san="a1=N+",
        fen="8/8/8/8/8/8/1k6/n1K5 w - - 0 21",
        color=chess.BLACK,
        touched=(chess.A2, chess.A1),
        completed_by=CompletedBy.RELEASE,
        clock=None,
        supersedes=True,
        at=1.0,
    )
    data = _fact_body(fact)
    assert isinstance(data, dict)
    assert data["uci"] == "a2a1n"
    assert data["color"] == "black"
    assert data["clock"] is None
    assert data["completed_by"] == "release"
    assert data["supersedes"] is True
    assert "promotion_assumed" not in data


def test_move_promotion_assumed_on_an_occupancy_board() -> None:
    fact = msgspec.structs.replace(
        E2E4,
        move=chess.Move.from_uci("b7b8q"),
        san="b8=Q",
        fen="1Q6/8/8/8/8/8/1k6/2K5 b - - 0 40",
        promotion_assumed=True,
    )
    data = _fact_body(fact)
    assert isinstance(data, dict)
    assert (data["uci"], data["promotion_assumed"]) == ("b7b8q", True)
    decoded = msgspec.json.decode(msgspec.json.encode(data), type=payloads.MoveData)
    assert decoded.promotion_assumed is True


@pytest.mark.parametrize("completed_by", list(CompletedBy))
def test_every_completed_by_has_a_name(completed_by: CompletedBy) -> None:
    fact = MovePlayed(
        ply=E2E4.ply,
        move=E2E4.move,
        san=E2E4.san,
        fen=E2E4.fen,
        color=E2E4.color,
        touched=E2E4.touched,
        completed_by=completed_by,
        clock=E2E4.clock,
        supersedes=False,
        at=0.0,
    )
    _, _, data = payloads.fact_data(fact)
    assert isinstance(data, payloads.MoveData)
    assert data.completed_by == completed_by.value


def test_touch() -> None:
    lift = TouchReported(
        action=TouchAction.LIFT,
        square=chess.G8,
        piece=chess.Piece(chess.KNIGHT, chess.BLACK),
        meaning="own piece lifted",
        ply=2,
        at=3.0,
        hand=chess.BLACK,
    )
    type_, suffix, data = payloads.fact_data(lift)
    assert (type_, suffix) == ("touch", "event/touch")
    assert _encode(type_, data)["data"] == {
        "action": "lift",
        "square": "g8",
        "piece": "n",
        "meaning": "own piece lifted",
        "ply": 2,
        "hand": "black",
    }
    place = TouchReported(
        action=TouchAction.PLACE, square=chess.A1, piece=None, meaning="unknown", ply=0, at=0.0
    )
    assert _fact_body(place) == {
        "action": "place",
        "square": "a1",
        "piece": None,
        "meaning": "unknown",
        "ply": 0,
        "hand": None,
    }


def test_clock_press() -> None:
    press = ClockPressed(
        by=chess.WHITE,
        clock=ClockTimes(white=290, black=300, running=chess.BLACK),
        completes_ply=1,
        at=2.0,
    )
    type_, suffix, data = payloads.fact_data(press)
    assert (type_, suffix) == ("clock", "event/clock")
    assert _encode(type_, data)["data"] == {
        "kind": "press",
        "by": "white",
        "white": 290,
        "black": 300,
        "running": "black",
        "completes_ply": 1,
    }


def test_clock_state_change() -> None:
    stopped = ClockChanged(
        state="stopped", clock=ClockTimes(white=1, black=2, running=None), at=0.0
    )
    type_, suffix, data = payloads.fact_data(stopped)
    assert (type_, suffix) == ("clock", "event/clock")
    assert _encode(type_, data)["data"] == {
        "kind": "stopped",
        "by": None,
        "white": 1,
        "black": 2,
        "running": None,
        "completes_ply": None,
    }
    gone = ClockChanged(state="disconnected", clock=None, at=0.0)
    assert _fact_body(gone) == {
        "kind": "disconnected",
        "by": None,
        "white": None,
        "black": None,
        "running": None,
        "completes_ply": None,
    }


def test_alert() -> None:
    alert = AlertRaised(
        kind="touch_move",
        article="4.3(a)",
        ply=5,
        color=chess.WHITE,
        message="White touched the knight on g1 and moved another piece",
        details={"touched": ["g1"], "moved": "e2e4", "count": 1, "note": None},
        at=9.0,
        id=3,
    )
    type_, suffix, data = payloads.fact_data(alert)
    assert (type_, suffix) == ("alert", "event/alert")
    assert _encode(type_, data)["data"] == {
        "kind": "touch_move",
        "article": "4.3(a)",
        "ply": 5,
        "color": "white",
        "message": "White touched the knight on g1 and moved another piece",
        "details": {"touched": ["g1"], "moved": "e2e4", "count": 1, "note": None},
        "id": 3,
    }


def test_result() -> None:
    ended = GameEnded(result="1/2-1/2", reason="stalemate", article="5.2.1", at=0.0)
    type_, suffix, data = payloads.fact_data(ended)
    assert (type_, suffix) == ("result", "event/result")
    assert _encode(type_, data)["data"] == {
        "result": "1/2-1/2",
        "reason": "stalemate",
        "article": "5.2.1",
    }


OPEN_ALERT = AlertRaised(kind="k", article="a", ply=0, color=None, message="m", at=0)

ALL_FACTS: list[Fact] = [
    E2E4,
    TouchReported(action=TouchAction.PLACE, square=chess.E4, piece=None, meaning="m", ply=1, at=0),
    ClockPressed(
        by=None, clock=ClockTimes(white=1, black=1, running=None), completes_ply=None, at=0
    ),
    ClockChanged(state="flag", clock=None, at=0),
    OPEN_ALERT,
    GameEnded(result="1-0", reason="resignation", article="5.1.2", at=0),
]


@pytest.mark.parametrize("fact", ALL_FACTS, ids=lambda fact: type(fact).__name__)
def test_round_trip(fact: Fact) -> None:
    type_, _, data = payloads.fact_data(fact)
    envelope = payloads.decode_envelope(payloads.encode("t", "g", 4, 11, TS, type_, data))
    assert (envelope.v, envelope.type, envelope.epoch, envelope.seq) == (1, type_, 4, 11)
    assert payloads.data_as(envelope, type(data)) == data


# --- retained state ---------------------------------------------------------------------------


def test_board() -> None:
    board = payloads.BoardData(
        state="connected",
        driver="dgt",
        uri="dgt:/dev/ttyACM0",
        model="DGT Smart Board",
        serial="12345",
        firmware="1.0",
        battery=None,
        orientation="normal",
    )
    body = _encode("board", board)["data"]
    assert body == {
        "state": "connected",
        "driver": "dgt",
        "uri": "dgt:/dev/ttyACM0",
        "model": "DGT Smart Board",
        "serial": "12345",
        "firmware": "1.0",
        "battery": None,
        "charging": None,
        "rssi": None,
        "orientation": "normal",
        "error": None,
    }
    envelope = payloads.decode_envelope(payloads.encode("t", "g", 1, 1, TS, "board", board))
    assert payloads.data_as(envelope, payloads.BoardData) == board


def test_a_charging_board() -> None:
    board = payloads.BoardData(
        state="connected", driver="pegasus", uri="pegasus:X", battery=40, charging=True
    )
    body = _encode("board", board)["data"]
    assert isinstance(body, dict)
    assert (body["battery"], body["charging"]) == (40, True)
    envelope = payloads.decode_envelope(payloads.encode("t", "g", 1, 1, TS, "board", board))
    assert payloads.data_as(envelope, payloads.BoardData) == board


def test_board_state_is_validated_on_decode() -> None:
    raw = payloads.encode(
        "t", "g", 1, 1, TS, "board", payloads.BoardData(state="error", driver="d", uri="u")
    )
    envelope = payloads.decode_envelope(raw.replace(b'"error"', b'"exploded"', 1))
    with pytest.raises(msgspec.ValidationError):
        payloads.data_as(envelope, payloads.BoardData)


def test_game() -> None:
    alert = payloads.alert_data(OPEN_ALERT)
    game = payloads.GameData(
        id="g1",
        fen=E2E4.fen,
        start_fen=chess.STARTING_FEN,
        moves=payloads.MoveList(first_ply=1, uci=("e2e4",), san=("e4",)),
        clocks=payloads.clocks(E2E4.clock),
        turn="black",
        alerts=(alert,),
        result=None,
        reason=None,
        article=None,
        claimable=(),
        rules="fide-2018/standard",
        last_seq=41,
        players={"white": "Anand", "black": "Carlsen"},
        round="3",
    )
    body = _encode("game", game)["data"]
    assert body == {
        "id": "g1",
        "fen": E2E4.fen,
        "moves": {"first_ply": 1, "uci": ["e2e4"], "san": ["e4"]},
        "clocks": {"white": 5395, "black": 5400, "running": "black"},
        "turn": "black",
        "alerts": [
            {
                "kind": "k",
                "article": "a",
                "ply": 0,
                "color": None,
                "message": "m",
                "details": {},
                "id": 0,
            }
        ],
        "result": None,
        "claimable": [],
        "rules": "fide-2018/standard",
        "last_seq": 41,
        "players": {"white": "Anand", "black": "Carlsen"},
        "round": "3",
    }
    envelope = payloads.decode_envelope(payloads.encode("t", "g1", 1, 42, TS, "game", game))
    assert payloads.data_as(envelope, payloads.GameData) == game


_PRODUCT_GAME_FIELDS: Final = ("id", "fen", "moves", "clocks", "turn", "alerts", "result")


@given(
    start=st.sampled_from([chess.STARTING_FEN, "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"]),
    ended=st.booleans(),
    assigned=st.booleans(),
)
def test_the_snapshot_leaves_out_only_additions_that_say_nothing(
    start: str, ended: bool, assigned: bool
) -> None:
    # The standard start (given as an equal text, not the constant itself: a saved game read
    # back), no result and no assignment leave start_fen, reason, article and the assignment
    # out; what docs/product.md lists is always there; every field reads back as it was.
    game = payloads.GameData(
        id="g1",
        fen=start,
        start_fen=payloads.game_start("".join(start)),
        moves=payloads.MoveList(),
        clocks=None,
        turn="white",
        alerts=(),
        result="1-0" if ended else None,
        reason="checkmate" if ended else None,
        article="5.1.1" if ended else None,
        claimable=(),
        rules="fide-2018",
        last_seq=1,
        players={"white": "A"} if assigned else None,
        event="Open" if assigned else None,
        round="1" if assigned else None,
        board="2" if assigned else None,
    )
    body = _encode("game", game)["data"]
    assert isinstance(body, dict)
    assert all(name in body for name in (*_PRODUCT_GAME_FIELDS, "last_seq", "claimable", "rules"))
    assert ("start_fen" in body) == (start != chess.STARTING_FEN)
    assert ("reason" in body, "article" in body) == (ended, ended)
    assert {"players", "event", "round", "board"} & body.keys() == (
        {"players", "event", "round", "board"} if assigned else set()
    )
    envelope = payloads.decode_envelope(payloads.encode("t", "g1", 1, 2, TS, "game", game))
    decoded = payloads.data_as(envelope, payloads.GameData)
    assert decoded == game
    assert decoded.start_fen == start


def test_a_snapshot_written_with_every_field_still_reads() -> None:
    # As tables published it before the additions were left out when they say nothing.
    body: dict[str, object] = {
        "id": "g1",
        "fen": chess.STARTING_FEN,
        "start_fen": chess.STARTING_FEN,
        "moves": {"first_ply": 1, "uci": [], "san": []},
        "clocks": None,
        "turn": "white",
        "alerts": [],
        "result": None,
        "reason": None,
        "article": None,
        "claimable": [],
        "rules": "fide-2018",
        "last_seq": 0,
        "players": None,
        "event": None,
        "round": None,
        "board": None,
    }
    decoded = msgspec.json.decode(msgspec.json.encode(body), type=payloads.GameData)
    assert (decoded.start_fen, decoded.reason, decoded.players) == (chess.STARTING_FEN, None, None)


def test_split_topic_gives_the_table_and_the_suffix() -> None:
    assert payloads.split_topic("chessbridge/1/table/t042/event/move") == ("t042", "event/move")
    assert payloads.split_topic("chessbridge/1/table/t042/game") == ("t042", "game")
    for foreign in ("chessbridge/1/table/t042", "chessbridge/1/table//game", "other/t1/game"):
        assert payloads.split_topic(foreign) is None


def _claim(instance: object, since: object) -> payloads.ClaimData:
    data = payloads.ClaimData(instance="0" * 16, since="2026-05-03T03:09:37.123Z")
    raw = json.loads(payloads.encode("t042", "g1", 3, 7, TS, "claim", data))
    raw["data"] = {"instance": instance, "since": since}
    envelope = payloads.decode_envelope(json.dumps(raw).encode())
    return payloads.data_as(envelope, payloads.ClaimData)


def test_a_daemons_own_claim_reads_back() -> None:
    instance = os.urandom(8).hex()
    claim = _claim(instance, payloads.format_ts(TS))
    assert claim == payloads.ClaimData(instance=instance, since="2026-05-03T03:09:37.123Z")


@pytest.mark.parametrize(
    "instance",
    [
        "x\nchessbridge: ERROR forged\x1b[2K",
        "0123456789abcdef\n",  # a trailing newline
        "0123456789ABCDEF",
        "0123456",
        "0" * 65,
        "٠١٢٣٤٥٦٧",  # digits, not hex digits
        "",
        16,
    ],
)
def test_a_claim_whose_instance_a_daemon_would_not_make_is_refused(instance: object) -> None:
    with pytest.raises(msgspec.ValidationError, match="instance"):
        _claim(instance, "2026-05-03T03:09:37.123Z")


@pytest.mark.parametrize(
    "since",
    [
        "2000-01-01T00:00:00.000Z\nchessbridge: ERROR forged",
        "2000-01-01T00:00:00.000Z\n",
        "2000-01-01T00:00:00.000Z" + "0" * 1000,
        "2000-01-01T00:00:00Z",
        "2000-01-01 00:00:00.000Z",
        "٢٠٠٠-01-01T00:00:00.000Z",
        "0",
        "",
        1.5,
    ],
)
def test_a_claim_whose_since_is_no_timestamp_is_refused(since: object) -> None:
    with pytest.raises(msgspec.ValidationError, match="since"):
        _claim("0123456789abcdef", since)
