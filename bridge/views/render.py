"""The text screen of ``chessbridge watch``: tables drawn from their :class:`TableView` (pure).

A diagram with the last move marked, the clocks and the last full moves beside it, the result,
the open alerts and the last touch; two tables side by side when the screen is wide enough.
A :class:`Style` says whether the terminal shows Unicode chess pieces and ANSI colours (the
shell finds out); plain ASCII is the default.
"""

from __future__ import annotations

import contextlib
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import chess

from bridge.views.model import (
    TableView,
    alert_line,
    format_seconds,
    move_label,
    move_rows,
    natural_key,
    result_line,
    touch_line,
)

MOVE_ROWS: Final = 8
"""Full moves shown in the move list of the screen."""

_DIAGRAM_WIDTH: Final = 2 + 8 * 3
_PANEL_GAP: Final = 4
_PANEL_MIN: Final = 24
_COLUMN_GAP: Final = " | "
_TWO_COLUMNS_FROM: Final = 2 * 72 + len(_COLUMN_GAP)

_ANSI: Final = re.compile(r"\x1b\[[0-9;]*m")
_RESET: Final = "\x1b[0m"
_LIGHT: Final = "\x1b[48;5;187m"  # square backgrounds (256-colour palette)
_DARK: Final = "\x1b[48;5;107m"
_MARKED: Final = "\x1b[48;5;221m"  # the last move's two squares
_WHITE_PIECE: Final = "\x1b[1;38;5;231m"
_BLACK_PIECE: Final = "\x1b[38;5;16m"
_OUTLINE: Final = dict(zip("KQRBNP", "♔♕♖♗♘♙", strict=True))
_SOLID: Final = dict(zip("KQRBNP", "♚♛♜♝♞♟", strict=True))


@dataclass(frozen=True, slots=True)
class Style:
    """What the terminal can show."""

    unicode: bool = False
    """Chess pieces as Unicode figures (♔ ♚) rather than FEN letters."""
    colour: bool = False
    """Squares and pieces in ANSI colours; the last move's squares highlighted."""


PLAIN: Final = Style()
"""FEN letters, no colour: any terminal, a pipe, a log."""


def visible_len(text: str) -> int:
    """Columns ``text`` takes on a terminal (ANSI colour codes take none)."""
    return len(_ANSI.sub("", text))


