"""The watch view's pure half: TableView folding payloads, and the rendered screen."""

from __future__ import annotations

import io
import re

import chess
import msgspec
import pytest

from bridge.views.model import PayloadError, TableView, format_clocks, format_seconds, move_rows
from bridge.views.render import Style, diagram, render, render_table, visible_len
from bridge.views.shell import screen_style, topic_filter
from bridge.wire import payloads
from bridge.wire.config import BrokerConfig, BrokerSettings, broker_settings, parse_broker_url

TS = 1_777_777_777.0
START = chess.STARTING_FEN


class Feed:
    """Envelopes of one table as a daemon would publish them: one seq counter per epoch."""

    def __init__(self, table: str = "t1", game: str = "g1", epoch: int = 1) -> None:
        self.table = table
        self.game_id = game
        self.epoch = epoch
        self.seq = 0
        self.board = chess.Board()

    def envelope(
        self,
        type_: str,
        data: msgspec.Struct,
        *,
        seq: int | None = None,
        extra: dict[str, str | int | None] | None = None,
    ) -> payloads.Envelope:
        if seq is None:
            self.seq += 1
            seq = self.seq
        raw = payloads.encode(self.table, self.game_id, self.epoch, seq, TS, type_, data, extra)
        return payloads.decode_envelope(raw)

    def status(self, state: str) -> payloads.Envelope:
        assert state in ("online", "offline", "lost")
        data = payloads.StatusData(state=state)  # type: ignore[arg-type]
        return self.envelope("status", data, extra={"state": state})

    def move(
        self, san: str, clock: payloads.Clocks | None = None, *, seq: int | None = None
    ) -> payloads.Envelope:
        move = self.board.parse_san(san)
        ply = self.board.ply() + 1
        color = payloads.color_name(self.board.turn)
        self.board.push(move)
        data = payloads.MoveData(
            ply=ply,
            uci=move.uci(),
            san=san,
            fen=self.board.fen(),
            color=color,
            touched=(chess.square_name(move.from_square), chess.square_name(move.to_square)),
            clock=clock,
            completed_by="release",
            supersedes=False,
        )
        return self.envelope("move", data, seq=seq)

    def game(self, **changes: object) -> payloads.Envelope:
        replay = chess.Board()
        sans = [replay.san_and_push(move) for move in self.board.move_stack]
        data = payloads.GameData(
            id=self.game_id,
            fen=self.board.fen(),
            start_fen=START,
            moves=payloads.MoveList(
                uci=tuple(m.uci() for m in self.board.move_stack), san=tuple(sans)
            ),
            clocks=None,
            turn=payloads.color_name(self.board.turn),
            alerts=(),
            result=None,
            reason=None,
            article=None,
            claimable=(),
            rules="fide-2018",
            last_seq=self.seq,
        )
        return self.envelope("game", msgspec.structs.replace(data, **changes))


ALERT = payloads.AlertData(
    kind="touch_move",
    article="4.3(a)",
    ply=5,
    color="white",
    message="White touched the knight on g1 and must move it",
    details={"square": "g1"},
)


def _play(view: TableView, feed: Feed, sans: list[str]) -> None:
    for san in sans:
        assert view.apply(feed.move(san)) is not None


def _rank(lines: list[str], rank: int) -> str:
    return lines[8 - rank]


# --- clocks and move numbers -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0:00"),
        (5, "0:05"),
        (59, "0:59"),
        (299, "4:59"),
        (600, "10:00"),
        (3599, "59:59"),
        (3600, "1:00:00"),
        (5430, "1:30:30"),
        (-3, "-0:03"),
    ],
)
def test_format_seconds(seconds: int, text: str) -> None:
    assert format_seconds(seconds) == text


def test_format_clocks_marks_the_running_side() -> None:
    assert format_clocks(payloads.Clocks(white=299, black=300, running="black")) == (
        "W 4:59 B 5:00*"
    )
    assert format_clocks(payloads.Clocks(white=61, black=5, running="white")) == "W 1:01* B 0:05"
    assert format_clocks(payloads.Clocks(white=61, black=5, running=None)) == "W 1:01 B 0:05"
    assert format_clocks(None) == ""


