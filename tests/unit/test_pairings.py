"""Pairings read from TRF-16 and CSV files (written from the format's description in
tests/trf.py), the venue map, and the mistakes a person sees as one line naming the line."""

from __future__ import annotations

import pytest

from bridge.wire import pairings
from bridge.wire.pairings import PairingsError, read_pairings
from tests.trf import Row, thirty_boards, trf


def test_thirty_boards_with_a_bye_a_forfeit_and_a_withdrawn_player() -> None:
    text = trf(thirty_boards())
    got, parsed = read_pairings(text, 1, "r1.trf")
    assert parsed is not None
    assert got.event == "Test Open 2026"
    assert [p.board for p in got.pairings] == list(range(1, 31))
    # Round 1: no scores yet, so the board is the higher-ranked player's start rank.
    for pairing in got.pairings:
        assert min(pairing.white.rank or 0, pairing.black.rank or 0) == pairing.board
        assert {pairing.white.rank, pairing.black.rank} == {pairing.board, pairing.board + 30}
    first, second, last = got.pairings[0], got.pairings[1], got.pairings[29]
    assert (first.white.name, first.black.name) == ("Player01, Test", "Player31, Test")
    assert (first.white.fide_id, first.white.rating) == (1_000_001, 2690)
    assert (second.white.rank, second.black.rank) == (32, 2)
    assert first.line == 4  # 012, 022 and 042 come first
    assert (last.white.rank, last.result, last.forfeit) == (60, "0-1", True)
    assert [(u.player.rank, u.code, u.describe()) for u in got.unpaired] == [
        (61, "U", "pairing-allocated bye"),
        (62, "", "not paired"),
    ]


def test_boards_follow_the_scores_then_their_sum_then_the_start_rank() -> None:
    rows = [Row(rank, f"P{rank}") for rank in range(1, 7)]
    # Round 1: 1-4 (4 wins), 2-5 (5 wins), 3-6 (draw). Scores: 4 and 5: 1; 3 and 6: 0.5.
    round1 = {1: (4, "w", "0"), 4: (1, "b", "1"), 2: (5, "b", "0"), 5: (2, "w", "1")}
    round1 |= {3: (6, "w", "="), 6: (3, "b", "=")}
    # Round 2: 4-5 (1+1), 3-1 (0.5+0), 6-2 (0.5+0).
    round2 = {4: (5, "w", " "), 5: (4, "b", " "), 3: (1, "w", " "), 1: (3, "b", " ")}
    round2 |= {6: (2, "w", " "), 2: (6, "b", " ")}
    for row in rows:
        row.rounds = [round1[row.rank], round2[row.rank]]
    got, _ = read_pairings(trf(rows), 2, "r2.trf")
    assert [(p.board, p.white.rank, p.black.rank) for p in got.pairings] == [
        (1, 4, 5),  # top score 1
        (2, 3, 1),  # top score 0.5, sum 0.5, higher-ranked player 1
        (3, 6, 2),  # top score 0.5, sum 0.5, higher-ranked player 2
    ]
    played, _ = read_pairings(trf(rows), 1, "r2.trf")
    assert [p.result for p in played.pairings] == ["0-1", "1-0", "1/2-1/2"]


def test_a_csv_with_its_optional_columns_and_rounds() -> None:
    text = (
        "round,board,white,black,white_fide_id,black_fide_id,white_rating,black_rating\n"
        '1,1,"Carlsen, Magnus","Caruana, Fabiano",1503014,2020009,2830,2795\n'
        "2,2,A,B,,,,\n"
        "2,1,C,D,7,,2100,\n"
    )
    got, parsed = read_pairings(text, 2, "p.csv")
    assert parsed is None
    assert [(p.board, p.white.name, p.black.name, p.line) for p in got.pairings] == [
        (1, "C", "D", 4),
        (2, "A", "B", 3),
    ]
    assert got.pairings[0].white == pairings.Player("C", fide_id=7, rating=2100)
    one, _ = read_pairings(text, 1, "p.csv")
    assert one.pairings[0].black == pairings.Player("Caruana, Fabiano", 2020009, 2795)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("board,white\n1,A\n", "p.csv line 1: the header must name the columns"),
        ("board,white,black\n1,A,B\nx,C,D\n", "p.csv line 3: board 'x' is not a number"),
        ("board,white,black\n1,A,B\n1,C,D\n", "p.csv line 3: board 1 is already on line 2"),
        ("board,white,black\n1,A,B\n2,C,A\n", "p.csv line 3: A plays twice in round 1"),
        (
            "board,white,black,white_fide_id\n1,A,B,5\n2,C,D,5\n",
            "p.csv line 3: C plays twice in round 1 (also on line 2)",
        ),
        ("board,white,black\n1,A,\n", "p.csv line 2: no black player"),
        ("board,white,black\n1,A,B,C\n", "p.csv line 2: more fields than the header names"),
        ("round,board,white,black\n2,1,A,B\n", "p.csv: round 1 is not in the file"),
        ("board,white,black,white_rating\n1,A,B,high\n", "p.csv line 2: white_rating 'high'"),
        ("board,white,black\n", "p.csv: no pairings in the file"),
    ],
)
def test_a_bad_csv_is_one_line_naming_its_line(text: str, message: str) -> None:
    with pytest.raises(PairingsError) as caught:
        read_pairings(text, 1, "p.csv")
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def bad_trf(change: str) -> str:
    rows = thirty_boards()
    if change == "mismatch":
        rows[30].rounds = [(2, "b", " ")]  # rank 31 says it plays 2; 2 plays 32
    elif change == "twice":
        rows[31].rounds = [(1, "w", " ")]  # rank 32 also claims rank 1
    elif change == "colours":
        rows[30].rounds = [(1, "w", " ")]  # both say white
    elif change == "colour":
        rows[0].rounds = [(31, "x", " ")]
    elif change == "ghost":
        rows[61].rounds = [(99, "w", " ")]
    elif change == "rank":
        rows[4].rank = 4
    return trf(rows)


