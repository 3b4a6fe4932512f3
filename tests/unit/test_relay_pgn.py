"""The relay's game model and its PGN: final moves only, clocks, parts after an illegal move."""

from __future__ import annotations

import io

import chess
import chess.pgn
import msgspec
import pytest

from bridge.relay.game import RelayTable
from bridge.relay.gaps import GAP_GRACE, Gaps
from bridge.relay.parts import split_game
from bridge.relay.pgn import Broadcast, comment, format_clock, table_pgn, tag, termination
from bridge.relay.room import Room
from bridge.views.model import PayloadError
from bridge.wire.payloads import MoveRecord
from tests.relay_feed import Item, TableFeed

OPERA = (
    "e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5 "
    "Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#"
)
NOW = 1000.0
BROADCAST = Broadcast(event="Venue Open", site="Paris FRA")


def fold(table: RelayTable, items: list[Item], at: float = 100.0) -> None:
    for suffix, envelope in items:
        table.apply(envelope, suffix=suffix, received=at)


def games(text: str) -> list[chess.pgn.Game]:
    """Every game of a PGN text, read back by python-chess; fails on any parse error."""
    stream = io.StringIO(text)
    out = []
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        out.append(game)
    return out


def said(node: chess.pgn.GameNode) -> str:
    """A comment as one line (the PGN wraps long comments)."""
    return " ".join(node.comment.split())


def sans(game: chess.pgn.Game) -> list[str]:
    board = game.board()
    out = []
    for move in game.mainline_moves():
        out.append(board.san(move))
        board.push(move)
    return out


def test_a_whole_game_reads_back_with_the_same_moves_clocks_and_headers() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    feed.assign(
        white="Paul Morphy",
        black="Duke Karl of Brunswick",
        white_fide_id=1,
        black_fide_id=2,
        white_rating=2690,
        event="Paris Opera",
        round="3",
        board=7,
    )
    fold(table, [feed.status(), feed.snapshot(), *feed.play(OPERA, spent=30)])
    fold(table, [feed.end("1-0", "checkmate", "5.1.1"), feed.snapshot()])
    text = table_pgn(table, NOW, BROADCAST)
    (game,) = games(text)
    assert sans(game) == OPERA.split()
    headers = dict(game.headers)
    assert headers["Event"] == "Paris Opera"
    assert headers["Site"] == "Paris FRA"
    assert headers["Date"] == "2026.05.01"
    assert headers["Round"] == "3"
    assert headers["Board"] == "7"
    assert headers["White"] == "Paul Morphy"
    assert headers["Black"] == "Duke Karl of Brunswick"
    assert headers["WhiteFideId"] == "1"
    assert headers["BlackFideId"] == "2"
    assert headers["WhiteElo"] == "2690"
    assert "BlackElo" not in headers  # no rating assigned: no header (lichess reads "?" as none)
    assert headers["Result"] == "1-0"
    assert headers["Termination"] == "normal"
    assert headers["Table"] == "t1"
    nodes = list(game.mainline())
    # Every move is followed by the mover's time after its press (30 s thinking + 2 s press).
    assert [node.clock() for node in nodes[:4]] == [5368, 5368, 5336, 5336]
    assert "checkmate (Art. 5.1.1)" in said(nodes[-1])
    assert text.splitlines()[:7] == [
        '[Event "Paris Opera"]',
        '[Site "Paris FRA"]',
        '[Date "2026.05.01"]',
        '[Round "3"]',
        '[White "Paul Morphy"]',
        '[Black "Duke Karl of Brunswick"]',
        '[Result "1-0"]',
    ]
    assert all(len(line) <= 79 for line in text.splitlines())


def test_a_move_waits_for_its_press_or_the_reply() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), feed.move("e4"), feed.snapshot()])
    assert sans(games(table_pgn(table, NOW, BROADCAST))[0]) == []
    fold(table, [feed.press("white"), feed.snapshot()])
    assert sans(games(table_pgn(table, NOW, BROADCAST))[0]) == ["e4"]
    # No press this time: the reply makes the move final.
    fold(table, [feed.move("e5"), feed.move("Nf3"), feed.snapshot()])
    assert sans(games(table_pgn(table, NOW, BROADCAST))[0]) == ["e4", "e5"]


