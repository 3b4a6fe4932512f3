"""What the arbiters' page shows, as JSON and SVG (pure).

:func:`summary` is one table at a glance (the room grid), :func:`detail` one table in full (moves
with clock times and the broadcast's comments, the parts of a game that an illegal move that
stood split and why, the alert history and who closed each alert, the arbiters' actions),
:func:`diagram` the position as SVG (python-chess draws it: no fonts needed on the phone).
The page (``static/``) fetches these and listens for server-sent events naming the tables that
changed. Everything is live, without the broadcast delay: the page is for the venue's arbiters.
"""

from __future__ import annotations

import contextlib
from typing import Any

import chess
import chess.svg

from bridge.relay.game import RelayTable
from bridge.views.model import format_seconds, move_label, result_line


def summary(table: RelayTable, push_error: str | None = None) -> dict[str, Any]:
    """One table at a glance."""
    view = table.view
    board = view.board
    players = view.players or {}
    last = view.last_move
    clocks = view.clocks
    return {
        "table": table.table,
        "version": table.version,
        "game": view.game_id,
        "status": view.status,
        "link": None if board is None else board.state,
        "battery": None if board is None else board.battery,
        "linkError": None if board is None or board.state == "connected" else board.error,
        "white": players.get("white"),
        "black": players.get("black"),
        "event": view.event,
        "round": view.round,
        "board": view.board_number,
        "clocks": None
        if clocks is None
        else {
            "white": format_seconds(clocks.white),
            "black": format_seconds(clocks.black),
            "running": clocks.running,
        },
        "turn": view.turn,
        "plies": len(view.moves),
        "last": None if last is None else move_label(last.ply, last.san, last.color),
        "result": None if view.result is None else result_line(view.result),
        "alerts": [
            {
                "id": alert.id,
                "kind": alert.kind,
                "article": alert.article,
                "color": alert.color,
                "ply": alert.ply,
                "message": alert.message,
                "lines": _lines_of(alert.details),
            }
            for alert in view.alerts
        ],
        "pushError": push_error,
    }


def detail(table: RelayTable, push_error: str | None = None) -> dict[str, Any]:
    """One table in full: the summary, the moves with clocks, the alert and action history."""
    out = summary(table, push_error)
    parts = table.parts_now()
    out["moves"] = [
        {
            "ply": move.ply,
            "label": move_label(move.ply, move.san, move.color),
            "clock": None if move.clock is None else format_seconds(move.clock),
            "final": move.final_at is not None,
            "part": index + 1,
            "notes": list(move.notes),
        }
        for index, part in enumerate(parts)
        for move in part.moves
    ]
    out["parts"] = len(parts)
    out["notes"] = [part.ending for part in parts if part.ending]
    out["partList"] = [
        {
            "part": index + 1,
            "startFen": part.start_fen,
            "firstPly": part.moves[0].ply if part.moves else chess.Board(part.start_fen).ply() + 1,
            "lead": [*part.lead, *part.head_notes],
            "ending": part.ending,
        }
        for index, part in enumerate(parts)
    ]
    out["alertLog"] = [
        {
            "id": entry.alert.id,
            "kind": entry.alert.kind,
            "article": entry.alert.article,
            "color": entry.alert.color,
            "ply": entry.alert.ply,
            "message": entry.alert.message,
            "raised": entry.raised_at,
            "closed": entry.closed_at,
            "by": entry.closed_by,
        }
        for entry in table.alerts
    ]
    out["actions"] = [
        {"at": action.at, "command": action.command, "summary": action.summary, "by": action.by}
        for action in table.actions
    ]
    return out


def diagram(table: RelayTable, size: int = 360) -> str:
    """The position as SVG, the last move marked, a king in check in red."""
    view = table.view
    board = view.position or chess.Board()
    lastmove = None
    last = view.last_move
    if last is not None:
        with contextlib.suppress(ValueError):
            lastmove = chess.Move.from_uci(last.uci)
    check = board.king(board.turn) if board.is_check() else None
    return chess.svg.board(board, lastmove=lastmove, check=check, size=size)


def _lines_of(details: dict[str, Any]) -> list[str]:
    """A ``board_mismatch``'s lines of moves that lead to the board (UCI, space-separated):
    the page offers to record one of them (``reconstruct``)."""
    lines = details.get("lines")
    return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []
