"""``chessbridge watch --room``: one line per table, a hundred tables on one screen."""

from __future__ import annotations

import io
import os
import re
import shutil
from unittest import mock

from bridge.views.model import TableView
from bridge.views.render import room, room_line, visible_len
from bridge.views.shell import _Watcher
from bridge.wire import payloads
from bridge.wire.config import broker_settings
from tests.relay_feed import TableFeed

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def table(number: int, sans: str, **assignment: str | int) -> TableView:
    feed = TableFeed(f"t{number}", f"t{number}-20260501T140000Z")
    feed.assign(white=f"White Player {number}", black=f"Black Player {number}", **assignment)
    view = TableView(feed.table)
    items = [feed.status(), feed.snapshot(), *feed.play(sans)]
    board = payloads.BoardData(state="connected", driver="dgt", uri="dgt:/dev/x", battery=80)
    items.append(("board", feed.envelope("board", board)))
    for _, envelope in items:
        view.apply(envelope)
    return view


def test_a_hundred_tables_fit_a_screen_one_line_each() -> None:
    views = {f"t{n}": table(n, "e4 e5 Nf3", board=n) for n in range(1, 101)}
    text = room(views, 120, title="chessbridge watch")
    lines = text.splitlines()
    assert len(lines) == 102  # the title, the count, a line per table
    assert all(len(line) <= 120 for line in lines)
    assert lines[1] == "100 tables, 0 with open alerts"
    assert lines[2].startswith("B1 t1 ")
    assert lines[-1].startswith("B100 t100")
    assert "White Player 1 – Black Player 1" in lines[2]
    assert "2. Nf3" in lines[2]
    assert "W 1:29:36 B 1:29:48*" in lines[2]
    assert lines[2].endswith("ok 80%")
    assert "\x1b[" not in text


def test_alerts_and_a_link_down_stand_out_in_colour() -> None:
    view = table(1, "e4")
    feed = TableFeed("t1", view.game_id or "")
    feed.seq = 100
    _, alert = feed.alert("touch_move", "4.3.1", "black")
    _, lost = feed.status("lost")
    view.apply(alert)
    view.apply(lost)
    plain = room_line(view, 100)
    assert "! touch_move 4.3.1" in plain
    assert "lost/connected" in plain
    painted = room_line(view, 100, color=True)
    assert ANSI.sub("", painted) == plain
    assert "\x1b[31m\x1b[1m! touch_move 4.3.1\x1b[0m" in painted
    assert "\x1b[31mlost/connected 80%\x1b[0m" in painted


def test_a_narrow_screen_drops_the_players_first_and_never_overflows() -> None:
    view = table(7, "d4 d5", board=7)
    for width in (40, 60, 80):
        line = room_line(view, width)
        assert len(line) <= width
    assert "White Player" not in room_line(view, 50)
    assert "White Player" in room_line(view, 110)


def with_alert(view: TableView, kind: str = "touch_move", article: str = "4.3.1") -> TableView:
    feed = TableFeed(view.table, view.game_id or "")
    feed.seq = 1000
    _, alert = feed.alert(kind, article, "black")
    view.apply(alert)
    return view


def room_of(count: int, alerts: set[int]) -> dict[str, TableView]:
    views = {}
    for n in range(1, count + 1):
        view = table(n, "e4 e5 Nf3", board=n)
        views[view.table] = with_alert(view) if n in alerts else view
    return views


def labels(text: str) -> list[str]:
    """The tables shown, by their ``B{n} t{n}`` labels."""
    return re.findall(r"\bB\d+ t\d+\b", ANSI.sub("", text))


def test_a_hundred_tables_fit_a_200_by_50_terminal_in_columns() -> None:
    views = room_of(100, alerts={60, 99})
    text = room(views, 200, title="chessbridge watch", height=49)
    lines = text.splitlines()
    assert len(lines) <= 49
    assert all(len(line) <= 200 for line in lines)
    assert sorted(labels(text)) == sorted(f"B{n} t{n}" for n in range(1, 101))
    assert "more tables not shown" not in text
    # Three columns, read down then across: board 1 and board 35 share the first row.
    first = lines[2]
    assert first.startswith("B1 t1 ")
    assert first.count(" | ") == 2
    assert "B35 t35" in first
    assert text.count("! touch_move") == 2


def test_a_wide_terminal_takes_two_columns_where_three_are_not_needed() -> None:
    views = room_of(100, alerts=set())
    text = room(views, 240, height=59)
    lines = text.splitlines()
    assert lines[1].count(" | ") == 1
    assert len(labels(text)) == 100
    assert "White Player 1 – Black Player 1" in lines[1]  # room for the players too