def test_move_rows_number_the_moves_and_fill_a_missing_white_move() -> None:
    def record(ply: int, san: str) -> payloads.MoveRecord:
        color: payloads.ColorName = "white" if ply % 2 else "black"
        return payloads.MoveRecord(ply=ply, uci="a1a2", san=san, color=color)

    assert move_rows([record(1, "e4"), record(2, "e5"), record(3, "Nf3")]) == [
        (1, "e4", "e5"),
        (2, "Nf3", ""),
    ]
    # A game set up with Black to move at move 12.
    assert move_rows([record(24, "Nf6"), record(25, "Bg5")]) == [
        (12, "...", "Nf6"),
        (13, "Bg5", ""),
    ]


# --- the diagram -----------------------------------------------------------------------------


def test_diagram_has_rank_8_on_top_file_letters_and_the_last_move_marked() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4"])
    lines = diagram(view)
    assert len(lines) == 9
    assert _rank(lines, 8) == "8  r  n  b  q  k  b  n  r "
    assert _rank(lines, 4) == "4  .  .  .  . [P] .  .  . "
    assert _rank(lines, 2) == "2  P  P  P  P [.] P  P  P "
    assert _rank(lines, 1) == "1  R  N  B  Q  K  B  N  R "
    assert lines[8] == "   a  b  c  d  e  f  g  h "


def test_diagram_follows_the_moves_and_marks_both_castling_squares() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"])
    lines = diagram(view)
    assert _rank(lines, 1) == "1  R  N  B  Q [.] R [K] . "
    assert _rank(lines, 6) == "6  .  .  n  .  .  .  .  . "
    assert view.turn == "black"


def test_diagram_without_a_position() -> None:
    assert diagram(TableView("t1")) == ["(no position yet)"]


def test_unicode_diagram_has_outline_white_and_solid_black_figures() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4"])
    lines = diagram(view, Style(unicode=True))
    assert _rank(lines, 8) == "8  ♜  ♞  ♝  ♛  ♚  ♝  ♞  ♜ "
    assert _rank(lines, 4) == "4  .  .  .  . [♙] .  .  . "
    assert _rank(lines, 1) == "1  ♖  ♘  ♗  ♕  ♔  ♗  ♘  ♖ "


def test_coloured_diagram_keeps_the_width_and_marks_squares_by_colour() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4"])
    plain = diagram(view)
    coloured = diagram(view, Style(unicode=True, colour=True))
    assert [visible_len(line) for line in coloured] == [len(line) for line in plain]
    rank4 = _rank(coloured, 4)
    assert "[" not in re.sub(r"\x1b\[[0-9;]*m", "", rank4)  # highlighted, not bracketed
    assert rank4.count("\x1b[48;5;221m") == 1  # e4 highlighted
    assert rank4.count("\x1b[48;5;187m") == 3  # light a4 c4 g4 (e4 is highlighted)
    assert "♟" in _rank(coloured, 4)  # solid figures for both colours, told apart by colour
    two_tables = render({"t1": view, "t2": view}, 160, style=Style(unicode=True, colour=True))
    for line in two_tables.splitlines():
        assert visible_len(line) <= 160


@pytest.mark.parametrize(
    ("encoding", "environ", "expected"),
    [
        ("utf-8", {"TERM": "xterm-256color"}, Style(unicode=True, colour=True)),
        ("utf-8", {"TERM": "xterm-256color", "NO_COLOR": "1"}, Style(unicode=True)),
        ("ascii", {"TERM": "xterm"}, Style(colour=True)),
        ("latin-1", {"TERM": "xterm"}, Style(colour=True)),
        ("utf-8", {"TERM": "linux"}, Style(colour=True)),
        ("utf-8", {"TERM": "dumb"}, Style(unicode=True)),
        ("utf-8", {}, Style(unicode=True)),
    ],
)
def test_the_screen_style_follows_the_terminal(
    encoding: str, environ: dict[str, str], expected: Style
) -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    assert screen_style(out, environ) == expected


# --- folding payloads ------------------------------------------------------------------------