def test_a_move_replaced_before_it_was_final_never_appears() -> None:
    """Rook first, then the king: the table records Rf1, then castling superseding it."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6 Bc4 Bc5")])
    fold(table, [feed.move("Rf1"), feed.snapshot()])
    assert "Rf1" not in table_pgn(table, NOW, BROADCAST)
    fold(table, [feed.move("O-O", supersedes=True), feed.press("white"), feed.snapshot()])
    text = table_pgn(table, NOW, BROADCAST)
    assert sans(games(text)[0])[-1] == "O-O"
    assert "Rf1" not in text


def test_the_broadcast_delay_holds_moves_and_the_result_back() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot()], at=0.0)
    fold(table, feed.play("f3 e5 g4"), at=100.0)
    fold(table, feed.play("Qh4#"), at=200.0)
    fold(table, [feed.end("0-1", "checkmate", "5.1.1"), feed.snapshot()], at=200.0)
    delayed = Broadcast(delay=900.0)
    assert sans(games(table_pgn(table, 999.0, delayed))[0]) == []
    first = games(table_pgn(table, 1000.0, delayed))[0]
    assert sans(first) == ["f3", "e5", "g4"]
    assert first.headers["Result"] == "*"
    last = games(table_pgn(table, 1100.0, delayed))[0]
    assert sans(last) == ["f3", "e5", "g4", "Qh4#"]
    assert last.headers["Result"] == "0-1"


def test_kings_on_the_centre_squares_are_a_result_not_moves() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 c4 e6")])
    fold(table, [feed.end("1/2-1/2", "kings placed in the centre (result convention)")])
    fold(table, [feed.snapshot()])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["d4", "d5", "c4", "e6"]
    assert game.headers["Result"] == "1/2-1/2"


def test_an_illegal_move_gets_its_penalty_as_a_comment() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    penalty = "2 minutes extra to the opponent; the position before it is reinstated"
    fold(
        table,
        [
            feed.alert(
                "illegal_move",
                "7.5.1",
                "white",
                squares=["f1", "c5"],
                fen=feed.board.fen(),
                count=1,
                penalty=penalty,
            ),
            feed.snapshot(),
            *feed.play("Nf3"),
        ],
    )
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    nodes = list(game.mainline())
    assert sans(game) == ["e4", "e5", "Nf3"]
    assert f"Illegal move by White (Art. 7.5.1): {penalty}" in said(nodes[1])


def _illegal_position() -> tuple[TableFeed, str]:
    """1. d4 d5 2. Nf3 Nf6, then 3. Bf1-c4: illegal, the pawn on e2 blocks the bishop."""
    feed = TableFeed()
    feed.board = chess.Board()
    irregular = chess.Board()
    for san in ["d4", "d5", "Nf3", "Nf6"]:
        irregular.push_san(san)
    irregular.remove_piece_at(chess.F1)
    irregular.set_piece_at(chess.C4, chess.Piece(chess.BISHOP, chess.WHITE))  # through e2
    irregular.turn = chess.BLACK
    return feed, irregular.fen()


def test_an_illegal_move_that_stood_continues_as_a_second_game_from_its_position() -> None:
    """The engine's shape: the illegal move's alert and press, then, as Black replies, the
    ``illegal_move_stood`` alert, the reply, its press, and a snapshot starting from the
    position the illegal move left."""
    feed, irregular = _illegal_position()
    table = RelayTable("t1")
    feed.assign(white="A", black="B", event="Open", round="2")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")])
    alert = feed.alert(
        "illegal_move",
        "7.5.1, A.4.2",
        "white",
        squares=["f1", "c4"],
        fen=feed.board.fen(),
        count=1,
        penalty="1 minute extra to the opponent",
    )
    fold(table, [alert, feed.press("white"), feed.snapshot()])
    fold(table, [feed.stood(irregular, "f1c4", "A.4.2, B.4")])
    fold(table, [feed.move("dxc4", completed_by="clock"), feed.press("black")])
    black_after_reply = feed.clock[1]
    before_snapshot = table_pgn(table, NOW, BROADCAST)
    fold(table, [feed.snapshot()])
    text = table_pgn(table, NOW, BROADCAST)
    assert text == before_snapshot  # the snapshot restarting from that position changes nothing
    first, second = games(text)
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    assert first.headers["Result"] == "*"
    assert first.headers["Part"] == "1"
    assert "Illegal move 3. Bf1-c4 by White stood (Art. A.4.2, B.4)" in said(
        list(first.mainline())[-1]
    )
    assert "1 minute extra" not in text  # it stood: no penalty was given
    assert second.headers["FEN"] == irregular
    assert second.headers["SetUp"] == "1"
    assert second.headers["Part"] == "2"
    assert second.headers["Event"] == "Open (part 2)"
    assert (second.headers["White"], second.headers["Round"]) == ("A", "2")
    assert sans(second) == ["dxc4"]
    assert "continues after the illegal move 3. Bf1-c4 by White" in said(second)
    assert [node.clock() for node in second.mainline()] == [black_after_reply]
    # The next moves keep flowing into the second game.
    fold(table, [feed.move("e3"), feed.press("white"), feed.move("Be6"), feed.press("black")])
    fold(table, [feed.snapshot()])
    assert sans(games(table_pgn(table, NOW, BROADCAST))[1]) == ["dxc4", "e3", "Be6"]


def test_without_the_stood_alert_the_reply_waits_for_the_table_s_position() -> None:
    """The ``illegal_move_stood`` alert lost (a replay not come yet): no position is rebuilt
    from the reply and the squares of the ``illegal_move`` alert; the reply waits until the
    table's snapshot, restarting from the position the illegal move left, places it."""
    feed, irregular = _illegal_position()
    table = RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")])
    alert = feed.alert("illegal_move", "7.5.1, A.4.2", "white", squares=["f1", "c4"], count=1)
    fold(table, [alert, feed.snapshot()])
    feed.pushed = []
    fold(table, [feed.move_from(irregular, "d5c4"), feed.press("black")])
    (first,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    waiting = table.waiting()
    assert waiting is not None
    assert waiting.san == "dxc4"
    fold(table, [feed.snapshot(start_fen=irregular)])
    assert table.waiting() is None
    first, second = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    assert second.headers["FEN"] == irregular
    assert sans(second) == ["dxc4"]


def test_a_press_without_a_move_that_stood_is_named_and_carries_no_penalty() -> None:
    """2018 blitz: White presses without moving, Black replies; the position is the same with
    Black to move, which no move of White's reaches."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    penalty = "1 minute extra to the opponent"
    fold(table, [feed.alert("illegal_move", "7.5.3", "white", count=1, penalty=penalty)])
    fold(table, [feed.press("white"), feed.snapshot()])
    irregular = feed.board.fen().replace(" w ", " b ")
    fold(table, [feed.stood(irregular, None, "A.4.2, B.4")])
    fold(table, [feed.move("d6", completed_by="clock"), feed.press("black"), feed.snapshot()])
    fold(table, [*feed.play("d4")])
    text = table_pgn(table, NOW, BROADCAST)
    first, second = games(text)
    assert sans(first) == ["e4", "e5"]
    assert (
        "Illegal move 2. (the clock pressed without a move) by White stood (Art. A.4.2, B.4)"
        in said(list(first.mainline())[-1])
    )
    assert penalty not in text
    assert "set by the arbiter" not in text
    assert second.headers["FEN"] == irregular
    assert sans(second) == ["d6", "d4"]
    assert None not in [node.clock() for node in second.mainline()]


def test_two_moves_in_one_turn_that_stood_are_white_s_second_move() -> None:
    """The first move stands as a legal one; the illegal move is the second, still White's, and
    its comment (alert ply 4, the part starting at ply 3) is not shown: it stood."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    fold(table, [feed.move("Nf3"), feed.snapshot()])
    penalty = "2 minutes extra to the opponent"
    fold(table, [feed.alert("illegal_move", "7.5.1", "white", count=1, penalty=penalty)])
    irregular = feed.board.copy()
    irregular.remove_piece_at(chess.B1)
    irregular.set_piece_at(chess.C3, chess.Piece.from_symbol("N"))
    fold(table, [feed.press("white"), feed.stood(irregular.fen(), "b1c3")])
    fold(table, [feed.move("Nc6", completed_by="clock"), feed.press("black"), feed.snapshot()])
    text = table_pgn(table, NOW, BROADCAST)
    first, second = games(text)
    assert sans(first) == ["e4", "e5", "Nf3"]
    assert "Illegal move 2. Nb1-c3 by White stood (Art. A.4.2)" in said(list(first.mainline())[-1])
    assert penalty not in text
    assert sans(second) == ["Nc6"]


def test_the_snapshot_before_the_reply_was_seen_still_says_the_move_stood() -> None:
    """The reply's event lost: the snapshot restarting from the position the illegal move left
    is a part after it (not a position set by the arbiter), and the reply's clock is kept."""
    feed, irregular = _illegal_position()
    table = RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")])
    fold(table, [feed.press("white"), feed.stood(irregular, "f1c4")])
    lost = feed.move("dxc4", completed_by="clock")
    fold(table, [feed.press("black"), feed.snapshot()])
    black_after_reply = feed.clock[1]
    first, second = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    assert "Illegal move 3. Bf1-c4 by White stood" in said(list(first.mainline())[-1])
    assert "continues after the illegal move 3. Bf1-c4 by White" in said(second)
    assert sans(second) == ["dxc4"]
    fold(table, [lost])  # the replay brings it: its clock
    (_, second) = games(table_pgn(table, NOW, BROADCAST))
    assert [node.clock() for node in second.mainline()] == [black_after_reply]


def test_an_illegal_move_published_as_a_move_starts_the_second_game_after_it() -> None:
    """Not what the engine publishes (an illegal move is never a ``move``), but no reason to
    lose the game if a table ever did."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")])
    illegal = chess.Move.from_uci("f1c4")
    feed.board.push(illegal)  # python-chess pushes it although it is not legal
    feed.pushed.append((illegal.uci(), "Bc4"))
    fold(table, [feed.snapshot()])
    fold(table, [*feed.play("dxc4 e3")])
    first, second = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    assert sans(second) == ["dxc4", "e3"]
    assert chess.Board(second.headers["FEN"]).piece_at(chess.C4) == chess.Piece.from_symbol("B")


def test_the_engine_restarting_from_the_irregular_position_keeps_the_first_part() -> None:
    feed, irregular = _illegal_position()
    table = RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("d4 d5 Nf3 Nf6")])
    fold(table, [feed.alert("illegal_move", "7.5.1", "white", squares=["f1", "c4"])])
    feed.pushed = []
    fold(table, [feed.move_from(irregular, "d5c4"), feed.snapshot(start_fen=irregular)])
    fold(table, [*feed.play("e3")])
    first, second = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["d4", "d5", "Nf3", "Nf6"]
    assert sans(second) == ["dxc4", "e3"]


def test_an_arbiter_set_position_starts_a_new_part() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    feed.board, feed.pushed = chess.Board(fen), []
    fold(table, [feed.snapshot(), feed.response("set_position", {"fen": fen})])
    fold(table, [*feed.play("e4")])
    first, second = games(table_pgn(table, NOW, BROADCAST))
    assert sans(first) == ["e4", "e5"]
    assert second.headers["FEN"] == fen
    assert sans(second) == ["e4"]
    assert "position set by the arbiter" in said(second)


def test_a_takeback_by_the_arbiter_removes_the_moves_and_says_so() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3")])
    feed.board.pop()
    feed.pushed.pop()
    response = feed.response("takeback", {"plies": 1, "removed": ["g1f3"], "fen": ""})
    fold(table, [feed.snapshot(), response])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["e4", "e5"]
    assert "The arbiter took back 1 ply" in said(list(game.mainline())[-1])
    assert [action.command for action in table.actions] == ["takeback"]


def corrected(feed: TableFeed, sans_now: str) -> None:
    """The feed's game becomes ``sans_now`` (what the engine holds after a correction)."""
    board, pushed = chess.Board(), []
    for san in sans_now.split():
        move = board.parse_san(san)
        pushed.append((move.uci(), board.san(move)))
        board.push(move)
    feed.board, feed.pushed = board, pushed


@pytest.mark.parametrize("snapshot_first", [True, False])
def test_an_arbiter_s_correction_replaces_the_move_and_says_so(snapshot_first: bool) -> None:
    """The table publishes the corrected game and its response (in either order); the later
    moves replayed from the corrected position are not an illegal move that stood."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3 Nc6")])
    corrected(feed, "e4 e6 Nf3 Nc6")
    data = {"ply": 2, "uci": "e7e6", "san": "e6", "changed": True, "later_moves": "replayed"}
    items = [feed.snapshot(), feed.response("correct_move", data)]
    fold(table, items if snapshot_first else items[::-1])
    fold(table, feed.play("Bb5"))
    text = table_pgn(table, NOW, BROADCAST)
    (game,) = games(text)  # one game: no part 2
    assert sans(game) == ["e4", "e6", "Nf3", "Nc6", "Bb5"]
    nodes = list(game.mainline())
    assert "The arbiter corrected move 1... e6" in said(nodes[1])
    assert [node.clock() for node in nodes] == [5388, 5388, 5376, 5376, 5364]
    assert "stood" not in text
    assert "Part" not in text
    assert [part.start_fen for part in table.parts_now()] == [chess.STARTING_FEN]


def test_a_correction_that_cuts_the_later_moves_forgets_them() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Bc4 Nc6")])
    corrected(feed, "d4")
    data = {"ply": 1, "uci": "d2d4", "san": "d4", "changed": True, "later_moves": "cut"}
    fold(table, [feed.snapshot(), feed.response("correct_move", data)])
    # Black's reply at ply 2 again: only its press (or White's reply) makes it final.
    fold(table, [feed.move("d5"), feed.snapshot()])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["d4"]
    assert "The arbiter corrected move 1. d4" in said(next(iter(game.mainline())))
    fold(table, [feed.press("black"), feed.snapshot()])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["d4", "d5"]


def test_a_late_copy_of_a_corrected_move_changes_nothing() -> None:
    """A move event published before the correction but received after it (a replay)."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    late = feed.play("Nf3")
    corrected(feed, "e4 e6 Nf3")
    data = {"ply": 2, "uci": "e7e6", "san": "e6", "changed": True, "later_moves": "replayed"}
    fold(table, [feed.snapshot(), feed.response("correct_move", data)])
    fold(table, late)  # Nf3 from the position after 1... e5
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["e4", "e6", "Nf3"]


def test_a_move_played_again_after_a_takeback_waits_for_its_press() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5 Nf3")])
    feed.board.pop()
    feed.pushed.pop()
    data = {"plies": 1, "removed": ["g1f3"], "fen": feed.board.fen()}
    fold(table, [feed.response("takeback", data), feed.snapshot()])
    fold(table, [feed.move("Bc4"), feed.snapshot()])  # released, not yet pressed
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["e4", "e5"]
    assert "The arbiter took back 1 ply" in said(list(game.mainline())[-1])
    fold(table, [feed.press("white"), feed.snapshot()])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["e4", "e5", "Bc4"]


def test_an_ack_from_the_page_names_the_arbiter_in_the_alert_history() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), feed.alert("touch_move", "4.3.1", "white"), feed.snapshot()])
    assert [entry.closed_at for entry in table.alerts] == [None]
    table.expect("page-1", "Anna")
    feed.ack(1)
    fold(table, [feed.snapshot(), feed.response("ack_alert", {"id": 1}, transaction="page-1")])
    (entry,) = table.alerts
    assert (entry.closed_at, entry.closed_by) == (100.0, "Anna")
    assert "touch" not in table_pgn(table, NOW, BROADCAST).lower()  # arbiters' matter only


