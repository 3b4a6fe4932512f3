"""The engine benchmark's streams are what they claim, and both contenders follow the game.

No timing is asserted here (timings belong to the benchmark's own report); these tests check
that the figures it prints are about the right work: every played move completed once in the
stream, the matcher in sync with the game, the engine recording the played game.
"""

from __future__ import annotations

import chess
import pytest

from bench.engine_bench import (
    RATIO_BAR,
    STREAMS,
    Game,
    StreamSpec,
    Verdict,
    bucket_of,
    make_stream,
    matchers_for,
    run_engine,
    run_matcher,
)
from drivers.events import UNKNOWN, ClockReading, SquareEmptied, SquareOccupied

GAMES = 3
PLIES = 60


def _stream(name: str) -> tuple[StreamSpec, list[Game]]:
    spec = next(s for s in STREAMS if s.name == name)
    return spec, make_stream(spec, GAMES, seed=7, max_plies=PLIES)


@pytest.mark.parametrize("name", [s.name for s in STREAMS])
def test_every_played_move_is_completed_once_in_time_order(name: str) -> None:
    _, games = _stream(name)
    for game in games:
        completed = [move for t in game.events for move in t.completes]
        assert completed == list(game.moves)
        times = [t.event.at for t in game.events]
        assert times == sorted(times)


@pytest.mark.parametrize("name", [s.name for s in STREAMS if not s.occupancy and not s.overlap])
def test_matchers_stay_in_sync_on_boards_that_know_the_pieces(name: str) -> None:
    spec, games = _stream(name)
    plies = sum(len(g.moves) for g in games)
    for compare in matchers_for(spec):
        run = run_matcher(games, compare)
        assert (run.moves, run.wrong, run.games_equal) == (plies, 0, GAMES), compare


@pytest.mark.parametrize("name", [s.name for s in STREAMS if s.overlap])
def test_replies_begun_early_are_in_the_overlap_streams_and_no_snapshot_shows_them(
    name: str,
) -> None:
    # About half the replies begin before the move they answer has landed: at the move's last
    # step the board shows the move and the reply's first lift (no snapshot matches), or the
    # reply is down already (that step completes both). The matcher follows the game, misses
    # those moves, and never takes one for another.
    spec, games = _stream(name)
    both = sum(len(t.completes) == 2 for g in games for t in g.events)
    assert both >= GAMES
    run = run_matcher(games, matchers_for(spec)[0])
    plies = sum(len(g.moves) for g in games)
    assert run.wrong == 0
    assert plies // 4 < plies - run.moves < plies


def test_occupancy_matcher_follows_the_game() -> None:
    # Occupancy alone cannot tell two captures by the same piece apart: the matcher may match
    # another move there, but at every completing event it matches one, and then follows the game.
    _, games = _stream("occupancy")
    run = run_matcher(games, "occupancy")
    plies = sum(len(g.moves) for g in games)
    assert run.moves + run.wrong == plies
    assert run.games_equal + run.wrong >= GAMES


@pytest.mark.parametrize("name", [s.name for s in STREAMS])
def test_engine_records_the_played_games(name: str) -> None:
    spec, games = _stream(name)
    run = run_engine(games, spec.config())
    assert run.games_equal + run.games_ended_early == GAMES


def test_streams_hold_what_their_names_say() -> None:
    def census(name: str) -> dict[str, int]:
        _, games = _stream(name)
        out = {"castling": 0, "promotion": 0, "under": 0, "slide": 0, "victim_first": 0}
        for game in games:
            board = chess.Board()
            events = iter(t for t in game.events if not isinstance(t.event, ClockReading))
            for move in game.moves:
                seq = []
                for timed in events:
                    seq.append(timed.event)
                    if timed.completes:
                        break
                out["castling"] += board.is_castling(move)
                out["promotion"] += move.promotion is not None
                out["under"] += move.promotion not in (None, chess.QUEEN)
                out["slide"] += len(seq) > 4
                first = seq[0]
                out["victim_first"] += (
                    board.is_capture(move)
                    and isinstance(first, SquareEmptied)
                    and first.square != move.from_square
                )
                board.push(move)
        return out

    assert census("castling")["castling"] >= GAMES
    assert census("promotions")["promotion"] >= GAMES
    assert census("promotions")["under"] >= 1
    assert census("slides")["slide"] >= GAMES
    assert census("victim_first")["victim_first"] >= GAMES
    assert census("plain")["victim_first"] == 0


def test_occupancy_stream_reports_only_occupancy_and_no_clock() -> None:
    _, games = _stream("occupancy")
    events = [t.event for g in games for t in g.events]
    assert not any(isinstance(e, ClockReading) for e in events)
    placed = [e for e in events if isinstance(e, SquareOccupied)]
    assert placed
    assert all(e.piece is UNKNOWN for e in placed)


@pytest.mark.parametrize("name", [s.name for s in STREAMS if s.scan is not None])
def test_boards_that_report_readings_report_them_at_their_scan(name: str) -> None:
    spec, games = _stream(name)
    assert spec.scan is not None
    events = [t.event for g in games for t in g.events]
    assert not any(isinstance(e, ClockReading) for e in events)
    assert all(abs(e.at / spec.scan - round(e.at / spec.scan)) < 1e-6 for e in events)
    # Within one reading the squares emptied come first, as the families' codecs send them.
    for game in games:
        kinds_at: dict[float, list[bool]] = {}
        for timed in game.events:
            kinds_at.setdefault(timed.event.at, []).append(isinstance(timed.event, SquareEmptied))
        assert all(kinds == sorted(kinds, reverse=True) for kinds in kinds_at.values())


def test_a_slow_reading_hides_a_slide() -> None:
    # A Certabo board reads once a second: a slider's way (a square each 0.1 s) is not seen.
    _, games = _stream("certabo")
    per_move = []
    for game in games:
        count = 0
        for timed in game.events:
            count += 1
            if timed.completes:
                per_move.append(count)
                count = 0
    assert max(per_move) <= 4  # a capture's two lifts and a place, castling's two and two


def test_a_stream_that_loses_a_game_misses_the_bar_whatever_its_ratio() -> None:
    lost = Verdict("s", 1.0, 1.0, ratio=50.0, quickest_ratio=5.0, in_sync=False)
    assert not lost.met()
    assert "lost" in lost.word()
    assert Verdict("s", 1.0, 1.0, ratio=RATIO_BAR, quickest_ratio=1.0, in_sync=True).met()
    assert not Verdict("s", 1.0, 1.0, ratio=RATIO_BAR - 0.1, quickest_ratio=1.0, in_sync=True).met()


@pytest.mark.parametrize(
    ("kind", "moved", "bucket"),
    [
        ("lift", True, "completing"),
        ("place", True, "completing"),
        ("place", False, "place"),
        ("press", True, "press"),
        ("tick", True, "tick"),
        ("timer", True, "timer"),
    ],
)
def test_only_a_lift_or_place_that_records_a_move_is_completing(
    kind: str, moved: bool, bucket: str
) -> None:
    assert bucket_of(kind, moved) == bucket
