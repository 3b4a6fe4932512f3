"""A table that starts again from an empty state directory: a new game id, ``epoch`` and
``seq`` from 1 again. The relay that followed it before shows the new game at once; duplicates
are dropped per game, not per table."""

from __future__ import annotations

from bridge.relay.game import RelayTable
from bridge.relay.pgn import Broadcast, table_pgn
from bridge.relay.room import Room
from bridge.views.model import TableView
from tests.pgn_check import read_games, sans
from tests.relay_feed import Item, TableFeed

NOW = 1000.0
BROADCAST = Broadcast(event="Venue Open", site="Paris FRA")
OLD = "t1-20260501T140000Z"
NEW = "t1-20260501T160000Z"


def fold(table: RelayTable, items: list[Item], at: float = 100.0) -> None:
    for suffix, envelope in items:
        table.apply(envelope, suffix=suffix, received=at)


def shown(table: RelayTable) -> list[list[str]]:
    return [sans(game) for game in read_games(table_pgn(table, NOW, BROADCAST))]


def old_game_of_many_seqs(table: RelayTable) -> TableFeed:
    feed = TableFeed(game=OLD, epoch=1)
    fold(table, [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6 Bb5 a6")])
    assert feed.seq == 20
    return feed


def test_a_new_game_id_from_seq_1_replaces_the_old_game_at_once() -> None:
    table = RelayTable("t1")
    old = old_game_of_many_seqs(table)
    fresh = TableFeed(game=NEW, epoch=1)  # an empty state directory: epoch 1, seq from 1
    fold(table, [fresh.status(), fresh.snapshot()])
    assert table.game_id == NEW
    assert shown(table) == [[]]
    fold(table, fresh.play("d4 d5 c4"))
    assert shown(table) == [["d4", "d5", "c4"]]
    assert table.view.status == "online"
    # The same (epoch, seq) as payloads of the old game: each is its game's own.
    assert fresh.epoch == old.epoch
    assert fresh.seq < old.seq
    # The new series of seqs is no gap in the old one, nor the old one a gap in the new.
    assert table.gaps.missing == []


def test_duplicates_are_dropped_per_game() -> None:
    table = RelayTable("t1")
    old_game_of_many_seqs(table)
    fresh = TableFeed(game=NEW, epoch=1)
    items = [fresh.snapshot(), *fresh.play("d4 d5")]
    fold(table, items)
    version = table.version
    fold(table, items)  # a QoS 1 redelivery of the new game's payloads
    assert table.version == version
    assert shown(table) == [["d4", "d5"]]


def test_a_late_copy_of_the_replaced_game_never_brings_it_back() -> None:
    table = RelayTable("t1")
    old = TableFeed(game=OLD, epoch=1)
    late = [old.snapshot(), *old.play("e4 e5")]
    fold(table, late)
    fresh = TableFeed(game=NEW, epoch=1)
    fold(table, [fresh.snapshot(), *fresh.play("d4")])
    fold(table, late[-3:])  # the old game's last move, press and snapshot, resent
    assert table.game_id == NEW
    assert shown(table) == [["d4"]]


def test_the_room_serves_the_new_game_in_the_round() -> None:
    room = Room(BROADCAST)
    old = TableFeed(game=OLD, epoch=1)
    for suffix, envelope in [old.snapshot(), *old.play("e4 e5 Nf3")]:
        room.apply("t1", envelope, suffix=suffix, received=100.0)
    fresh = TableFeed(game=NEW, epoch=1)
    for suffix, envelope in [fresh.snapshot(), *fresh.play("c4")]:
        room.apply("t1", envelope, suffix=suffix, received=101.0)
    (game,) = read_games(room.round_document(NOW, NOW).text)
    assert sans(game) == ["c4"]


def test_the_watch_view_takes_the_new_game_too() -> None:
    view = TableView("t1")
    old = TableFeed(game=OLD, epoch=1)
    for _, envelope in [old.snapshot(), *old.play("e4 e5 Nf3")]:
        view.apply(envelope)
    fresh = TableFeed(game=NEW, epoch=1)
    for _, envelope in [fresh.snapshot(), *fresh.play("g3")]:
        assert view.apply(envelope) is not None
    assert view.game_id == NEW
    assert [m.san for m in view.moves] == ["g3"]