def test_duplicates_and_retained_copies_change_nothing() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    items = [feed.snapshot(), *feed.play("e4 e5")]
    fold(table, items)
    version = table.version
    for suffix, envelope in items:
        assert not table.apply(envelope, suffix=suffix, received=200.0, retained=True)
    assert table.version == version


def test_a_new_game_at_the_table_starts_over() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    feed.game, feed.board, feed.pushed = "t1-20260501T160000Z", chess.Board(), []
    fold(table, [feed.snapshot(), *feed.play("d4")])
    (game,) = games(table_pgn(table, NOW, BROADCAST))
    assert sans(game) == ["d4"]


def test_split_game_stops_at_a_move_it_cannot_place() -> None:
    records = [
        MoveRecord(ply=1, uci="e2e4", san="e4", color="white"),
        MoveRecord(ply=2, uci="a1a8", san="Ra8", color="black"),  # nothing of Black's on a1
        MoveRecord(ply=3, uci="g1f3", san="Nf3", color="white"),
    ]
    (only,) = split_game(chess.STARTING_FEN, records, {}, {})
    assert [san for _, san in only.moves] == ["e4"]
    assert only.waiting == records[1]  # what follows waits for a position from the table


def test_gaps_ask_for_a_replay_after_the_grace_but_not_for_the_will() -> None:
    gaps = Gaps()
    gaps.saw(10, 0.0)
    gaps.saw(11, 0.0, online=True)
    gaps.saw(13, 0.0)  # 12 was the Will's: never sent while the table stays connected
    gaps.saw(16, 0.0)  # 14 and 15 are missing
    gaps.saw(14, 1.0)  # late, out of order: fine
    assert gaps.due(1.0) is None  # still within the grace
    assert gaps.due(10.0) == 15
    gaps.asked(10.0)
    gaps.saw(20, 10.0)
    assert gaps.due(15.0) is None  # one replay per table every REPLAY_INTERVAL
    assert gaps.due(25.0) == 17