@pytest.mark.parametrize(
    ("change", "round_number", "message"),
    [
        ("mismatch", 1, "r.trf line 4: round 1: player 31 is paired twice: with 1 here, with 2"),
        ("twice", 1, "r.trf line 5: round 1: player 32 is paired twice: with 2 here, with 1 on"),
        ("colours", 1, "r.trf line 4: round 1: player 1 plays 31 with w, but line 34 does not"),
        ("colour", 1, "r.trf line 4, round 1: colour 'x' is not w, b or -"),
        ("ghost", 1, "r.trf line 65: round 1: opponent 99 has no player line"),
        ("rank", 1, "r.trf line 8: start rank 4 is already the player of line 7"),
        ("none", 2, "r.trf: round 2 is not in the file (it holds rounds 1 to 1)"),
    ],
)
def test_a_bad_trf_is_one_line_naming_its_line(
    change: str, round_number: int, message: str
) -> None:
    with pytest.raises(PairingsError) as caught:
        read_pairings(bad_trf(change), round_number, "r.trf")
    assert str(caught.value).startswith(message)


def test_a_player_paired_twice_in_a_trf() -> None:
    rows = [Row(rank, f"P{rank}") for rank in range(1, 4)]
    rows[0].rounds = [(2, "w", " ")]
    rows[1].rounds = [(1, "b", " ")]
    rows[2].rounds = [(1, "b", " ")]  # 3 says it plays 1 too
    with pytest.raises(PairingsError, match=r"^r.trf line 6: round 1: player 1 is paired twice"):
        read_pairings(trf(rows), 1, "r.trf")


def test_the_venue_map_and_the_default_tables() -> None:
    text = '# the hall\n[boards]\n1 = "t001"\n2 = "t002"\n'
    venue = pairings.read_venue(text, "venue.toml")
    assert venue == {1: "t001", 2: "t002"}
    got, _ = read_pairings("board,white,black\n1,A,B\n2,C,D\n3,E,F\n", 1, "p.csv")
    assert pairings.tables(got, None, "p.csv") == {1: "b1", 2: "b2", 3: "b3"}
    with pytest.raises(PairingsError, match=r"^p.csv line 4: board 3 has no table in the venue"):
        pairings.tables(got, venue, "p.csv")
    with pytest.raises(PairingsError, match=r"^v.toml line 3: table t1 is already board 1's"):
        pairings.read_venue('[boards]\n1 = "t1"\n2 = "t1"\n', "v.toml")
    with pytest.raises(PairingsError, match=r"^v.toml line 2: board 1: invalid table id"):
        pairings.read_venue('[boards]\n1 = "a/b"\n', "v.toml")
    with pytest.raises(PairingsError, match=r"^v.toml: needs a \[boards\] table"):
        pairings.read_venue('1 = "t1"\n', "v.toml")
    with pytest.raises(PairingsError, match=r"^v.toml: .*line 2"):
        pairings.read_venue("[boards]\n1 = \n", "v.toml")


def test_results_written_into_the_round_column_read_back() -> None:
    rows = thirty_boards()
    original = trf(rows)
    got, parsed = read_pairings(original, 1, "r.trf")
    assert parsed is not None
    results: dict[int, tuple[int, int, pairings.Result, bool]] = {}
    for pairing in got.pairings:
        result: pairings.Result = ("1-0", "0-1", "1/2-1/2", "*")[pairing.board % 4]
        if pairing.forfeit:
            result = pairing.result
        white, black = pairing.white.rank or 0, pairing.black.rank or 0
        results[pairing.board] = (white, black, result, pairing.forfeit)
    written = pairings.with_results(parsed, 1, results)
    again, _ = read_pairings(written, 1, "r.trf")
    assert [(p.white, p.black) for p in again.pairings] == [
        (p.white, p.black) for p in got.pairings
    ]
    assert [p.result for p in again.pairings] == [results[p.board][2] for p in got.pairings]
    assert again.pairings[29].forfeit
    # Nothing else changed: the other lines, and the columns before the round's.
    for before, after in zip(original.splitlines(), written.splitlines(), strict=True):
        assert before[:91] == after[:91]
    assert [u.player.rank for u in again.unpaired] == [61, 62]
