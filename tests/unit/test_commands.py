"""Arbiter commands: parsed on the wire (bridge/wire/commands.py) and carried out on the table
(bridge/table/commands.py); every command, accepted and refused.

A refused request must change nothing: each error test compares the whole engine state before
and after.
"""

from __future__ import annotations

from typing import Any

import chess
import msgspec
import pytest

from bridge.arbiter import rules
from bridge.arbiter.engine import Arbiter, EngineConfig
from bridge.arbiter.facts import AlertRaised, GameEnded, MovePlayed
from bridge.table import commands
from bridge.table.commands import CommandOutcome
from bridge.table.daemon import SavedGame, game_data
from bridge.wire import commands as wire
from bridge.wire import requests
from bridge.wire.commands import Assignment, RejectedError
from drivers.events import ClockReading, ClockSide
from drivers.link import ClockSetting

WALL = 1_800_000_000.0
"""The wall clock of these tests (2027-01-15)."""

NOW = 50.0
"""The engine's clock."""

THREEFOLD = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]
"""Knights out and back twice: the start position stands for the third time, White to move."""


def request(**fields: Any) -> bytes:
    """A request with a transaction and an expiry a minute ahead, plus ``fields``."""
    body: dict[str, Any] = {"transaction": "tx-1", "expires_at": WALL + 60}
    body.update(fields)
    return msgspec.json.encode({k: v for k, v in body.items() if v is not ...})


def arbiter_after(
    moves: list[str], *, fen: str = chess.STARTING_FEN, edition: str = "fide-2018"
) -> Arbiter:
    board = chess.Board(fen)
    for uci in moves:
        board.push_uci(uci)
    return Arbiter(EngineConfig(rules=rules.edition(edition)), board)


def run(
    command: str,
    payload: bytes,
    arbiter: Arbiter,
    assignment: Assignment | None = None,
    *,
    wall_now: float = WALL,
) -> CommandOutcome:
    return commands.handle(
        command,
        payload,
        arbiter=arbiter,
        assignment=assignment or Assignment(),
        wall_now=wall_now,
        now=NOW,
    )


def state(arbiter: Arbiter) -> tuple[object, ...]:
    """Everything a command could change."""
    return (
        arbiter.snapshot(),
        list(arbiter.board.move_stack),
        arbiter.board.fen(),
        dict(arbiter.illegal_counts),
        list(arbiter.alerts),
        arbiter.result,
    )


def with_clock(arbiter: Arbiter, *, white: ClockSide, paused: bool = False) -> Arbiter:
    """Connect a running clock whose ``white`` side runs before move 1 (so it is White's)."""
    for running in (True, False) if paused else (True,):
        reading = ClockReading(
            left=600,
            right=540,
            running=running,
            lever_high=white,
            connected=True,
            left_flag=False,
            right_flag=False,
            battery_low=False,
            at=1.0,
        )
        arbiter.feed(reading, 1.0)
    return arbiter


def ok_data(outcome: CommandOutcome) -> dict[str, Any]:
    assert outcome.response.status == "ok", outcome.response.error
    assert outcome.response.error is None
    assert outcome.response.transaction == "tx-1"
    assert not outcome.silent
    return outcome.response.data


# --- refused requests change nothing -----------------------------------------------------------


def busy_arbiter() -> Arbiter:
    """A game with moves and an open alert (an incorrect claim), so there is much to change."""
    arbiter = arbiter_after(["e2e4", "e7e5", "g1f3"])
    _, alert = arbiter.claim_draw(None, 1.0)
    assert alert is not None
    assert alert.id == 1
    return arbiter


