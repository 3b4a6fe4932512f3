"""Every position the relay shows comes from the table's payloads; what it lacks, it asks for.

The relay judges nothing: a part of the PGN starts from a position the table published (a
snapshot's ``start_fen`` or ``fen``, an ``illegal_move_stood`` alert's ``fen``), never from one
rebuilt from the moves around it. A move it cannot place (the position it was played from is in
no payload it has) waits, and the table is asked for a ``replay``: after a grace, a few times,
some seconds apart.
"""

from __future__ import annotations

import chess

from bridge.relay.game import SET_LEAD, RelayTable
from bridge.relay.gaps import ASK_GRACE, ASK_INTERVAL, ASK_TIMES
from bridge.relay.page import detail
from bridge.relay.pgn import Broadcast, table_pgn
from tests.relay_feed import Item, TableFeed
from tests.unit.test_relay_pgn import games, said, sans

NOW = 1000.0
BROADCAST = Broadcast(event="Open")
AT = 100.0


def fold(table: RelayTable, items: list[Item], at: float = AT) -> None:
    for suffix, envelope in items:
        table.apply(envelope, suffix=suffix, received=at)


def pgn(table: RelayTable) -> str:
    return table_pgn(table, NOW, BROADCAST)


def irregular_after_bishop() -> str:
    """1. d4 d5 2. Nf3 Nf6, then 3. Bf1-c4 through the pawn on e2: Black to move."""
    board = chess.Board()
    for san in ("d4", "d5", "Nf3", "Nf6"):
        board.push_san(san)
    board.remove_piece_at(chess.F1)
    board.set_piece_at(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))
    board.turn = chess.BLACK
    return board.fen()


def stood_stream(*, acked: bool = False) -> tuple[TableFeed, list[Item], dict[str, Item]]:
    """An illegal move that stood, as the engine publishes it: the illegal move's alert and
    press, then (Black replying) ``illegal_move_stood``, the reply, its press, the snapshot
    restarting from the position the illegal move left, and one more move.

    ``acked``: an arbiter closed the ``illegal_move_stood`` alert before the snapshot, which
    then does not list it among the open alerts. Returns the items and some of them by name.
    """
    feed = TableFeed()
    feed.assign(white="A", black="B", event="Open", round="1")
    items = [feed.status(), feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")]
    penalty = "1 minute extra to the opponent"
    illegal = feed.alert("illegal_move", "7.5.1, A.4.2", "white", count=1, penalty=penalty)
    items += [illegal, feed.press("white"), feed.snapshot()]
    stood = feed.stood(irregular_after_bishop(), "f1c4", "A.4.2, B.4")
    reply = feed.move("dxc4", completed_by="clock")
    items += [stood, reply, feed.press("black")]
    if acked:
        feed.ack(stood[1].data["id"])
    snapshot = feed.snapshot()
    items += [snapshot, *feed.play("e3")]
    return feed, items, {"stood": stood, "reply": reply, "snapshot": snapshot}


def in_order(items: list[Item]) -> RelayTable:
    table = RelayTable("t1")
    fold(table, items)
    return table


# --- a relay that joins a game under way ---------------------------------------------------


def test_a_relay_that_joins_mid_game_takes_the_positions_from_the_snapshot() -> None:
    feed = TableFeed()
    feed.play("e4 c5 Nf3 d6 d4")  # nobody relays these
    table = RelayTable("t1")
    suffix, envelope = feed.snapshot()
    assert table.apply(envelope, suffix=suffix, received=AT, retained=True)
    (game,) = games(pgn(table))
    assert sans(game) == ["e4", "c5", "Nf3", "d6", "d4"]
    assert game.end().board().fen() == feed.board.fen()
    assert table.view.position is not None
    assert table.view.position.fen() == feed.board.fen()  # the page's diagram: the snapshot's
    assert table.waiting() is None
    assert table.needs_due(AT + 3600.0) is None  # nothing lacks: no position is asked for


def test_a_relay_that_joins_after_an_illegal_move_stood_starts_from_the_snapshot_s_start() -> None:
    """The snapshot restarts from the position the illegal move left: that is the game's start
    for this relay (the part before it is known only to a relay that saw it)."""
    _, items, named = stood_stream()
    snapshot = named["snapshot"]
    table = RelayTable("t1")
    table.apply(snapshot[1], suffix="game", received=AT, retained=True)
    (game,) = games(pgn(table))
    assert game.headers["FEN"] == irregular_after_bishop()
    assert game.headers["SetUp"] == "1"
    assert sans(game) == ["dxc4"]
    assert table.needs_due(AT + 3600.0) is None
    fold(table, items[items.index(snapshot) + 1 :])  # the game goes on live
    (game,) = games(pgn(table))
    assert sans(game) == ["dxc4", "e3"]


# --- what the relay lacks, it asks for ------------------------------------------------------


def test_a_ply_that_never_came_makes_the_relay_ask_the_table_a_few_times() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.status(), feed.snapshot(), *feed.play("e4 e5 Nf3")])
    after_nf3 = table.view.moves[-1]
    lost = feed.play("Nc6")  # its move, press and snapshot never come
    moved = feed.move("Bb5")
    fold(table, [moved])
    assert sans(games(pgn(table))[0]) == ["e4", "e5", "Nf3"]  # up to the gap, nothing guessed
    waiting = table.waiting()
    assert waiting is not None
    assert (waiting.ply, waiting.san) == (5, "Bb5")
    assert after_nf3.ply == 3
    assert table.needs_due(AT) is None  # the snapshot usually follows: a grace first
    first_seq = lost[0][1].seq
    now = AT + ASK_GRACE
    asked = []
    while (from_seq := table.needs_due(now)) is not None:
        asked.append((now, from_seq))
        table.needs_asked(now)
        assert table.needs_due(now + ASK_INTERVAL - 1.0) is None  # some seconds apart
        now += ASK_INTERVAL
    assert len(asked) == ASK_TIMES  # then no more
    assert all(from_seq <= first_seq for _, from_seq in asked)
    assert table.needs_due(now + 3600.0) is None
    fold(table, lost[:2])  # the replay brings the missing ply
    assert table.waiting() is None
    assert sans(games(pgn(table))[0]) == ["e4", "e5", "Nf3", "Nc6"]  # Bb5 waits for its press


