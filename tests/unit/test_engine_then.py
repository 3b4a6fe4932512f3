"""The engine against an earlier commit's (bench.engine_then): a faithful replay of the streams.

No timing is asserted. What is checked is that a child process fed the encoded streams plays the
same games the benchmark's own engine run plays (same moves, same events completing them), that
an earlier commit's tree is unpacked and its own engine imported, and that a commit this
repository does not hold is refused with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import engine_then
from bench._replay_engine import bucket_of
from bench.engine_bench import STREAMS, make_stream, run_engine


def _streams(tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, dict[str, int]]:
    """Three short games per stream, encoded to a file; the completing events of games 2-3."""
    encoded, completing = {}, {}
    for spec in (s for s in STREAMS if s.name in names):
        games = make_stream(spec, 3, 7, max_plies=40)
        encoded[spec.name] = engine_then.encode(games)
        completing[spec.name] = len(run_engine(games[1:], spec.config()).costs["completing"])
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(encoded))
    return path, completing


@pytest.mark.parametrize("name", ["victim_first", "slides", "promotions"])
def test_the_replay_plays_the_streams_as_the_benchmark_does(tmp_path: Path, name: str) -> None:
    streams, completing = _streams(tmp_path, (name,))
    played = json.loads(streams.read_text())[name]
    result = engine_then.replay(engine_then.ROOT, streams)[name]
    assert result["games"] == 3
    assert result["equal"] == 3
    assert result["moves"] == sum(len(game["moves"]) for game in played)
    # The first game warms up; the others' events are timed and put where engine_bench puts them.
    assert len(result["costs"]["completing"]) == completing[name] > 0
    assert all(cost > 0 for cost in result["costs"]["completing"])


def test_an_earlier_tree_is_unpacked_and_its_own_engine_is_fed(tmp_path: Path) -> None:
    tree = engine_then.unpack("HEAD", tmp_path)
    assert (tree / "bridge" / "arbiter" / "engine.py").is_file()
    assert (tree / "drivers" / "events.py").is_file()
    streams, completing = _streams(tmp_path, ("plain",))
    result = engine_then.replay(tree, streams)["plain"]
    assert result["equal"] == 3
    assert len(result["costs"]["completing"]) == completing["plain"]


def test_a_child_whose_tree_lacks_the_engine_is_reported(tmp_path: Path) -> None:
    streams, _ = _streams(tmp_path, ("plain",))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SystemExit, match=r"the engine of .*empty failed"):
        engine_then.replay(tmp_path / "empty", streams)


def test_a_commit_not_in_the_repository_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"cannot read commit 'no-such-rev'.*with the history"):
        engine_then.unpack("no-such-rev", tmp_path)


def test_figures_about_other_games_are_told_apart() -> None:
    def figures(moves: int, equal: int, completing: int) -> dict[str, object]:
        return {"moves": moves, "equal": equal, "costs": {"completing": [1] * completing}}

    assert engine_then.same_games(figures(80, 2, 50), figures(80, 2, 50))
    assert not engine_then.same_games(figures(80, 2, 50), figures(79, 2, 50))
    assert not engine_then.same_games(figures(80, 2, 50), figures(80, 1, 50))
    assert not engine_then.same_games(figures(80, 2, 50), figures(80, 2, 49))


def test_only_the_issues_engine_gets_the_issues_verdict() -> None:
    assert engine_then.ISSUE_REV in engine_then.ISSUE_ENGINES
    assert not engine_then.is_issue_engine("HEAD")  # this tree's own commit
    assert not engine_then.is_issue_engine("no-such-rev")


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