REFUSED: list[tuple[str, bytes, str, str | None]] = [
    # (command, payload, part of the error, transaction echoed)
    ("takeback", b"{not json", "not valid JSON", None),
    ("takeback", b"\xff\xfe", "not valid JSON", None),
    ("takeback", b"", "not valid JSON", None),
    ("takeback", b"[1, 2]", "one JSON object", None),
    ("takeback", b"[" * 2000 + b"]" * 2000, "nested too deeply", None),
    ("takeback", b'{"a":' * 17 + b"1" + b"}" * 17, "more than 16 levels", None),
    ("takeback", b'"takeback"', "one JSON object", None),
    ("takeback", request(plies=1, colour="white"), "unknown field `colour`", "tx-1"),
    ("takeback", request(transaction=...), "missing required field `transaction`", None),
    ("takeback", request(transaction=""), "length >= 1", None),
    ("takeback", request(transaction="x" * 65), "length <= 64", None),
    ("takeback", request(transaction=7), "Expected `str`", None),
    ("takeback", request(expires_at=...), "missing required field `expires_at`", "tx-1"),
    ("takeback", request(pad="x" * 5000), "too large", None),
    ("takeback", request(expires_at=WALL - 1), "expired", "tx-1"),
    ("takeback", request(expires_at="2027-01-15T07:59:00Z"), "expired", "tx-1"),
    ("takeback", request(expires_at=WALL + 7200), "ahead", "tx-1"),
    ("takeback", request(expires_at="tomorrow"), "not an ISO 8601 time", "tx-1"),
    ("takeback", request(expires_at="2027-01-15T08:01:00"), "must be in UTC", "tx-1"),
    ("takeback", request(expires_at="2027-01-15T09:01:00+01:00"), "must be in UTC", "tx-1"),
    ("takeback", request(expires_at=True), "Expected `float | str`", "tx-1"),
    ("takeback", request(plies=0), "`$.plies`", "tx-1"),
    ("takeback", request(plies=4), "cannot take back 4 plies: the game has 3", "tx-1"),
    ("takeback", request(plies="1"), "Expected `int`", "tx-1"),
    ("resign", request(), "unknown command 'resign'", "tx-1"),
    ("new_game", request(fen="not a fen"), "invalid FEN", "tx-1"),
    ("new_game", request(fen="8/8/8/8/8/8/8/8 w - - 0 1"), "no_white_king", "tx-1"),
    ("new_game", request(board=0), "`$.board`", "tx-1"),
    ("set_position", request(), "missing required field `fen`", "tx-1"),
    ("set_position", request(fen="4k3/8/8/8/8/8/8/4KK2 w - - 0 1"), "too_many_kings", "tx-1"),
    ("set_position", request(fen="4k3/8/8/8/8/8/8/R3K3 b - - 0 1 x"), "invalid FEN", "tx-1"),
    ("correct_move", request(ply=4, uci="e7e5"), "ply 4 is not in the game", "tx-1"),
    ("correct_move", request(ply=0, uci="e2e4"), "`$.ply`", "tx-1"),
    ("correct_move", request(ply=2, uci="e7e4"), "not a legal move at ply 2", "tx-1"),
    ("correct_move", request(ply=2, uci="e7"), "length >= 4", "tx-1"),
    ("correct_move", request(ply=2, uci="zz99"), "not a move in UCI notation", "tx-1"),
    ("correct_move", request(ply=1, uci="0000"), "not a legal move", "tx-1"),
    ("reconstruct", request(), "missing required field `moves`", "tx-1"),
    ("reconstruct", request(moves=[]), "`$.moves`", "tx-1"),
    ("reconstruct", request(moves=["b8c6", "e1g1"]), "e1g1 is not a legal move at ply 5", "tx-1"),
    ("reconstruct", request(moves=["e2e4"]), "not a legal move at ply 4", "tx-1"),
    ("reconstruct", request(moves=["e7e5"] * 65), "`$.moves`", "tx-1"),
    ("set_result", request(result="1-1", reason="x"), "`$.result`", "tx-1"),
    ("set_result", request(result="1-0"), "missing required field `reason`", "tx-1"),
    ("set_result", request(result="1-0", reason=""), "`$.reason`", "tx-1"),
    ("claim_draw", request(move="e2e4"), "not a legal move for the player having the move", "tx-1"),
    ("adjust_clock", request(white=60, black=60), "no clock connected", "tx-1"),
    ("adjust_clock", request(white=60, black=60, running="white"), "no clock connected", "tx-1"),
    ("adjust_clock", request(white=-1, black=60), "`$.white`", "tx-1"),
    ("adjust_clock", request(white=60, black=36000), "`$.black`", "tx-1"),
    ("adjust_clock", request(white=6, black=6, running="red"), "`$.running`", "tx-1"),
    ("ack_alert", request(id=2), "no open alert has id 2 (open: 1)", "tx-1"),
    ("ack_alert", request(), "missing required field `id`", "tx-1"),
    ("assign", request(white="A"), "missing required field `black`", "tx-1"),
    ("assign", request(white="A", black="B", white_fide_id="x"), "white_fide_id", "tx-1"),
    ("replay", request(from_seq=-1), "`$.from_seq`", "tx-1"),
    ("replay", request(from_seq=2**63), "`$.from_seq`", "tx-1"),
]


