"""The engine and the relay joined, with no I/O: an illegal move that stood, end to end.

The real arbiter is played by hand (``tests.unit.test_laws.Table``); each step's facts are
encoded as the daemon publishes them (``payloads.fact_data``, then the retained ``game`` from
``game_data``) and folded by the relay's :class:`RelayTable`. The PGN the relay writes must be
the engine's own game: part 1 the snapshot's ``earlier`` part, part 2 its current part from
``start_fen``, with the linking headers and comments.
"""

from __future__ import annotations

from collections.abc import Callable

import chess
import chess.pgn
import msgspec
import pytest

from bridge.arbiter.facts import Fact, TouchReported
from bridge.relay.game import RelayTable
from bridge.relay.pgn import Broadcast, table_pgn
from bridge.table.daemon import game_data
from bridge.wire import payloads
from drivers.choreography import Lift, Place
from tests.pgn_check import read_games, sans
from tests.unit.test_laws import Table

P = chess.Piece.from_symbol
GAME = "t1-20260501T140000Z"
NOW = 1e9

# White may no longer castle: castling short is an illegal move.
NO_RIGHTS = "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w kq - 0 8"

Hands = Callable[[Table], list[Fact]]


class Joined:
    """A table's arbiter and a relay folding what the daemon would publish of it."""

    def __init__(self, fen: str, edition: str) -> None:
        self.table = Table(fen, edition)
        self.edition = edition
        self.relay = RelayTable("t1")
        self.seq = 0
        self.emit([])

    def emit(self, facts: list[Fact]) -> None:
        """The step's events, then the retained snapshot (the daemon's order)."""
        for fact in facts:
            if not isinstance(fact, TouchReported):
                kind, suffix, data = payloads.fact_data(fact)
                self._send(kind, suffix, data)
        snap = self.table.arbiter.snapshot()
        self._send("game", "game", game_data(snap, GAME, self.edition, self.seq))

    def _send(self, kind: str, suffix: str, data: msgspec.Struct) -> None:
        self.seq += 1
        raw = payloads.encode("t1", GAME, 1, self.seq, 1_790_000_000.0 + self.seq, kind, data)
        envelope = payloads.decode_envelope(raw)
        assert self.relay.apply(envelope, suffix=suffix, received=100.0 + self.seq)

    def play(self, moves: str) -> None:
        for san in moves.split():
            self.emit(self.table.play(san))

    def by_hand(self, hands: Hands, color: chess.Color) -> None:
        """Lifts and places, then the press of ``color``; the harness follows the engine."""
        self.emit(hands(self.table) + self.table.press(color))
        self.table.board = self.table.arbiter.board.copy()

    def pgn(self) -> str:
        return table_pgn(self.relay, NOW, Broadcast(event="Open"))


def said(node: chess.pgn.GameNode) -> str:
    return " ".join(node.comment.split())


def moves_of(start_fen: str, moves: tuple[tuple[str, str], ...]) -> list[str]:
    board = chess.Board(start_fen)
    for uci, _ in moves:
        board.push_uci(uci)
    return [san for _, san in moves]


def rook_like(t: Table) -> list[Fact]:
    """The bishop of c4 moved like a rook to c5."""
    return t.do([Lift(chess.C4), Place(chess.C5, P("B"))])


def castles_short(t: Table) -> list[Fact]:
    return t.do([Lift(chess.E1), Place(chess.G1, P("K")), Lift(chess.H1), Place(chess.F1, P("R"))])


def rook_then_king(t: Table) -> list[Fact]:
    """Rook first: h1-f1 is recorded as a legal move, then taken back for the illegal castling."""
    return (
        t.do([Lift(chess.H1), Place(chess.F1, P("R"))])
        + t.wait(1.0)
        + t.do([Lift(chess.E1), Place(chess.G1, P("K"))])
    )


def two_knights(t: Table) -> list[Fact]:
    """Nf3 released, then Nc3 as well before the press: two moves in one turn."""
    return (
        t.do([Lift(chess.G1), Place(chess.F3, P("N"))])
        + t.wait(1.0)
        + t.do([Lift(chess.B1), Place(chess.C3, P("N"))])
    )


def no_move(t: Table) -> list[Fact]:
    return []


def d6(t: Table) -> list[Fact]:
    return t.do([Lift(chess.D7), Place(chess.D6, P("p"))])


def h6(t: Table) -> list[Fact]:
    return t.do([Lift(chess.H7), Place(chess.H6, P("p"))])


def nc6(t: Table) -> list[Fact]:
    return t.do([Lift(chess.B8), Place(chess.C6, P("n"))])


def takes_c5(t: Table) -> list[Fact]:
    """Black's bishop takes the bishop that came to c5 illegally."""
    return t.do([Lift(chess.C5), Lift(chess.F8), Place(chess.C5, P("b"))])


ITALIAN = "e4 e5 Nf3 Nc6 Bc4 Nf6"

