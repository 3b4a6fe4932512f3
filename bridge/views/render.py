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


def _painted(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{RESET}" if color and text else text


def room_line(view: TableView, width: int, *, color: bool = False) -> str:
    """One table in one line of at most ``width`` visible columns.

    ``B7 t042  Carlsen – Nakamura  34. Nf3  W 1:23:45* B 0:59:01  ! touch_move 4.3.1  online``:
    the board number and table, the players, the last move (or the result), both clocks with the
    running one marked, the open alerts (the first named, ``+N`` more) and the link, which is
    shown only when it is not online and connected, or with its battery. With ``color``, alerts
    and a link that is down are red and a result green (ANSI; the width counts text only).
    """
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
    alerts = ""
    if view.alerts:
        first = view.alerts[0]
        more = f" +{len(view.alerts) - 1}" if len(view.alerts) > 1 else ""
        alerts = f"! {first.kind} {first.article}{more}".rstrip()
    state = board.state if board is not None else "?"
    down = view.status != "online" or state != "connected"
    link = f"{view.status or '?'}/{state}" if down else "ok"
    if board is not None and board.battery is not None:
        link += f" {board.battery}%"
    fixed = [label.ljust(12), move.ljust(12), clocks.ljust(21), alerts, link]
    room_for_players = width - sum(len(part) + 2 for part in fixed)
    cells = [label.ljust(12)]
    if room_for_players >= 8:
        cells.append(fit(players, room_for_players).ljust(room_for_players))
    cells += fixed[1:]
    plain = "  ".join(cells).rstrip()
    if len(plain) > width:
        return fit(plain, width)
    if not color:
        return plain
    painted = [cells[0]]
    if room_for_players >= 8:
        painted.append(cells[1])
    style = GREEN + BOLD if view.result is not None else ""
    painted.append(_painted(fixed[1], style, color) if style else fixed[1])
    painted.append(fixed[2])
    painted.append(_painted(alerts, RED + BOLD, color))
    painted.append(_painted(link, RED, color) if down else link)
    return "  ".join(painted).rstrip()


def room(
    views: Mapping[str, TableView],
    width: int,
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
    color: bool = False,
) -> str:
    """Every table in one line each (board number order), for a room of up to 100 tables."""
    width = max(width, 20)
    lines = [] if title is None else [fit(title, width)]
    tables = sorted(views.values(), key=_room_order)
    if not tables:
        lines.append("waiting for tables...")
    alerting = sum(1 for view in tables if view.alerts)
    if tables:
        lines.append(fit(f"{len(tables)} tables, {alerting} with open alerts", width))
    lines.extend(room_line(view, width, color=color) for view in tables)
    lines.extend(fit(note, width) for note in notes)
    return "\n".join(lines) + "\n"


def _room_order(view: TableView) -> tuple[int, list[tuple[int, int | str]]]:
    number = view.board_number
    return (int(number) if number and number.isdigit() else 1_000_000, natural_key(view.table))