@pytest.mark.parametrize(("command", "payload", "error", "transaction"), REFUSED)
def test_a_refused_request_is_answered_and_changes_nothing(
    command: str, payload: bytes, error: str, transaction: str | None
) -> None:
    arbiter = busy_arbiter()
    before = state(arbiter)
    outcome = run(command, payload, arbiter, Assignment(white="W", black="B"))
    response = outcome.response
    assert response.status == "error"
    assert response.error is not None
    assert error in response.error
    assert response.data == {}
    assert response.transaction == transaction
    assert not outcome.silent
    assert outcome.topic_suffix == f"response/{command}"
    assert outcome.facts == ()
    assert not outcome.game_changed
    assert not outcome.new_game
    assert outcome.assignment is None
    assert outcome.set_clock is None
    assert outcome.replay_from is None
    assert state(arbiter) == before


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    """A request as deep as allowed, with brackets and escaped quotes in its strings, is served."""
    arbiter = arbiter_after(["e2e4"])
    deep: dict[str, object] = {"a": 1}
    for _ in range(wire.MAX_NESTING - 2):
        deep = {"a": deep}
    payload = request(plies=1, transaction='[[{{\\"[[' * 6, pad=deep)
    outcome = run("takeback", payload, arbiter, Assignment(white="W", black="B"))
    assert "nested" not in (outcome.response.error or "")
    assert "unknown field `pad`" in (outcome.response.error or "")


@pytest.mark.parametrize("command", ["", "Takeback", "a/b", "+", "#", "x" * 33, "ne w", "é"])
def test_an_unusable_command_name_is_not_answered(command: str) -> None:
    arbiter = busy_arbiter()
    before = state(arbiter)
    outcome = run(command, request(), arbiter)
    assert outcome.silent
    assert outcome.response.status == "error"
    assert state(arbiter) == before


def test_claim_when_the_game_is_over_is_refused() -> None:
    arbiter = arbiter_after(["f2f3", "e7e5", "g2g4", "d8h4"])
    arbiter.set_result("0-1", "checkmate", "5.1.1", 1.0)
    before = state(arbiter)
    outcome = run("claim_draw", request(), arbiter)
    assert outcome.response.error == "the game is over (0-1, checkmate)"
    assert state(arbiter) == before


def test_correcting_a_game_without_moves_is_refused() -> None:
    outcome = run("correct_move", request(ply=1, uci="e2e4"), arbiter_after([]))
    assert outcome.response.error == "the game has no moves to correct"


def test_the_payload_limit_is_exact() -> None:
    arbiter = arbiter_after([])
    head = request()
    fitting = head[:-1] + b',"x":"' + b"y" * (4096 - len(head) - 7) + b'"}'
    assert len(fitting) == wire.MAX_REQUEST_BYTES
    assert "unknown field `x`" in (run("takeback", fitting, arbiter).response.error or "")
    assert "too large" in (run("takeback", fitting + b" ", arbiter).response.error or "")