def test_the_next_snapshot_gives_the_position_and_nothing_is_asked() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    feed.play("Nf3")  # lost
    fold(table, [feed.move("Nc6")])
    assert table.waiting() is not None
    fold(table, [feed.press("black"), feed.snapshot()])
    assert table.waiting() is None
    assert table.needs_due(AT + 3600.0) is None
    assert sans(games(pgn(table))[0]) == ["e4", "e5", "Nf3", "Nc6"]


def test_a_lost_stood_alert_is_asked_for_not_guessed_and_its_replay_gives_the_same_pgn() -> None:
    _, items, named = stood_stream()
    expected = pgn(in_order(items))
    stood, snapshot = named["stood"], named["snapshot"]
    table = RelayTable("t1")
    fold(table, [item for item in items[: items.index(snapshot)] if item is not stood])
    (first,) = games(pgn(table))  # the reply waits: no position is rebuilt from it
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    waiting = table.waiting()
    assert waiting is not None
    assert waiting.san == "dxc4"
    from_seq = table.needs_due(AT + ASK_GRACE)
    assert from_seq is not None
    assert from_seq <= stood[1].seq  # the replay resends the alert
    table.needs_asked(AT + ASK_GRACE)
    fold(table, [stood])  # the replay: the alert (the rest are duplicates)
    assert table.waiting() is None
    fold(table, items[items.index(snapshot) :])
    assert pgn(table) == expected
    first, second = games(expected)
    assert second.headers["FEN"] == irregular_after_bishop()
    assert "Illegal move 3. Bf1-c4 by White stood (Art. A.4.2, B.4)" in said(first.end())