def test_a_retained_copy_newer_than_what_was_seen_is_a_gap_of_a_followed_table() -> None:
    """A relay back after a restart (or a lost connection) while the table played on: the
    retained game is all that comes if no move follows; its seq shows what was missed."""
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4 e5")])
    seen = table.gaps.high
    assert seen is not None
    missed = feed.play("Nf3 Nc6")  # never came live
    suffix, envelope = feed.snapshot()
    assert table.apply(envelope, suffix=suffix, received=200.0, retained=True)
    assert table.gaps.due(200.0 + GAP_GRACE) == missed[0][1].seq == seen + 1


def test_a_retained_copy_of_a_table_never_followed_asks_for_nothing() -> None:
    feed = TableFeed()
    fold(RelayTable("t1"), [feed.snapshot(), *feed.play("e4 e5 Nf3")])  # another relay's view
    table = RelayTable("t1")
    suffix, envelope = feed.snapshot()
    assert table.apply(envelope, suffix=suffix, received=200.0, retained=True)
    assert table.gaps.due(200.0 + GAP_GRACE) is None


def test_room_etags_follow_the_text_and_the_round_filter_orders_boards() -> None:
    room = Room(BROADCAST, round_filter="5")
    for table_id, board in (("t10", 2), ("t2", 1), ("t3", None)):
        feed = TableFeed(table_id, f"{table_id}-20260501T140000Z")
        feed.assign(white="W", black="B", round="5" if board else "6", board=board)
        for suffix, envelope in [feed.snapshot(), *feed.play("e4")]:
            room.apply(table_id, envelope, suffix=suffix, received=1.0)
    first = room.round_document(NOW, 5000.0)
    assert [g.headers["Table"] for g in games(first.text)] == ["t2", "t10"]
    again = room.round_document(NOW + 1, 6000.0)
    assert again == first  # same text, same ETag, same Last-Modified
    assert room.table_document("nope", NOW, 0.0) is None
    assert room.table_document("t3", NOW, 0.0) is not None  # served, though not in the round


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("checkmate", "normal"),
        ("flag fall", "time forfeit"),
        ("2 illegal moves", "rules infraction"),
        ("White resigned", "normal"),
    ],
)
def test_termination(reason: str, expected: str) -> None:
    assert termination(reason) == expected


def test_pgn_text_helpers_escape() -> None:
    assert tag("White", 'a\\b"c\nd') == '[White "a\\\\b\\"c d"]'
    assert comment(["a {b}", "", "c"]) == "{a (b) c}"
    assert comment([]) == ""
    assert format_clock(5400) == "1:30:00"
    assert format_clock(-3) == "0:00:00"


def test_a_snapshot_with_a_start_position_python_chess_refuses_is_a_payload_error() -> None:
    feed, table = TableFeed(), RelayTable("t1")
    fold(table, [feed.snapshot(), *feed.play("e4")])
    _, good = feed.snapshot()
    data = {**good.data, "start_fen": "not a position"}
    bad = msgspec.structs.replace(good, data=data, seq=good.seq + 1)
    with pytest.raises(PayloadError, match="game payload"):
        table.apply(bad, suffix="game", received=100.0)
    assert table_pgn(table, NOW, BROADCAST)  # still served