def test_what_does_not_fit_is_said_truly_and_no_alert_is_off_screen() -> None:
    views = room_of(100, alerts={70, 95})
    text = room(views, 120, title="chessbridge watch", height=40)
    lines = text.splitlines()
    assert len(lines) <= 40
    assert all(len(line) <= 120 for line in lines)
    shown = labels(text)
    assert "B70 t70" in shown
    assert "B95 t95" in shown
    assert text.count("! touch_move") == 2
    assert len(shown) == len(set(shown))
    hidden = 100 - len(shown)
    assert hidden > 0
    assert lines[-1] == (
        f"... {hidden} more tables not shown (none with open alerts): a taller or wider "
        "terminal shows them, or watch one with --table"
    )
    # Two columns; the tables shown still in board order, read down, then across.
    rows = [line.split(" | ") for line in lines[2:-1]]
    assert {len(row) for row in rows[:-1]} == {2}
    down_then_across = [row[col] for col in range(2) for row in rows if col < len(row)]
    numbers = [int(labels(cell)[0].split()[0][1:]) for cell in down_then_across]
    assert numbers == sorted(numbers)
    assert len(numbers) == len(shown)


def test_more_tables_with_alerts_than_fit_are_counted_in_the_last_line() -> None:
    views = room_of(40, alerts=set(range(1, 31)))
    text = room(views, 70, height=12)
    lines = text.splitlines()
    assert len(lines) <= 12
    shown = labels(text)
    assert all(views[label.split()[1]].alerts for label in shown)  # alerts before the others
    hidden_alerts = 30 - len(shown)
    assert lines[-1].startswith(
        f"... {40 - len(shown)} more tables not shown ({hidden_alerts} with open alerts)"
    )


def test_a_narrow_column_keeps_the_alert_and_drops_the_players_article_and_battery() -> None:
    view = with_alert(table(7, "d4 d5", board=7))
    line = room_line(view, 60)
    assert line == "B7 t7  1... d5  W 1:29:48* B 1:29:48  ! touch_move  ok 80%"
    assert room_line(view, 55) == "B7 t7  1... d5  W 1:29:48* B 1:29:48  ! touch_move  ok"
    assert room_line(view, 50) == "B7 t7  1... d5  W 1:29:48* B 1:29:48  ! touch_m..."
    wide = room_line(view, 140)
    assert "White Player 7" in wide
    assert "! touch_move 4.3.1" in wide
    assert wide.endswith("ok 80%")


def test_columns_in_colour_count_text_only() -> None:
    views = room_of(60, alerts={3, 40})
    text = room(views, 130, height=33, color=True)
    lines = text.splitlines()
    assert len(lines) <= 33
    assert all(visible_len(line) <= 130 for line in lines)
    assert "\x1b[31m\x1b[1m! touch_move" in text
    assert sorted(labels(text)) == sorted(f"B{n} t{n}" for n in range(1, 61))


def screen(views: dict[str, TableView], size: tuple[int, int], *, room_view: bool) -> list[str]:
    """What ``watch`` draws on a terminal of ``size`` (columns, lines), escapes removed."""
    out = io.StringIO()
    watcher = _Watcher(
        broker_settings("mqtt://127.0.0.1:1883"),
        "chessbridge/1/table/+/#",
        table=None,
        screen=True,
        out=out,
        width=None,
        room=room_view,
    )
    watcher.views.update(views)
    with mock.patch.object(shutil, "get_terminal_size", return_value=os.terminal_size(size)):
        watcher.draw()
    text = re.sub(r"\x1b\[(\?25l|2J|H|K|J)", "", out.getvalue())
    return text.splitlines()


def test_watch_draws_a_hundred_tables_on_a_180_by_40_terminal() -> None:
    """As the README and ``watch --help`` say."""
    lines = screen(room_of(100, alerts={42}), (180, 40), room_view=True)
    assert len(lines) <= 39  # the last line of the terminal stays free
    assert all(len(line) <= 180 for line in lines)
    assert sorted(labels("\n".join(lines))) == sorted(f"B{n} t{n}" for n in range(1, 101))
    assert not any("more" in line for line in lines)
    assert any("! touch_move" in line for line in lines)


def test_watch_on_a_small_terminal_says_truly_what_is_not_shown() -> None:
    lines = screen(room_of(100, alerts={97}), (100, 30), room_view=True)
    assert len(lines) <= 29
    shown = labels("\n".join(lines))
    assert "B97 t97" in shown
    assert lines[-1].startswith(f"... {100 - len(shown)} more tables not shown (none with")
    assert "widen the terminal" not in "\n".join(lines)


def test_the_table_screen_cut_short_says_a_taller_terminal_shows_the_rest() -> None:
    views = {f"t{n}": table(n, "e4 e5") for n in range(1, 4)}
    lines = screen(views, (80, 24), room_view=False)
    assert len(lines) == 23
    assert lines[-1] == "... more below: a taller terminal shows it, or watch one with --table"