# --- accepted requests -------------------------------------------------------------------------


def test_new_game_from_the_start_keeps_assignment_fields_not_given() -> None:
    arbiter = busy_arbiter()
    old = Assignment(white="Anand", black="Carlsen", event="Old", round="3", board=7)
    outcome = run("new_game", request(white="Gelfand", round="4"), arbiter, old)
    assert ok_data(outcome) == {"fen": chess.STARTING_FEN}
    assert outcome.new_game
    assert outcome.game_changed
    assert outcome.assignment == Assignment(
        white="Gelfand", black="Carlsen", event="Old", round="4", board=7
    )
    assert arbiter.board.move_stack == []
    assert arbiter.alerts == []
    assert arbiter.result is None


def test_new_game_from_a_fen() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 3 40"
    arbiter = busy_arbiter()
    outcome = run("new_game", request(fen=fen), arbiter)
    assert ok_data(outcome) == {"fen": fen}
    assert arbiter.snapshot().start_fen == fen
    assert outcome.assignment == Assignment()


def test_new_game_in_a_finished_position_ends_it_at_once() -> None:
    stalemate = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
    arbiter = arbiter_after([])
    outcome = run("new_game", request(fen=stalemate), arbiter)
    ok_data(outcome)
    assert [type(f) for f in outcome.facts] == [GameEnded]
    assert arbiter.result is not None
    assert arbiter.result.reason == "stalemate"


def test_set_position_keeps_the_game_and_the_illegal_move_counts() -> None:
    arbiter = busy_arbiter()
    arbiter.illegal_counts[chess.WHITE] = 1
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    outcome = run("set_position", request(fen=fen), arbiter)
    assert ok_data(outcome) == {"fen": fen}
    assert not outcome.new_game
    assert outcome.game_changed
    assert outcome.assignment is None
    assert arbiter.board.fen() == fen
    assert arbiter.illegal_counts[chess.WHITE] == 1


def test_correct_move_replays_later_moves_that_are_still_legal() -> None:
    arbiter = arbiter_after(["e2e4", "e7e5", "g1f3", "b8c6"])
    outcome = run("correct_move", request(ply=1, uci="d2d4"), arbiter)
    data = ok_data(outcome)
    assert data["later_moves"] == "replayed"
    assert data["dropped"] == []
    assert data["san"] == "d4"
    assert data["changed"] is True
    assert [m.uci() for m in arbiter.board.move_stack] == ["d2d4", "e7e5", "g1f3", "b8c6"]
    assert data["fen"] == arbiter.board.fen()
    assert outcome.game_changed


def test_correct_move_cuts_the_game_when_a_later_move_is_no_longer_legal() -> None:
    arbiter = arbiter_after(["e2e4", "e7e5", "f1c4", "b8c6"])
    outcome = run("correct_move", request(ply=1, uci="d2d4"), arbiter)
    data = ok_data(outcome)
    assert data["later_moves"] == "cut"
    assert data["dropped"] == ["e7e5", "f1c4", "b8c6"]
    assert [m.uci() for m in arbiter.board.move_stack] == ["d2d4"]


def test_correct_move_counts_plies_like_the_published_moves() -> None:
    # Black to move at move 10: the first move of this game is ply 20 (as in event/move).
    fen = "4k3/8/8/8/8/8/4P3/4K3 b - - 0 10"
    arbiter = arbiter_after(["e8d7", "e1d2"], fen=fen)
    assert "plies 20..21" in (
        run("correct_move", request(ply=19, uci="e8d8"), arbiter).response.error or ""
    )
    data = ok_data(run("correct_move", request(ply=20, uci="e8e7"), arbiter))
    assert data["later_moves"] == "replayed"
    assert [m.uci() for m in arbiter.board.move_stack] == ["e8e7", "e1d2"]