def pad(text: str, width: int) -> str:
    """``text`` followed by spaces up to ``width`` visible columns."""
    return text + " " * max(0, width - visible_len(text))


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` visible columns, ``...`` marking the cut (colours dropped)."""
    if visible_len(text) <= width:
        return text
    text = _ANSI.sub("", text)
    if width <= 3:
        return text[:width]
    return text[: width - 3] + "..."


def diagram(view: TableView, style: Style = PLAIN) -> list[str]:
    """The position as 8 ranks (8 at the top) and a line of file letters.

    Plain: pieces are FEN letters (white upper case), ``.`` an empty square, the two squares of
    the last move in brackets, e.g. ``[N]``. With Unicode, figures (outline for White, solid for
    Black; solid for both when colour tells them apart). With colour, light and dark squares and
    the last move's squares highlighted instead of bracketed.
    """
    position = view.position
    if position is None:
        return ["(no position yet)"]
    marked: set[chess.Square] = set()
    last = view.last_move
    if last is not None:
        with contextlib.suppress(ValueError):
            move = chess.Move.from_uci(last.uci)
            if move:
                marked = {move.from_square, move.to_square}
    lines = []
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            square = chess.square(file, rank)
            cells.append(_cell(position.piece_at(square), square, square in marked, style))
        lines.append(f"{rank + 1} " + "".join(cells))
    lines.append("  " + "".join(f" {name} " for name in chess.FILE_NAMES))
    return lines


def _cell(piece: chess.Piece | None, square: chess.Square, marked: bool, style: Style) -> str:
    if piece is None:
        symbol = " " if style.colour else "."
    elif not style.unicode:
        symbol = piece.symbol()
    else:
        figures = _SOLID if style.colour or piece.color == chess.BLACK else _OUTLINE
        symbol = figures[piece.symbol().upper()]
    if not style.colour:
        return f"[{symbol}]" if marked else f" {symbol} "
    light = (chess.square_file(square) + chess.square_rank(square)) % 2 == 1
    ground = _MARKED if marked else _LIGHT if light else _DARK
    ink = _WHITE_PIECE if piece is not None and piece.color == chess.WHITE else _BLACK_PIECE
    return f"{ground}{ink} {symbol} {_RESET}"


def _panel(view: TableView) -> list[str]:
    """Both clocks (the running one marked) or the side to move, then the last full moves."""
    lines: list[str] = []
    names = view.players or {}
    if view.clocks is None:
        to_move = "" if view.turn is None else f", {view.turn.capitalize()} to move"
        lines += [f"no clock{to_move}", ""]
    else:
        for color, seconds in (("white", view.clocks.white), ("black", view.clocks.black)):
            running = "  running" if view.clocks.running == color else ""
            name = f"  {names[color]}" if color in names else ""
            lines.append(f"{color.capitalize():<6}{format_seconds(seconds):>8}{running}{name}")
    rows = move_rows(view.moves)[-MOVE_ROWS:]
    lines.extend(f"{number:>3}. {white:<9}{black}" for number, white, black in rows)
    return lines


def _header(view: TableView) -> list[str]:
    """The table line (status, board link, game, rules), then players and board error if any."""
    board = view.board
    link = "board ?"
    if board is not None:
        link = f"board {board.state}"
        if board.battery is not None:
            link += f" {board.battery}%"
    parts = [view.table, view.status or "status ?", link, f"game {view.game_id or '-'}"]
    if view.rules:
        parts.append(view.rules)
    lines = ["== " + "  ".join(parts)]
    names = view.players or {}
    details = []
    if names and view.clocks is None:  # with clocks, the names stand beside them
        details.append(f"{names.get('white', '?')} - {names.get('black', '?')}")
    if view.event:
        details.append(view.event)
    if view.round:
        details.append(f"round {view.round}")
    if view.board_number:
        details.append(f"board {view.board_number}")
    if details:
        lines.append("   " + ", ".join(details))
    if board is not None and board.error and board.state != "connected":
        lines.append(f"   board {board.state}: {board.error}")
    return lines


def render_table(view: TableView, width: int, style: Style = PLAIN) -> list[str]:
    """The lines of one table, none longer than ``width``.

    The header, the diagram with the clocks and moves beside it (below it when narrow), the
    result, the open alerts (``!``) and the last touch.
    """
    lines = _header(view)
    board = diagram(view, style)
    panel = _panel(view)
    if width >= _DIAGRAM_WIDTH + _PANEL_GAP + _PANEL_MIN:
        for index in range(max(len(board), len(panel))):
            left = board[index] if index < len(board) else ""
            right = panel[index] if index < len(panel) else ""
            lines.append((pad(left, _DIAGRAM_WIDTH + _PANEL_GAP) + right).rstrip())
    else:
        lines.extend(board)
        lines.extend(line for line in panel if line)
    if view.result is not None:
        lines.append(f"Result {result_line(view.result)}")
    lines.extend(f"! {alert_line(alert)}" for alert in view.alerts)
    if view.last_touch is not None:
        lines.append(f"last touch: {touch_line(view.last_touch)}")
    return [fit(line, width) for line in lines]


def render(
    views: Mapping[str, TableView],
    width: int,
    *,
    title: str | None = None,
    caption: Sequence[str] = (),
    notes: Sequence[str] = (),
    style: Style = PLAIN,
) -> str:
    """The whole screen: each table in turn (two side by side when ``width`` allows).

    ``title`` is a first line (e.g. the broker and connection state), ``caption`` lines under it
    (e.g. the demo's narration, wrapped), ``notes`` last lines (e.g. warnings). Every line fits in
    ``width`` columns; the text ends with a newline.
    """
    width = max(width, 20)
    lines: list[str] = []
    if title is not None:
        lines.append(fit(title, width))
    for line in caption:  # wrapped, not cut: it is meant to be read whole
        lines.extend(fit(part, width) for part in textwrap.wrap(line, width) or [""])
    tables = [views[key] for key in sorted(views, key=natural_key)]
    if not tables:
        lines.append("waiting for tables...")
    elif width >= _TWO_COLUMNS_FROM and len(tables) > 1:
        column = (width - len(_COLUMN_GAP)) // 2
        for index in range(0, len(tables), 2):
            left = render_table(tables[index], column, style)
            right = (
                render_table(tables[index + 1], column, style) if index + 1 < len(tables) else []
            )
            lines.append("")
            for row in range(max(len(left), len(right))):
                cell = left[row] if row < len(left) else ""
                other = right[row] if row < len(right) else ""
                lines.append((pad(cell, column) + _COLUMN_GAP + other).rstrip())
    else:
        for view in tables:
            lines.append("")
            lines.extend(render_table(view, width, style))
    if notes:
        lines.append("")
        lines.extend(fit(note, width) for note in notes)
    return "\n".join(lines) + "\n"


# --- the room: one line per table ------------------------------------------------------------

RED: Final = "\x1b[31m"
GREEN: Final = "\x1b[32m"
BOLD: Final = "\x1b[1m"
RESET: Final = "\x1b[0m"

ROOM_COLUMN_MIN: Final = 56
"""Fewest characters a table's line gets when the room is laid out in several columns: the
board and table, the last move, the clocks and the start of an alert (the players, the alert's
article and the battery go first, see :func:`room_line`)."""

ROOM_GAP: Final = " | "
"""Between two columns of the room."""

_PLAYERS_MIN: Final = 8


@dataclass(frozen=True, slots=True)
class RoomWidths:
    """How wide the aligned fields of the room's lines are."""

    label: int = 12
    players: int = 0
    """``0``: no players (not room enough for them)."""
    move: int = 12
    clocks: int = 21


def room_widths(views: Sequence[TableView], width: int) -> RoomWidths:
    """Widths that align the lines of ``views`` in ``width`` columns with no space wasted: the
    longest label (at most 16), move and clocks; the players in what is left once the longest
    alerts and link fit, if that is at least 8 columns."""
    if not views:
        return RoomWidths()
    fields = [_room_fields(view) for view in views]
    label = min(16, max(len(f.label) for f in fields))
    move = max(len(f.move) for f in fields)
    clocks = max(len(f.clocks) for f in fields)
    tail = max(
        len(f.alerts[0]) + 2 + len(f.link[0]) if f.alerts[0] else len(f.link[0]) for f in fields
    )
    room_left = width - (label + move + clocks + tail + 2 * 3) - 2
    longest = max(len(f.players) for f in fields)
    players = min(room_left, longest) if room_left >= _PLAYERS_MIN and longest else 0
    return RoomWidths(label=label, players=players, move=move, clocks=clocks)


@dataclass(frozen=True, slots=True)
class _RoomFields:
    label: str
    players: str
    move: str
    finished: bool
    clocks: str
    alerts: tuple[str, str]
    """In full (kind and article, ``+N`` more), and without the article."""
    link: tuple[str, str]
    """With the battery, and without it."""
    down: bool


def _room_fields(view: TableView) -> _RoomFields:
    board = view.board
    label = f"B{view.board_number} {view.table}" if view.board_number else view.table
    names = view.players or {}
    players = f"{names.get('white', '?')} – {names.get('black', '?')}" if names else ""
    last = view.last_move
    if view.result is not None:
        move = view.result.result
    elif last is not None:
        move = move_label(last.ply, last.san, last.color)
    else:
        move = "-"
    clocks = ""
    if view.clocks is not None:
        white, black = view.clocks.white, view.clocks.black
        clocks = (
            f"W {format_seconds(white)}{'*' if view.clocks.running == 'white' else ''} "
            f"B {format_seconds(black)}{'*' if view.clocks.running == 'black' else ''}"
        )
    alerts = ("", "")
    if view.alerts:
        first = view.alerts[0]
        more = f" +{len(view.alerts) - 1}" if len(view.alerts) > 1 else ""
        alerts = (f"! {first.kind} {first.article}".rstrip() + more, f"! {first.kind}{more}")
    state = board.state if board is not None else "?"
    down = view.status != "online" or state != "connected"
    link = f"{view.status or '?'}/{state}" if down else "ok"
    battery = link
    if board is not None and board.battery is not None:
        battery += f" {board.battery}%"
    return _RoomFields(
        label, players, move, view.result is not None, clocks, alerts, (battery, link), down
    )


def room_line(
    view: TableView, width: int, *, color: bool = False, widths: RoomWidths | None = None
) -> str:
    """One table in one line of at most ``width`` visible columns.

    ``B7 t042  Carlsen – Nakamura  34. Nf3  W 1:23:45* B 0:59:01  ! touch_move 4.3.1  ok 80%``:
    the board number and table, the players, the last move (or the result), both clocks with the
    running one marked, the open alerts (the first named, ``+N`` more) and the link (``ok`` when
    online and connected, else both states), with its battery. ``widths`` aligns the fields with
    the other lines of the room (by default: :func:`room_widths` of this line alone). What does
    not fit goes first: the players, then the alert's article, then the battery; only then is
    the line cut at its end. With ``color``, alerts and a link that is down are red and a result
    green (ANSI; the width counts text only).
    """
    fields = _room_fields(view)
    widths = widths or room_widths([view], width)
    head = [(fit(fields.label, widths.label).ljust(widths.label), "")]
    if widths.players:
        head.append((fit(fields.players, widths.players).ljust(widths.players), ""))
    head += [
        (fields.move.ljust(widths.move), GREEN + BOLD if fields.finished else ""),
        (fields.clocks.ljust(widths.clocks), ""),
    ]
    cells = head
    for alerts, link in (
        (fields.alerts[0], fields.link[0]),
        (fields.alerts[1], fields.link[0]),
        (fields.alerts[1], fields.link[1]),
    ):
        cells = [
            *head,
            *([(alerts, RED + BOLD)] if alerts else []),
            (link, RED if fields.down else ""),
        ]
        if sum(len(text) for text, _ in cells) + 2 * (len(cells) - 1) <= width:
            break
    return _join(cells, width, color)


def _join(cells: list[tuple[str, str]], width: int, color: bool) -> str:
    """The cells two spaces apart, cut at ``width`` (``...``), each painted in its style."""
    cut = fit("  ".join(text for text, _ in cells).rstrip(), width)
    if not color:
        return cut
    out: list[str] = []
    at = 0
    for index, (text, style) in enumerate(cells):
        if index:
            out.append(cut[at : at + 2])
            at += 2
        piece = cut[at : at + len(text)]
        at += len(text)
        out.append(_painted(piece, style, color) if style and piece.strip() else piece)
    return "".join(out).rstrip()


def _painted(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color and text else text


def room(
    views: Mapping[str, TableView],
    width: int,
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
    color: bool = False,
    height: int | None = None,
) -> str:
    """Every table in one line each, in board number order, for a room of 100 tables or more.

    ``height`` is the rows of the screen (``None``: as many as needed, one column). When the
    tables do not fit one under the other, they are laid out in as many columns as it takes
    (each at least :data:`ROOM_COLUMN_MIN` wide), read down then across. When even that is not
    enough, a last line says how many tables are not shown and how many of them have open
    alerts: the tables with open alerts are shown first of all, so that none is off the screen
    while any table without one is on it. The text never has more than ``height`` lines, nor a
    line longer than ``width``.
    """
    width = max(width, 20)
    head = [] if title is None else [fit(title, width)]
    tables = sorted(views.values(), key=_room_order)
    alerting = sum(1 for view in tables if view.alerts)
    if tables:
        head.append(fit(f"{len(tables)} tables, {alerting} with open alerts", width))
    else:
        head.append("waiting for tables...")
    tail = [fit(note, width) for note in notes]
    rows = len(tables) if height is None else max(1, height - len(head) - len(tail))
    most = max(1, (width + len(ROOM_GAP)) // (ROOM_COLUMN_MIN + len(ROOM_GAP)))
    count = next((k for k in range(1, most + 1) if -(-len(tables) // k) <= rows), most)
    shown, overflow = tables, None
    if len(tables) > rows * count:
        capacity = max(0, (rows - 1) * count)
        shown, overflow = _shown_first(tables, capacity)
    column = (width - len(ROOM_GAP) * (count - 1)) // count
    widths = room_widths(shown, column)
    lines = [room_line(view, column, color=color, widths=widths) for view in shown]
    body = _columns(lines, count, column) if count > 1 else lines
    if overflow is not None:
        body.append(fit(overflow, width))
    return "\n".join([*head, *body, *tail]) + "\n"


def _shown_first(tables: list[TableView], capacity: int) -> tuple[list[TableView], str]:
    """The tables shown when only ``capacity`` fit (those with open alerts first, then in board
    order), still in board order; and the line saying what is not shown."""
    alerting = [view for view in tables if view.alerts]
    others = [view for view in tables if not view.alerts]
    chosen = (alerting + others)[:capacity]
    picked = {id(view) for view in chosen}
    shown = [view for view in tables if id(view) in picked]
    hidden = len(tables) - len(shown)
    hidden_alerts = len(alerting) - sum(1 for view in shown if view.alerts)
    which = "none" if not hidden_alerts else f"{hidden_alerts}"
    line = (
        f"... {hidden} more tables not shown ({which} with open alerts): a taller or wider "
        "terminal shows them, or watch one with --table"
    )
    return shown, line


def _columns(lines: list[str], count: int, column: int) -> list[str]:
    """``lines`` in ``count`` columns of ``column`` visible characters, read down then across."""
    depth = -(-len(lines) // count)
    out = []
    for row in range(depth):
        cells = [lines[index] for index in range(row, len(lines), depth)]
        out.append(ROOM_GAP.join(pad(cell, column) for cell in cells).rstrip())
    return out


def _room_order(view: TableView) -> tuple[int, list[tuple[int, int | str]]]:
    number = view.board_number
    return (int(number) if number and number.isdigit() else 1_000_000, natural_key(view.table))