def test_moves_are_listed_in_san_with_numbers_last_eight_full_moves() -> None:
    view, feed = TableView("t1"), Feed()
    sans = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"]
    sans += ["Re1", "b5", "Bb3", "d6", "c3", "O-O", "h3", "Nb8", "d4", "Nbd7", "c4"]
    _play(view, feed, sans)
    lines = render_table(view, 80)
    text = "\n".join(lines)
    assert "  4. Ba4      Nf6" in text
    assert " 10. d4       Nbd7" in text
    assert " 11. c4" in text
    assert "  3. Bb5" not in text  # only the last eight full moves
    assert [m.san for m in view.moves] == sans
    assert view.moves[-1].ply == 21


def test_move_line_and_clocks() -> None:
    view, feed = TableView("t1"), Feed()
    clock = payloads.Clocks(white=300, black=295, running="black")
    applied = view.apply(feed.move("e4", clock))
    assert applied is not None
    assert applied.line == "t1 move 1. e4 (release) W 5:00 B 4:55*"
    applied = view.apply(feed.move("c5"))
    assert applied is not None
    assert applied.line == "t1 move 1... c5 (release)"
    assert view.clocks == clock  # a move without clock times keeps the last ones
    text = render({"t1": view}, 80)
    assert "White     5:00\n" in text
    assert "Black     4:55  running" in text


def test_clock_events_update_the_clocks() -> None:
    view, feed = TableView("t1"), Feed()
    view.apply(feed.move("e4", payloads.Clocks(white=300, black=300, running="black")))
    press = payloads.ClockData(
        kind="press", by="black", white=300, black=290, running="white", completes_ply=2
    )
    applied = view.apply(feed.envelope("clock", press))
    assert applied is not None
    assert applied.line == "t1 clock press by black W 5:00* B 4:50"
    stopped = payloads.ClockData(
        kind="stopped", by=None, white=None, black=None, running=None, completes_ply=None
    )
    applied = view.apply(feed.envelope("clock", stopped))
    assert applied is not None
    assert applied.line == "t1 clock stopped W 5:00 B 4:50"
    assert view.clocks == payloads.Clocks(white=300, black=290, running=None)


def test_a_superseding_move_replaces_the_published_ply() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4", "e5", "Nf3"])
    feed.board.pop()
    correction = feed.move("Nc3")
    data = msgspec.structs.replace(payloads.data_as(correction, payloads.MoveData), supersedes=True)
    applied = view.apply(feed.envelope("move", data))
    assert applied is not None
    assert applied.line == "t1 move 2. Nc3 (release, corrects the previous record)"
    assert [m.san for m in view.moves] == ["e4", "e5", "Nc3"]


def test_alerts_are_listed_until_the_snapshot_closes_them() -> None:
    view, feed = TableView("t1"), Feed()
    applied = view.apply(feed.envelope("alert", ALERT))
    assert applied is not None
    assert applied.line == (
        "t1 alert touch_move 4.3(a): White touched the knight on g1 and must move it"
    )
    assert view.alerts == [ALERT]
    text = render({"t1": view}, 80)
    assert (
        "! touch_move 4.3(a) white ply 5: White touched the knight on g1 and must move it" in text
    )
    # The same alert in the snapshot published after it is not listed twice.
    view.apply(feed.game(alerts=(ALERT,)))
    assert view.alerts == [ALERT]
    # The arbiter acknowledged it: the next snapshot has no open alert.
    applied = view.apply(feed.game(alerts=()))
    assert applied is not None
    assert applied.line == "t1 open alerts: 0"
    assert "! touch_move" not in render({"t1": view}, 80)


def test_result_is_shown() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["f3", "e5", "g4", "Qh4#"])
    result = payloads.ResultData(result="0-1", reason="checkmate", article="5.1(a)")
    applied = view.apply(feed.envelope("result", result))
    assert applied is not None
    assert applied.line == "t1 result 0-1 checkmate 5.1(a)"
    assert view.result == result
    assert "Result 0-1 checkmate 5.1(a)" in render({"t1": view}, 80)


