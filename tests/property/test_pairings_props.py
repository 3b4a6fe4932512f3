"""Pairings files written and read back: a TRF-16 file (players, every round's entries) and the
results CSV come back as they were written, whatever the names, ratings and pairings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.views.round import BoardResult, results_csv
from bridge.wire import pairings
from bridge.wire.pairings import Entry, Player, TrfPlayer

NAME = (
    st.text(
        alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F, exclude_characters=',"'),
        min_size=1,
        max_size=33,
    )
    .map(str.strip)
    .filter(bool)
)
CSV_NAME = (
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x24F), min_size=1, max_size=100)
    .map(str.strip)
    .filter(bool)
)
RATING = st.none() | st.integers(1000, 3000)
FIDE_ID = st.none() | st.integers(1, 99_999_999_999 // 10)
CSV_FIDE_ID = st.none() | st.integers(1, 100_000_000)
BYE = st.sampled_from("HFUZ+-")
PLAYED = st.sampled_from("10=+-WDL ")


@st.composite
def tournaments(draw: st.DrawFn) -> list[TrfPlayer]:
    """Players with up to 5 rounds, each round a random matching of some of them."""
    count = draw(st.integers(2, 24))
    rounds = draw(st.integers(1, 5))
    entries: dict[int, dict[int, Entry]] = {rank: {} for rank in range(1, count + 1)}
    for round_number in range(1, rounds + 1):
        ranks = draw(st.permutations(list(range(1, count + 1))))
        paired = draw(st.integers(0, count // 2)) * 2
        for white, black in zip(ranks[:paired:2], ranks[1:paired:2], strict=True):
            code = draw(PLAYED)
            other = {"1": "0", "0": "1", "=": "=", "+": "-", "-": "+", "W": "L", "L": "W"}
            entries[white][round_number] = Entry(black, "w", code)
            entries[black][round_number] = Entry(white, "b", other.get(code, code))
        for rank in ranks[paired:]:
            if draw(st.booleans()):
                entries[rank][round_number] = Entry(0, "-", draw(BYE))
    return [
        TrfPlayer(
            rank=rank,
            name=draw(NAME),
            line=0,
            rating=draw(RATING),
            fide_id=draw(FIDE_ID),
            federation=draw(st.sampled_from(["", "NOR", "IND"])),
            rounds=entries[rank],
        )
        for rank in range(1, count + 1)
    ]


@settings(max_examples=150, deadline=None)
@given(tournaments())
def test_a_trf_reads_back_as_written(players: list[TrfPlayer]) -> None:
    text = pairings.write_trf(players, name="Open")
    trf = pairings.read_trf(text, "t.trf")
    assert trf.name == "Open"
    got = [(p.rank, p.name, p.rating, p.fide_id, p.federation, dict(p.rounds)) for p in trf.players]
    assert got == [
        (p.rank, p.name, p.rating, p.fide_id, p.federation, dict(p.rounds)) for p in players
    ]
    for round_number in range(1, trf.rounds() + 1):
        if not any(round_number in p.rounds for p in players):
            continue
        round_pairings = pairings.trf_pairings(trf, round_number, "t.trf")
        pairs = {(p.white.rank, p.black.rank) for p in round_pairings.pairings}
        assert pairs == {
            (p.rank, e.opponent)
            for p in players
            if (e := p.rounds.get(round_number)) and e.color == "w"
        }
        assert [p.board for p in round_pairings.pairings] == list(
            range(1, len(round_pairings.pairings) + 1)
        )
        # Written back with the pairings' results, the file reads the same again.
        results = {
            p.board: (p.white.rank or 0, p.black.rank or 0, p.result, p.forfeit)
            for p in round_pairings.pairings
        }
        again = pairings.read_trf(pairings.with_results(trf, round_number, results), "t.trf")
        assert pairings.trf_pairings(again, round_number, "t.trf") == round_pairings


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(CSV_NAME, CSV_NAME, CSV_FIDE_ID, RATING, st.sampled_from(pairings.RESULTS)),
        min_size=1,
        max_size=30,
        unique_by=(lambda r: r[0], lambda r: r[1]),
    ).filter(lambda rows: not {r[0] for r in rows} & {r[1] for r in rows}),
    st.integers(1, pairings.MAX_ROUND),
)
def test_the_results_csv_reads_back_as_pairings(
    rows: list[tuple[str, str, int | None, int | None, pairings.Result]], round_number: int
) -> None:
    written = [
        BoardResult(
            board=board,
            table=f"b{board}",
            # Unique per board: one FIDE id on two boards is a player paired twice.
            white=Player(
                white,
                fide_id=None if fide is None else (fide % 100_000) * 100 + board,
                rating=rating,
            ),
            black=Player(black, rating=rating),
            result=result,
            reason=None,
        )
        for board, (white, black, fide, rating, result) in enumerate(rows, 1)
    ]
    text = results_csv(written, round_number)
    got, trf = pairings.read_pairings(text, round_number, "r.csv")
    assert trf is None
    assert [(p.board, p.white, p.black, p.result) for p in got.pairings] == [
        (r.board, r.white, r.black, r.result) for r in written
    ]
