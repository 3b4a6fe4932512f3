"""A relay that joins a game already under way asks the table to replay its earlier events.

The retained ``game`` snapshot has the moves but not the clock after each: those come with the
move and press events, which the table keeps in its journal and resends on ``replay``.
"""

from __future__ import annotations

import chess

from bridge.relay.game import RelayTable
from bridge.relay.gaps import BACKFILL_ROUNDS, BACKFILL_WAIT
from bridge.relay.pgn import Broadcast, table_pgn
from bridge.views.model import TableView
from tests.relay_feed import Item, TableFeed
from tests.unit.test_relay_pgn import games, sans

NOW = 1000.0
RETAINED = frozenset({"status", "board", "game"})


def join(feed: TableFeed, table: RelayTable) -> None:
    """The relay subscribes: the broker hands it the retained status and game."""
    for suffix, envelope in (feed.status(), feed.snapshot()):
        table.apply(envelope, suffix=suffix, received=50.0, retained=True)


def replay(
    feed: TableFeed, table: RelayTable, items: list[Item], from_seq: int, oldest: int = 1
) -> None:
    """The table's answer to a replay: its journal from ``from_seq`` (events and responses, no
    retained state, nothing older than ``oldest``), then the response."""
    sent = [(s, e) for s, e in items if e.seq >= max(from_seq, oldest) and s not in RETAINED]
    for suffix, envelope in sent:
        table.apply(envelope, suffix=suffix, received=60.0)
    data: dict[str, object] = {
        "from_seq": from_seq,
        "count": len(sent),
        "first_seq": sent[0][1].seq if sent else None,
        "last_seq": sent[-1][1].seq if sent else None,
        "oldest_available": oldest,
        "truncated": False,
    }
    suffix, envelope = feed.response("replay", data)
    table.apply(envelope, suffix=suffix, received=60.0)


def clocks(table: RelayTable) -> list[float | None]:
    (game,) = games(table_pgn(table, NOW, Broadcast()))
    return [node.clock() for node in game.mainline()]


def test_the_earlier_events_of_a_game_joined_under_way_give_every_move_its_clock() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    items = [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6 Bb5", spent=20)]
    join(feed, table)
    assert table.unheard() == [1, 2, 3, 4, 5]
    assert clocks(table) == [None] * 5  # the snapshot alone has no clock after each move
    from_seq = table.backfill_due(55.0)
    assert from_seq == 0  # 5 moves, about 6 payloads each and some more: from the start
    table.backfill_asked(55.0)
    assert table.backfill_due(56.0) is None  # asked: waiting for the answer
    replay(feed, table, items, from_seq)
    assert table.unheard() == []
    assert clocks(table) == [5378, 5378, 5356, 5356, 5334]
    assert table.backfill_due(500.0) is None  # done
    (game,) = games(table_pgn(table, NOW, Broadcast()))
    assert sans(game) == ["e4", "e5", "Nf3", "Nc6", "Bb5"]


def test_a_replay_that_did_not_reach_far_enough_is_asked_again_further_back() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    items: list[Item] = [feed.status(), feed.snapshot()]
    for san in ["d4", "d5", "c4", "e6", "Nc3", "Nf6"]:
        items += feed.play(san)
        feed.seq += 30  # touches and alerts the relay never needs
    join(feed, table)
    first = table.backfill_due(55.0)
    assert first is not None
    assert first > 1
    table.backfill_asked(55.0)
    replay(feed, table, items, first)
    assert 0 < len(table.unheard()) < 6  # the latest moves came, not the first ones
    second = table.backfill_due(56.0)
    assert second is not None
    assert second < first  # due at once, from further back
    table.backfill_asked(56.0)
    replay(feed, table, items, second)
    while (again := table.backfill_due(57.0)) is not None:
        table.backfill_asked(57.0)
        replay(feed, table, items, again)
    assert table.unheard() == []
    assert None not in clocks(table)


def test_what_the_table_no_longer_keeps_stays_without_a_clock() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    items = [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6")]
    join(feed, table)
    from_seq = table.backfill_due(55.0)
    assert from_seq is not None
    table.backfill_asked(55.0)
    oldest = next(e.seq for s, e in items if s == "event/move" and e.data["ply"] == 3)
    replay(feed, table, items, from_seq, oldest=oldest)  # the journal wrapped before ply 3
    assert table.unheard() == [1, 2]
    assert table.backfill_due(500.0) is None  # nothing older kept: no more asking
    assert clocks(table) == [None, None, 5376, 5376]


def test_an_unanswered_replay_is_asked_again_a_few_times_only() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    feed.play("e4 e5")
    join(feed, table)
    now = 55.0
    for _ in range(BACKFILL_ROUNDS):
        assert table.backfill_due(now) is not None
        table.backfill_asked(now)
        assert table.backfill_due(now + 1.0) is None
        now += BACKFILL_WAIT
    assert table.backfill_due(now) is None


def test_a_game_followed_from_its_start_asks_for_nothing() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    join(feed, table)
    for suffix, envelope in feed.play("e4 e5 Nf3"):
        table.apply(envelope, suffix=suffix, received=60.0)
    assert table.backfill_due(100.0) is None


def test_events_of_an_earlier_game_in_a_replay_change_nothing() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    earlier = feed.play("f4 e5 fxe5")  # the table's previous game
    feed.game, feed.board, feed.pushed = "t1-20260501T160000Z", chess.Board(), []
    items = [feed.snapshot(), *feed.play("e4 c5")]
    join(feed, table)
    table.backfill_asked(55.0)
    replay(feed, table, [*earlier, *items], 0)
    assert table.game_id == "t1-20260501T160000Z"
    (game,) = games(table_pgn(table, NOW, Broadcast()))
    assert sans(game) == ["e4", "c5"]
    assert None not in clocks(table)
    assert table.backfill_due(500.0) is None


def test_an_event_of_an_earlier_epoch_is_part_of_a_later_snapshot() -> None:
    """The daemon restarted during the game (a new epoch): a replay brings back the first
    run's events, which must not cut the moves of the snapshot the view holds."""
    first = TableFeed(epoch=1)
    old = first.play("e4 e5")
    second = TableFeed(epoch=2)
    second.seq, second.board, second.pushed = first.seq, first.board, first.pushed
    later = second.play("Nf3 Nc6")
    view = TableView("t1")
    view.apply(later[-1][1])  # the latest snapshot: four moves
    for suffix, envelope in old:
        if suffix not in RETAINED:  # a replay resends the journal: events, not snapshots
            view.apply(envelope)
    assert [move.san for move in view.moves] == ["e4", "e5", "Nf3", "Nc6"]
    assert view.fen == second.board.fen()