def test_correcting_to_the_same_move_changes_nothing() -> None:
    arbiter = busy_arbiter()
    before = state(arbiter)
    outcome = run("correct_move", request(ply=2, uci="e7e5"), arbiter)
    assert ok_data(outcome)["changed"] is False
    assert not outcome.game_changed
    assert state(arbiter) == before


def test_a_correction_that_mates_ends_the_game() -> None:
    arbiter = arbiter_after(["f2f3", "e7e5", "g2g4", "d8e7"])
    outcome = run("correct_move", request(ply=4, uci="d8h4"), arbiter)
    ok_data(outcome)
    (ended,) = outcome.facts
    assert isinstance(ended, GameEnded)
    assert (ended.result, ended.reason, ended.article) == ("0-1", "checkmate", "5.1.1")


@pytest.mark.parametrize(("plies", "left"), [(None, 2), (1, 2), (3, 0)])
def test_takeback(plies: int | None, left: int) -> None:
    arbiter = busy_arbiter()
    outcome = run("takeback", request(plies=... if plies is None else plies), arbiter)
    data = ok_data(outcome)
    count = 1 if plies is None else plies
    assert data["plies"] == count
    assert data["removed"] == ["e2e4", "e7e5", "g1f3"][3 - count :]
    assert len(arbiter.board.move_stack) == left
    assert data["fen"] == arbiter.board.fen()
    assert outcome.game_changed


def test_set_result() -> None:
    arbiter = busy_arbiter()
    payload = request(result="0-1", reason="White resigned", article="5.1.2")
    outcome = run("set_result", payload, arbiter)
    assert ok_data(outcome) == {"result": "0-1", "reason": "White resigned", "article": "5.1.2"}
    assert outcome.facts == (arbiter.result,)
    assert arbiter.result is not None
    assert arbiter.result.at == NOW


def test_set_result_article_is_optional() -> None:
    arbiter = busy_arbiter()
    outcome = run("set_result", request(result="1/2-1/2", reason="agreed"), arbiter)
    assert ok_data(outcome)["article"] == ""


@pytest.mark.parametrize("edition", ["fide-2018", "fide-1997"])
def test_a_correct_threefold_claim_draws(edition: str) -> None:
    arbiter = arbiter_after(THREEFOLD, edition=edition)
    outcome = run("claim_draw", request(), arbiter)
    assert ok_data(outcome) == {
        "valid": True,
        "result": "1/2-1/2",
        "reason": "threefold repetition claimed",
        "article": "9.2",
    }
    assert outcome.facts == (arbiter.result,)
    assert outcome.game_changed


def test_a_claim_with_the_intended_move_that_repeats_the_position() -> None:
    arbiter = arbiter_after(THREEFOLD[:-1])  # Black's f6g8 would make the third occurrence
    before = list(arbiter.board.move_stack)
    outcome = run("claim_draw", request(move="f6g8"), arbiter)
    assert ok_data(outcome)["valid"] is True
    assert arbiter.board.move_stack == before  # the claim is judged, the move not recorded


@pytest.mark.parametrize(
    ("edition", "article", "penalty_words"),
    [
        ("fide-2018", "9.5.3", "two minutes are added to the opponent"),
        ("fide-1997", "9.5(b)", "half of the claimant's remaining time"),
    ],
)
def test_an_incorrect_claim_is_ok_with_the_editions_penalty(
    edition: str, article: str, penalty_words: str
) -> None:
    arbiter = arbiter_after(THREEFOLD[:6], edition=edition)  # only two occurrences so far
    outcome = run("claim_draw", request(), arbiter)
    data = ok_data(outcome)
    assert data["valid"] is False
    assert data["article"] == article
    assert penalty_words in data["penalty"]
    assert data["penalty"] == rules.edition(edition).claim_penalty_text
    (alert,) = outcome.facts
    assert isinstance(alert, AlertRaised)
    assert (alert.kind, alert.article, alert.id) == ("incorrect_claim", article, data["alert_id"])
    assert alert.color == chess.WHITE
    assert arbiter.result is None
    assert outcome.game_changed