S = chess.STARTING_FEN
SCENARIOS = [
    # edition, start, opening, illegal move, reply, later moves, the move as named, article
    pytest.param(
        "fide-1997-blitz",
        S,
        ITALIAN,
        rook_like,
        d6,
        "Nc3 Bg4",
        "4. Bc4-c5",
        "C.3",
        id="1997-blitz-bishop-like-a-rook",
    ),
    pytest.param(
        "fide-1997-rapid",
        S,
        ITALIAN,
        rook_like,
        d6,
        "Nc3",
        "4. Bc4-c5",
        "B.5",
        id="1997-rapid-bishop-like-a-rook",
    ),
    pytest.param(
        "fide-2018-rapid",
        S,
        ITALIAN,
        rook_like,
        d6,
        "Nc3",
        "4. Bc4-c5",
        "A.4.2",
        id="2018-rapid-bishop-like-a-rook",
    ),
    pytest.param(
        "fide-2018-blitz",
        S,
        ITALIAN,
        rook_like,
        takes_c5,
        "Nc3 d6",
        "4. Bc4-c5",
        "A.4.2, B.4",
        id="the-reply-takes-the-piece",
    ),
    pytest.param(
        "fide-1997-blitz",
        NO_RIGHTS,
        "",
        castles_short,
        h6,
        "a3 a6",
        "8. Ke1-g1",
        "C.3",
        id="castling-without-the-right",
    ),
    pytest.param(
        "fide-1997-blitz",
        NO_RIGHTS,
        "",
        rook_then_king,
        h6,
        "a3",
        "8. Ke1-g1",
        "C.3",
        id="rook-first-castling-the-rook-move-taken-back",
    ),
    pytest.param(
        "fide-2018-blitz",
        S,
        "e4 e5",
        no_move,
        d6,
        "d4",
        "2. (the clock pressed without a move)",
        "A.4.2, B.4",
        id="press-without-a-move",
    ),
    pytest.param(
        "fide-2018-rapid",
        S,
        "e4 e5",
        two_knights,
        nc6,
        "d3",
        "2. Nb1-c3",
        "A.4.2",
        id="two-moves-in-one-turn",
    ),
]


@pytest.mark.parametrize(
    ("edition", "start", "opening", "illegal", "reply", "later", "named", "article"),
    SCENARIOS,
)
def test_the_broadcast_is_the_engine_s_game_in_two_parts(
    edition: str,
    start: str,
    opening: str,
    illegal: Hands,
    reply: Hands,
    later: str,
    named: str,
    article: str,
) -> None:
    joined = Joined(start, edition)
    joined.play(opening)
    joined.by_hand(illegal, chess.WHITE)
    joined.by_hand(reply, chess.BLACK)
    joined.play(later)
    snap = joined.table.arbiter.snapshot()
    [earlier] = snap.earlier
    assert earlier.fen == snap.start_fen

    text = joined.pgn()
    first, second = read_games(text)
    assert sans(first) == moves_of(earlier.start_fen, earlier.moves)
    assert sans(second) == moves_of(snap.start_fen, snap.moves)
    assert len(snap.moves) == 1 + len(later.split())
    assert first.board().fen() == earlier.start_fen
    assert second.headers["FEN"] == snap.start_fen
    assert second.headers["SetUp"] == "1"
    assert (first.headers["Part"], second.headers["Part"]) == ("1", "2")
    assert (first.headers["Event"], second.headers["Event"]) == ("Open", "Open (part 2)")
    assert first.headers["Result"] == "*"
    assert f"Illegal move {named} by White stood (Art. {article})" in said(first.end())
    assert f"the illegal move {named} by White, which stood" in said(second)
    assert "Illegal move by" not in " ".join(text.split())  # it stood: no penalty noted
    assert "set by the arbiter" not in text
    clocks = [node.clock() for node in second.mainline()]
    assert None not in clocks, clocks


def test_a_2018_illegal_move_taken_back_is_one_game_with_its_penalty() -> None:
    """Standard play: the illegal move never stands; the offender puts it right and plays on."""
    joined = Joined(chess.STARTING_FEN, "fide-2018")
    joined.play(ITALIAN)
    joined.by_hand(rook_like, chess.WHITE)
    joined.emit(joined.table.do([Lift(chess.C5), Place(chess.C4, P("B"))]))
    joined.play("Nc3 d6")
    snap = joined.table.arbiter.snapshot()
    assert snap.earlier == ()
    (game,) = read_games(joined.pgn())
    assert sans(game) == [*ITALIAN.split(), "Nc3", "d6"]
    assert "Part" not in game.headers
    nodes = list(game.mainline())
    assert said(nodes[5]).startswith("Illegal move by White (Art. 7.5.1): 2 minutes extra")
    assert all("Illegal" not in said(node) for node in nodes[:5] + nodes[6:])
