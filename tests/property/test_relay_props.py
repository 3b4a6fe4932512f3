"""Hypothesis on the relay's fold: whatever order of duplicates, retained copies and presses,
the PGN of a finished game reads back (python-chess) as exactly the game's moves."""

from __future__ import annotations

import chess
from hypothesis import given, settings
from hypothesis import strategies as st

from bridge.relay.game import RelayTable
from bridge.relay.pgn import Broadcast, table_pgn
from tests.pgn_check import read_games, sans
from tests.relay_feed import Item, TableFeed


@st.composite
def games(draw: st.DrawFn) -> tuple[list[Item], list[str], bool]:
    """A random legal game as its table publishes it, with the PGN's expected moves."""
    feed = TableFeed()
    items: list[Item] = [feed.status(), feed.snapshot()]
    played: list[str] = []
    for _ in range(draw(st.integers(0, 30))):
        moves = list(feed.board.legal_moves)
        if not moves:
            break
        move = draw(st.sampled_from(moves))
        san = feed.board.san(move)
        color = "white" if feed.board.turn == chess.WHITE else "black"
        items.append(feed.move(san))
        if draw(st.booleans()):
            items.append(feed.press(color))  # type: ignore[arg-type]
        if draw(st.booleans()):
            items.append(feed.snapshot())
        played.append(san)
    ended = draw(st.booleans())
    if ended:
        items.append(feed.end("1/2-1/2", "agreed"))
    items.append(feed.snapshot())
    return items, played, ended


@settings(max_examples=60, deadline=None)
@given(game=games(), data=st.data())
def test_duplicates_and_order_of_delivery_never_change_the_final_pgn(
    game: tuple[list[Item], list[str], bool], data: st.DataObject
) -> None:
    items, played, ended = game
    table = RelayTable("t1")
    delivered = list(items)
    for _ in range(data.draw(st.integers(0, 10))):
        delivered.insert(
            data.draw(st.integers(0, len(delivered))), data.draw(st.sampled_from(items))
        )
    for suffix, envelope in delivered:
        table.apply(envelope, suffix=suffix, received=10.0, retained=suffix == "game")
    (read,) = read_games(table_pgn(table, 100.0, Broadcast()))
    shown = sans(read)
    if ended:
        assert shown == played
        assert read.headers["Result"] == "1/2-1/2"
    else:
        # Every move but perhaps the last (waiting for its press or the reply) is shown.
        assert played[: len(shown)] == shown
        assert len(shown) >= len(played) - 1
        assert read.headers["Result"] == "*"