def test_result_from_the_snapshot() -> None:
    view, feed = TableView("t1"), Feed()
    players = {"white": "Anna", "black": "Boris"}
    view.apply(feed.game(result="1/2-1/2", reason="agreement", article="9.1.2", players=players))
    assert render_table(view, 80)[1] == "   Anna - Boris"  # no clocks: the names in the header
    assert view.result == payloads.ResultData(result="1/2-1/2", reason="agreement", article="9.1.2")
    assert "Result 1/2-1/2 agreement 9.1.2" in render({"t1": view}, 80)


def test_last_touch() -> None:
    view, feed = TableView("t1"), Feed()
    touch = payloads.TouchData(
        action="lift", square="g1", piece="N", meaning="own knight touched", ply=1
    )
    applied = view.apply(feed.envelope("touch", touch))
    assert applied is not None
    assert applied.line == "t1 touch lift g1 N: own knight touched"
    assert "last touch: lift g1 N: own knight touched" in render({"t1": view}, 80)


def test_status_and_board_lines_only_on_change() -> None:
    view, feed = TableView("t1"), Feed()
    first = view.apply(feed.status("online"))
    assert first is not None
    assert first.line == "t1 status online"
    again = view.apply(feed.status("online"))
    assert again is not None
    assert again.line is None
    board = payloads.BoardData(
        state="connected", driver="dgt", uri="dgt:/dev/x", model="DGT", serial="42", battery=80
    )
    applied = view.apply(feed.envelope("board", board))
    assert applied is not None
    assert applied.line == "t1 board connected (DGT serial 42) battery 80%"
    battery = msgspec.structs.replace(board, battery=79)
    applied = view.apply(feed.envelope("board", battery))
    assert applied is not None
    assert applied.line is None
    gone = payloads.BoardData(state="disconnected", driver="dgt", uri="dgt:/dev/x", error="EIO")
    applied = view.apply(feed.envelope("board", gone))
    assert applied is not None
    assert applied.line == "t1 board disconnected: EIO"
    lost = view.apply(feed.status("lost"))
    assert lost is not None
    assert lost.line == "t1 status lost"
    header = render_table(view, 80)
    assert header[0].startswith("== t1  lost  board disconnected  game g1")
    assert "   board disconnected: EIO" in header


def test_game_snapshot_header_and_summary() -> None:
    view, feed = TableView("t1"), Feed()
    for san in ["d4", "d5", "c4"]:
        feed.move(san)  # published before the watch came
    clocks = payloads.Clocks(white=5400, black=5399, running="black")
    players = {"white": "Anna", "black": "Boris"}
    applied = view.apply(feed.game(clocks=clocks, players=players, round="3", event="Open"))
    assert applied is not None
    assert applied.line == "t1 game g1 (fide-2018): 3 plies, last 2. c4, W 1:30:00 B 1:29:59*"
    lines = render_table(view, 80)
    assert lines[0] == "== t1  status ?  board ?  game g1  fide-2018"
    assert lines[1] == "   Open, round 3"  # the names stand beside the clocks
    text = "\n".join(lines)
    assert "White  1:30:00  Anna" in text
    assert "Black  1:29:59  running  Boris" in text
    assert "  1. d4       d5" in text
    # The same snapshot contents again (the daemon republishes it): nothing to report.
    applied = view.apply(feed.game(clocks=clocks, players=players))
    assert applied is not None
    assert applied.line is None


# --- duplicates and order --------------------------------------------------------------------


def test_duplicates_are_dropped_by_epoch_and_seq() -> None:
    view, feed = TableView("t1"), Feed()
    move = feed.move("e4")
    assert view.apply(move) is not None
    assert view.seen(move.game, 1, move.seq)
    assert view.apply(move) is None
    assert [m.san for m in view.moves] == ["e4"]
    # The same seq in a later epoch (the daemon restarted) is a new payload.
    feed.epoch = 2
    reply = feed.move("e5", seq=move.seq)
    assert view.apply(reply) is not None
    assert [m.san for m in view.moves] == ["e4", "e5"]


def test_an_older_retained_payload_does_not_replace_a_newer_one() -> None:
    view, feed = TableView("t1"), Feed()
    online = feed.status("online")
    lost = feed.status("lost")
    assert view.apply(lost) is not None
    assert view.apply(online) is None
    assert view.status == "lost"