def test_a_restart_no_alert_explained_is_the_arbiter_s_until_the_replayed_alert_comes() -> None:
    """The alert lost and already closed when the snapshot came (so not among its open ones):
    the snapshot's restart is shown as a position set by the arbiter; the alert, replayed,
    makes it the illegal move's part, with the reply's clock, as if it had come in order."""
    _, items, named = stood_stream(acked=True)
    expected = pgn(in_order(items))
    stood = named["stood"]
    table = RelayTable("t1")
    fold(table, [item for item in items if item is not stood])
    first, second = games(pgn(table))
    assert second.headers["FEN"] == irregular_after_bishop()
    assert SET_LEAD in said(second)
    assert SET_LEAD in said(first.end())
    fold(table, [stood], at=AT + 5.0)
    assert pgn(table) == expected
    first, second = games(expected)
    assert "Illegal move 3. Bf1-c4 by White stood" in said(first.end())
    assert sans(second) == ["dxc4", "e3"]
    assert None not in [node.clock() for node in second.mainline()]
    assert "1 minute extra" not in expected  # it stood: no penalty was given


# --- irregular positions are the payloads' -------------------------------------------------


def test_the_part_after_an_illegal_move_that_stood_starts_from_the_alert_s_fen() -> None:
    """Counters and all: the FEN the table published, not one rebuilt from the moves."""
    feed = TableFeed()
    table = RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6")])
    irregular = feed.board.copy()
    irregular.remove_piece_at(chess.F1)
    irregular.set_piece_at(chess.B5, chess.Piece(chess.BISHOP, chess.WHITE))  # through e2
    irregular.turn = chess.BLACK
    irregular.halfmove_clock, irregular.fullmove_number = 7, 3
    fold(table, [feed.press("white"), feed.stood(irregular.fen(), "f1b5")])
    fold(table, [feed.move("a6", completed_by="clock"), feed.press("black")])
    _, second = games(pgn(table))
    assert second.headers["FEN"] == irregular.fen()
    assert sans(second) == ["a6"]


def test_a_position_set_by_the_arbiter_is_the_snapshot_s_whichever_comes_first() -> None:
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 40"
    for response_first in (False, True):
        feed, table = TableFeed(), RelayTable("t1")
        fold(table, [feed.snapshot(), *feed.play("e4 e5")])
        feed.board, feed.pushed = chess.Board(fen), []
        items = [feed.snapshot(), feed.response("set_position", {"fen": fen})]
        fold(table, items[::-1] if response_first else items)
        fold(table, feed.play("e4"))
        first, second = games(pgn(table))
        assert sans(first) == ["e4", "e5"]
        assert second.headers["FEN"] == fen
        assert sans(second) == ["e4"]
        assert SET_LEAD in said(second)
        assert table.needs_due(AT + 3600.0) is None


def test_a_corrected_game_takes_its_positions_from_the_corrected_snapshot() -> None:
    """After a correction the later moves are replayed from another position: the positions
    the move events gave for them are stale, the snapshot's are the game's."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6")])
    board, pushed = chess.Board(), []
    for san in ["e4", "e6", "Nf3", "Nc6"]:
        move = board.parse_san(san)
        pushed.append((move.uci(), board.san(move)))
        board.push(move)
    feed.board, feed.pushed = board, pushed
    data = {"ply": 2, "uci": "e7e6", "san": "e6", "changed": True, "later_moves": "replayed"}
    fold(table, [feed.snapshot(), feed.response("correct_move", data)])
    assert table.waiting() is None
    (game,) = games(pgn(table))
    assert sans(game) == ["e4", "e6", "Nf3", "Nc6"]
    assert game.end().board().fen() == board.fen() == table.view.fen
    assert table.needs_due(AT + 3600.0) is None


def test_a_reconstructed_move_is_placed_from_the_payloads_like_any_other() -> None:
    """A move the table reconstructed (made while its board link was down) comes with the
    position after it, like a move seen live."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 Nf6")])
    fold(table, [feed.move("c4", completed_by="reconstructed"), feed.snapshot()])
    assert table.waiting() is None
    (game,) = games(pgn(table))
    assert sans(game) == ["d4", "Nf6", "c4"]
    assert game.end().board().fen() == table.view.fen


def test_a_move_that_waits_is_shown_on_the_page_after_the_moves_placed() -> None:
    """The arbiters' page shows what is placed; the waiting move is in the view's last move."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    feed.play("Nf3")
    fold(table, [feed.move("Nc6")])
    shown = detail(table)
    assert [move["label"] for move in shown["moves"]] == ["1. e4", "1... e5"]
    assert shown["last"] == "2... Nc6"