def test_the_two_editions_penalties_differ() -> None:
    texts = {rules.edition(name).claim_penalty_text for name in ("fide-2018", "fide-1997")}
    assert len(texts) == 2


@pytest.mark.parametrize(
    ("white_side", "running", "expected"),
    [
        (
            ClockSide.LEFT,
            "white",
            ClockSetting(left=300, right=240, left_runs=True, right_runs=False, pause=False),
        ),
        (
            ClockSide.RIGHT,
            "white",
            ClockSetting(left=240, right=300, left_runs=False, right_runs=True, pause=False),
        ),
        (
            ClockSide.RIGHT,
            "black",
            ClockSetting(left=240, right=300, left_runs=True, right_runs=False, pause=False),
        ),
        (
            ClockSide.LEFT,
            None,
            ClockSetting(left=300, right=240, left_runs=False, right_runs=False, pause=True),
        ),
    ],
)
def test_adjust_clock_maps_colours_to_the_clock_sides(
    white_side: ClockSide, running: str | None, expected: ClockSetting
) -> None:
    arbiter = with_clock(arbiter_after([]), white=white_side, paused=running == "black")
    before = state(arbiter)
    outcome = run("adjust_clock", request(white=300, black=240, running=running), arbiter)
    assert ok_data(outcome) == {"white": 300, "black": 240, "running": running}
    assert outcome.set_clock == expected
    assert not outcome.game_changed  # the clock reports its new times itself
    assert state(arbiter) == before


def test_adjust_clock_cannot_run_the_side_whose_lever_is_down() -> None:
    arbiter = with_clock(arbiter_after([]), white=ClockSide.LEFT)  # White's lever is up
    before = state(arbiter)
    outcome = run("adjust_clock", request(white=60, black=60, running="black"), arbiter)
    assert outcome.response.error is not None
    assert "lever is up on white's side" in outcome.response.error
    assert outcome.set_clock is None
    assert state(arbiter) == before


def test_adjust_clock_with_running_omitted_pauses() -> None:
    arbiter = with_clock(arbiter_after([]), white=ClockSide.LEFT)
    outcome = run("adjust_clock", request(white=1, black=2), arbiter)
    assert outcome.set_clock is not None
    assert outcome.set_clock.pause


def test_ack_alert() -> None:
    arbiter = busy_arbiter()
    outcome = run("ack_alert", request(id=1), arbiter)
    assert ok_data(outcome) == {"id": 1}
    assert arbiter.alerts == []
    assert outcome.game_changed


def test_assign_replaces_the_whole_assignment() -> None:
    arbiter = busy_arbiter()
    before = state(arbiter)
    payload = request(
        white="Carlsen, Magnus",
        black="Nepomniachtchi, Ian",
        white_fide_id=1503014,
        black_fide_id=4168119,
        white_rating=2855,
        black_rating=2782,
        event="World Championship",
        round="6",
        board=1,
    )
    outcome = run("assign", payload, arbiter, Assignment(white="x", black="y", event="old"))
    assert ok_data(outcome) == {
        "white": "Carlsen, Magnus",
        "black": "Nepomniachtchi, Ian",
        "white_fide_id": 1503014,
        "black_fide_id": 4168119,
        "white_rating": 2855,
        "black_rating": 2782,
        "event": "World Championship",
        "round": "6",
        "board": 1,
    }
    assert outcome.assignment is not None
    assert outcome.assignment.players() == {
        "white": "Carlsen, Magnus",
        "black": "Nepomniachtchi, Ian",
        "white_fide_id": "1503014",
        "black_fide_id": "4168119",
        "white_rating": "2855",
        "black_rating": "2782",
    }
    minimal = run("assign", request(white="A", black="B"), arbiter, outcome.assignment)
    assert minimal.assignment == Assignment(white="A", black="B")
    assert outcome.game_changed
    assert state(arbiter) == before