def test_an_event_already_in_the_snapshot_changes_nothing() -> None:
    view, feed = TableView("t1"), Feed()
    late = feed.move("e4")
    feed.move("e5")
    view.apply(feed.game())
    applied = view.apply(late)
    assert applied is not None
    assert applied.line == "t1 move 1. e4 (release)"
    assert [m.san for m in view.moves] == ["e4", "e5"]


def test_a_new_game_id_on_an_event_clears_the_old_game() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4"])
    view.apply(feed.envelope("alert", ALERT))
    feed.game_id = "g2"
    feed.board = chess.Board()
    view.apply(feed.move("d4"))
    assert view.game_id == "g2"
    assert [m.san for m in view.moves] == ["d4"]
    assert view.alerts == []


def test_bad_data_raises_and_changes_nothing() -> None:
    view, feed = TableView("t1"), Feed()
    _play(view, feed, ["e4"])
    bad = payloads.Envelope(
        v=1, type="move", table="t1", game="g1", epoch=1, seq=99, ts="", data={"ply": "x"}
    )
    with pytest.raises(PayloadError, match="move payload seq 99"):
        view.apply(bad)
    good = feed.game()
    bad_fen = msgspec.structs.replace(good, data={**good.data, "fen": "not a fen"})
    with pytest.raises(PayloadError, match="game payload"):
        view.apply(bad_fen)
    assert [m.san for m in view.moves] == ["e4"]
    assert not view.seen(good.game, 1, 99)


def test_unknown_types_are_accepted_silently() -> None:
    view = TableView("t1")
    future = payloads.Envelope(
        v=1, type="draw_offer", table="t1", game="g1", epoch=1, seq=1, ts="", data={}
    )
    applied = view.apply(future)
    assert applied is not None
    assert applied.line is None


# --- the screen ------------------------------------------------------------------------------


