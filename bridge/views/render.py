"""The text screen of ``chessbridge watch``: tables drawn from their :class:`TableView` (pure).

A diagram with the last move marked, the clocks and the last full moves beside it, the result,
the open alerts and the last touch; two tables side by side when the screen is wide enough.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Final

import chess

from bridge.views.model import (
    TableView,
    alert_line,
    format_seconds,
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


def fit(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    if width <= 3:
        return text[:width]
    return text[: width - 3] + "..."


def diagram(view: TableView) -> list[str]:
    """The position as 8 ranks (8 at the top) and a line of file letters.

    Pieces are FEN letters (white upper case), ``.`` an empty square; the two squares of the last
    move are in brackets, e.g. ``[N]``.
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
            piece = position.piece_at(square)
            symbol = "." if piece is None else piece.symbol()
            cells.append(f"[{symbol}]" if square in marked else f" {symbol} ")
        lines.append(f"{rank + 1} " + "".join(cells))
    lines.append("  " + "".join(f" {name} " for name in chess.FILE_NAMES))
    return lines


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


def render_table(view: TableView, width: int) -> list[str]:
    """The lines of one table, none longer than ``width``.

    The header, the diagram with the clocks and moves beside it (below it when narrow), the
    result, the open alerts (``!``) and the last touch.
    """
    lines = _header(view)
    board = diagram(view)
    panel = _panel(view)
    if width >= _DIAGRAM_WIDTH + _PANEL_GAP + _PANEL_MIN:
        for index in range(max(len(board), len(panel))):
            left = board[index] if index < len(board) else ""
            right = panel[index] if index < len(panel) else ""
            lines.append(f"{left:<{_DIAGRAM_WIDTH + _PANEL_GAP}}{right}".rstrip())
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
    notes: Sequence[str] = (),
) -> str:
    """The whole screen: each table in turn (two side by side when ``width`` allows).

    ``title`` is a first line (e.g. the broker and connection state), ``notes`` last lines (e.g.
    warnings). Every line fits in ``width`` columns; the text ends with a newline.
    """
    width = max(width, 20)
    lines: list[str] = []
    if title is not None:
        lines.append(fit(title, width))
    tables = [views[key] for key in sorted(views, key=natural_key)]
    if not tables:
        lines.append("waiting for tables...")
    elif width >= _TWO_COLUMNS_FROM and len(tables) > 1:
        column = (width - len(_COLUMN_GAP)) // 2
        for index in range(0, len(tables), 2):
            left = render_table(tables[index], column)
            right = render_table(tables[index + 1], column) if index + 1 < len(tables) else []
            lines.append("")
            for row in range(max(len(left), len(right))):
                cell = left[row] if row < len(left) else ""
                other = right[row] if row < len(right) else ""
                lines.append(f"{cell:<{column}}{_COLUMN_GAP}{other}".rstrip())
    else:
        for view in tables:
            lines.append("")
            lines.extend(render_table(view, width))
    if notes:
        lines.append("")
        lines.extend(fit(note, width) for note in notes)
    return "\n".join(lines) + "\n"