def test_replay_is_left_to_the_shell() -> None:
    arbiter = busy_arbiter()
    before = state(arbiter)
    outcome = run("replay", request(from_seq=17), arbiter)
    assert ok_data(outcome) == {"from_seq": 17}
    assert outcome.replay_from == 17
    assert not outcome.game_changed
    assert state(arbiter) == before


# --- expiry, outcome helpers, retained game ----------------------------------------------------


@pytest.mark.parametrize(
    ("expires_at", "seconds"),
    [
        ("2027-01-15T08:01:00Z", WALL + 60),
        ("2027-01-15T08:01:00+00:00", WALL + 60),
        ("2027-01-15T08:00:00.500Z", WALL + 0.5),
        (WALL + 3600, WALL + 3600),
        (int(WALL) + 1, WALL + 1),
    ],
)
def test_expiry_forms(expires_at: str | float, seconds: float) -> None:
    assert wire.check_expiry(expires_at, WALL) == seconds


@pytest.mark.parametrize("expires_at", [WALL, float("nan"), float("inf"), WALL + 3600.5])
def test_expiry_refused(expires_at: float) -> None:
    with pytest.raises(RejectedError):
        wire.check_expiry(expires_at, WALL)


def test_outcome_helpers() -> None:
    outcome = run("replay", request(from_seq=3), arbiter_after([]))
    more = outcome.with_data(count=2)
    assert more.response.data == {"from_seq": 3, "count": 2}
    assert more.replay_from == 3
    failed = outcome.failed("no")
    assert (failed.response.status, failed.response.error) == ("error", "no")
    assert failed.response.transaction == "tx-1"
    assert failed.response.data == {}
    assert failed.replay_from is None
    assert not failed.ok
    assert outcome.ok


def test_every_command_has_a_schema_forbidding_unknown_fields() -> None:
    assert set(wire.REQUESTS) == {
        "new_game",
        "set_position",
        "correct_move",
        "reconstruct",
        "takeback",
        "set_result",
        "claim_draw",
        "adjust_clock",
        "ack_alert",
        "assign",
        "replay",
    }
    for name, schema in wire.REQUESTS.items():
        assert schema.__struct_config__.forbid_unknown_fields, name
        assert {"transaction", "expires_at"} <= set(schema.__struct_fields__), name


def test_the_assignment_is_in_the_retained_game_and_the_saved_game() -> None:
    arbiter = busy_arbiter()
    assignment = Assignment(white="A", black="B", white_fide_id=7, event="Open", round="2.1")
    data = game_data(arbiter.snapshot(), "g1", "fide-2018", 5, assignment=assignment)
    assert data.players == {"white": "A", "black": "B", "white_fide_id": "7"}
    assert (data.event, data.round, data.board) == ("Open", "2.1", None)
    numbered = game_data(arbiter.snapshot(), "g1", "fide-2018", 5, assignment=Assignment(board=3))
    assert (numbered.players, numbered.board) == (None, "3")
    bare = game_data(arbiter.snapshot(), "g1", "fide-2018", 5)
    assert (bare.players, bare.event, bare.round, bare.board) == (None, None, None, None)

    saved = SavedGame(id="g1", start_fen="s", moves=[], rules="r", assignment=assignment)
    assert msgspec.json.decode(msgspec.json.encode(saved), type=SavedGame) == saved
    old = b'{"id":"g1","start_fen":"s","moves":[],"rules":"r","result":null}'
    assert msgspec.json.decode(old, type=SavedGame).assignment == Assignment()


# --- a request is carried out once ---------------------------------------------------------------