def _busy_view(table: str) -> TableView:
    view, feed = TableView(table), Feed(table=table, game=f"{table}-20260501T140322Z")
    view.apply(feed.status("online"))
    view.apply(
        feed.envelope(
            "board",
            payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/x", battery=77),
        )
    )
    _play(view, feed, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7"])
    view.apply(feed.envelope("alert", ALERT))
    long_alert = msgspec.structs.replace(ALERT, kind="illegal_move", message="x" * 200)
    view.apply(feed.envelope("alert", long_alert))
    view.apply(
        feed.envelope(
            "touch",
            payloads.TouchData(
                action="place", square="e7", piece="b", meaning="black bishop placed", ply=10
            ),
        )
    )
    return view


@pytest.mark.parametrize("width", [30, 40, 60, 80, 120, 200])
def test_every_line_fits_the_width(width: int) -> None:
    views = {name: _busy_view(name) for name in ("t1", "t2", "t3")}
    text = render(views, width, title="chessbridge watch " + "x" * 300, notes=["warning " * 40])
    assert text.endswith("\n")
    for line in text.splitlines():
        assert len(line) <= width, line


def test_tables_stack_in_natural_order_at_80_columns() -> None:
    views = {name: _busy_view(name) for name in ("t10", "t2", "t1")}
    lines = render(views, 80).splitlines()
    headers = [line.split()[1] for line in lines if line.startswith("== ")]
    assert headers == ["t1", "t2", "t10"]


def test_two_tables_side_by_side_when_wide() -> None:
    views = {name: _busy_view(name) for name in ("t1", "t2")}
    lines = render(views, 160).splitlines()
    both = [line for line in lines if line.startswith("== t1")]
    assert len(both) == 1
    assert "| == t2" in both[0]


def test_header_of_a_busy_table() -> None:
    view = _busy_view("t1")
    lines = render_table(view, 80)
    assert lines[0] == "== t1  online  board connected 77%  game t1-20260501T140322Z"
    assert lines[-1] == "last touch: place e7 b: black bishop placed"
    assert lines[-2].startswith("! illegal_move 4.3(a) white ply 5: xxx")
    assert lines[-2].endswith("...")


def test_a_caption_stands_under_the_title_wrapped_to_the_width() -> None:
    caption = ["demo: " + "word " * 30, "join: chessbridge watch"]
    lines = render({}, 40, title="title", caption=caption).splitlines()
    assert lines[0] == "title"
    assert lines[1].startswith("demo: word")
    wrapped = lines[1 : lines.index("join: chessbridge watch")]
    assert " ".join(wrapped).split() == caption[0].split()
    assert all(len(line) <= 40 for line in lines)


def test_empty_screen_and_title_and_notes() -> None:
    text = render({}, 80, title="chessbridge watch  localhost:1883  connecting", notes=["note"])
    assert text == "chessbridge watch  localhost:1883  connecting\nwaiting for tables...\n\nnote\n"


# --- arguments -------------------------------------------------------------------------------


def test_parse_broker_url() -> None:
    assert parse_broker_url("mqtt://localhost") == ("localhost", 1883, False)
    assert parse_broker_url("mqtts://broker.example:8884") == ("broker.example", 8884, True)
    assert parse_broker_url("mqtt://127.0.0.1:1999/") == ("127.0.0.1", 1999, False)


@pytest.mark.parametrize(
    "url",
    ["localhost:1883", "http://h", "mqtt://", "mqtt://u:p@h", "mqtt://h/x", "mqtt://h:99999"],
)
def test_parse_broker_url_rejects(url: str) -> None:
    with pytest.raises(ValueError, match=r"broker URL|username"):
        parse_broker_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "tcp://user:SECRET@host",
        "SECRET@host",
        "mqtt://user:SECRET@host/path",
        "mqtts://user:SECRET@host:99999",
        "http://:SECRET@host",
        "mqtt://user:SECRET@",
        "tcp://user:SEC/RET@host",
        "mqtt://user:SEC/RET@host",
        "mqtts://user:SE?CRET@host",
        "tcp://user:SE#CRET@host:1883",
        "mqtt://us@er:SEC/RET@host",
    ],
)
def test_a_password_in_a_broker_url_is_never_repeated(url: str) -> None:
    """Nor any piece of it: a password holding / ? or # ends what a URL parser takes for the
    authority before the @, and its tail must not be shown as a path."""
    with pytest.raises(ValueError, match=r"broker URL|username") as refused:
        parse_broker_url(url)
    shown = str(refused.value)
    assert "SEC" not in shown
    assert "RET" not in shown


def test_broker_settings_carry_the_config_and_never_show_the_password() -> None:
    broker = BrokerConfig(
        url="mqtt://ignored",
        username="t042",
        password="SECRET",
        ca_file="ca.pem",
        mqtt5=False,
        connect_jitter=3.0,
    )
    settings = broker_settings("mqtts://broker.example", broker)
    assert (settings.host, settings.port, settings.tls) == ("broker.example", 8883, True)
    assert (settings.username, settings.password, settings.ca_file) == ("t042", "SECRET", "ca.pem")
    assert (settings.mqtt5, settings.connect_jitter, settings.client_id) == (False, 3.0, None)
    assert settings.address == "broker.example:8883"
    assert "SECRET" not in repr(settings)
    assert broker_settings("mqtt://h") == BrokerSettings(host="h", port=1883)
    with pytest.raises(ValueError, match="not mqtts://"):
        broker_settings("mqtt://broker.example", broker)


def test_topic_filter() -> None:
    assert topic_filter(None) == "chessbridge/1/table/+/#"
    assert topic_filter("t7") == "chessbridge/1/table/t7/#"
    with pytest.raises(ValueError, match="invalid table id"):
        topic_filter("a/b")


def test_a_status_error_is_shown_and_cleared() -> None:
    view, feed = TableView("t1"), Feed()
    view.apply(feed.status("online"))
    full = payloads.StatusData(state="online", error="the outbox cannot be written")
    applied = view.apply(feed.envelope("status", full))
    assert applied is not None
    assert applied.line == "t1 status online: the outbox cannot be written"
    assert view.status_error == "the outbox cannot be written"
    cleared = view.apply(feed.status("online"))
    assert cleared is not None
    assert cleared.line == "t1 status online"
    assert view.status is not None
    assert view.status_error is None