def checked(command: str, payload: bytes) -> wire.Request:
    result = wire.parse(command, payload, wall_now=WALL)
    assert isinstance(result, wire.Request)
    return result


def test_a_repeat_is_known_by_its_content_whatever_its_expiry_or_key_order() -> None:
    first = checked("takeback", request(plies=1))
    again = checked(
        "takeback",
        msgspec.json.encode({"plies": 1, "expires_at": WALL + 120, "transaction": "tx-1"}),
    )
    assert (again.transaction, again.digest) == (first.transaction, first.digest)
    assert first.expires == WALL + 60
    other = checked("takeback", request(plies=2))
    assert other.digest != first.digest
    assert checked("claim_draw", request()).digest != checked("takeback", request()).digest


def test_a_repeat_gets_the_first_response_and_changes_nothing() -> None:
    arbiter = arbiter_after(["e2e4", "e7e5"])
    first = checked("takeback", request(plies=1))
    outcome = commands.carry_out(first, arbiter=arbiter, assignment=Assignment(), now=NOW)
    assert outcome.ok
    before = arbiter.snapshot()
    again = commands.repeat_of(first, outcome.response, first.digest)
    assert (again.response, again.repeated) == (outcome.response, True)
    assert (again.facts, again.game_changed, again.new_game) == ((), False, False)
    assert arbiter.snapshot() == before


def test_a_transaction_reused_for_another_request_is_refused() -> None:
    first = checked("takeback", request(plies=1))
    other = checked("takeback", request(plies=2))
    refused = commands.repeat_of(
        other, wire.Response(transaction="tx-1", status="ok", data={}, error=None), first.digest
    )
    assert refused.response.status == "error"
    assert refused.response.error is not None
    assert "already answered a different takeback request" in refused.response.error
    assert not refused.repeated


def test_an_expired_request_is_refused_before_it_is_checked_for_repeats() -> None:
    outcome = wire.parse("takeback", request(expires_at=WALL - 1), wall_now=WALL)
    assert isinstance(outcome, wire.Refusal)
    assert outcome.response.status == "error"


def test_reconstruct_records_the_moves_an_arbiter_establishes() -> None:
    """A restart found a board that two orders of the same moves explain: the arbiter says."""
    arbiter = arbiter_after(["e2e4", "e7e5", "g1f3"])
    played = arbiter.board.copy()
    for uci in ("b8c6", "f1b5", "a7a6"):
        played.push_uci(uci)
    outcome = run("reconstruct", request(moves=["b8c6", "f1b5", "a7a6"]), arbiter)
    data = ok_data(outcome)
    assert data == {
        "moves": ["b8c6", "f1b5", "a7a6"],
        "san": ["Nc6", "Bb5", "a6"],
        "fen": played.fen(),
    }
    assert [
        (f.move.uci(), f.completed_by.value) for f in outcome.facts if isinstance(f, MovePlayed)
    ] == [
        ("b8c6", "reconstructed"),
        ("f1b5", "reconstructed"),
        ("a7a6", "reconstructed"),
    ]
    assert arbiter.board.move_stack == played.move_stack
    assert outcome.game_changed


def test_reconstruct_after_the_game_ended_is_refused() -> None:
    arbiter = busy_arbiter()
    run("set_result", request(result="0-1", reason="White resigned"), arbiter)
    outcome = run("reconstruct", request(moves=["b8c6"]), arbiter)
    assert not outcome.ok
    assert "the game is over" in (outcome.response.error or "")


def test_moves_typed_on_a_command_line_are_one_word_apart_by_spaces_or_commas() -> None:
    payload = requests.build(
        "reconstruct",
        {"moves": "b8c6, f1b5 a7a6"},
        transaction="t",
        expires_at=WALL + 60,
        strict=False,
    )
    assert msgspec.json.decode(payload)["moves"] == ["b8c6", "f1b5", "a7a6"]
