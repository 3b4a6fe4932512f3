"""The live PGN of a table, as broadcasts read it (pure: ``now`` comes in).

One game per part of a table's game (:class:`~bridge.relay.parts.Part`; there is more than one
only after an illegal move stood or an arbiter set up a position). Each has the seven-tag roster
(Event, Site, Date, Round, White, Black, Result), then Board, WhiteFideId, BlackFideId,
WhiteElo and BlackElo when assigned (the ``assign`` command's ``board``, FIDE ids and ratings:
the tags lichess broadcasts read), Table (the table id), Termination once the result is shown,
and for a part after the first SetUp and FEN, Part, and ``(part N)`` after the Event: lichess
matches a pushed game to its chapter by Event, Site, Round and players, so without it the
continuation would replace the first part in the broadcast.

Moves are written once final (:mod:`bridge.relay.game`) and only ``delay`` seconds after that
(the broadcast delay against cheating); the moves of a part stop at the first that is not yet
shown, and a part follows only once the one before is shown whole. After every move comes
``[%clk h:mm:ss]`` (the mover's time after the move) and the comments where the Laws changed the
course. The result is shown once every move is, with its reason as the last comment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import chess

from bridge.relay.game import RelayTable
from bridge.relay.parts import Part

RESULTS: Final = frozenset({"1-0", "0-1", "1/2-1/2"})
COLUMNS: Final = 79
"""PGN export format: lines of at most 79 characters."""

_CONTROL: Final = dict.fromkeys(range(32), " ") | {127: " "}


@dataclass(frozen=True, slots=True, kw_only=True)
class Broadcast:
    """What the PGN takes from the relay's configuration."""

    event: str = "?"
    """Event header of a table whose assignment names none."""
    site: str = "?"
    delay: float = 0.0
    """Seconds between a move becoming final and its showing (the broadcast delay)."""


@dataclass(frozen=True, slots=True)
class Shown:
    """What of a table is shown at a given time: moves per part, and whether the result is."""

    counts: tuple[int, ...]
    result: bool


def shown(table: RelayTable, now: float, delay: float) -> Shown:
    """How much of ``table``'s game the broadcast shows at ``now``."""
    parts = table.parts_now()
    counts: list[int] = []
    for index, part in enumerate(parts):
        if index > 0 and part.since + delay > now:
            break
        count = 0
        for move in part.moves:
            if move.final_at is None or move.final_at + delay > now:
                break
            count += 1
        counts.append(count)
        if count < len(part.moves):
            break
    complete = len(counts) == len(parts) and (not parts or counts[-1] == len(parts[-1].moves))
    at = table.result_at
    result = complete and table.view.result is not None and at is not None and at + delay <= now
    return Shown(tuple(counts), result)


def next_change(table: RelayTable, now: float, delay: float) -> float | None:
    """The next time after ``now`` at which more of the table will be shown, if any is due."""
    times: list[float] = []
    for part in table.parts_now():
        times.append(part.since + delay)
        times.extend(m.final_at + delay for m in part.moves if m.final_at is not None)
    if table.result_at is not None:
        times.append(table.result_at + delay)
    later = [t for t in times if t > now]
    return min(later) if later else None


def table_pgn(table: RelayTable, now: float, broadcast: Broadcast) -> str:
    """The PGN of the table's game as shown at ``now`` (one game per part, blank-line separated)."""
    seen = shown(table, now, broadcast.delay)
    parts = table.parts_now()[: len(seen.counts)] or [
        Part(start_fen=chess.STARTING_FEN, moves=(), since=0.0)
    ]
    counts = seen.counts or (0,)
    games = [
        _game(table, broadcast, part, index, count, len(parts), seen.result)
        for index, (part, count) in enumerate(zip(parts, counts, strict=True))
    ]
    return "\n".join(games)


def termination(reason: str) -> str:
    """The PGN ``Termination`` tag for a result's reason."""
    text = reason.lower()
    if "flag" in text or "time" in text:
        return "time forfeit"
    if "illegal" in text:
        return "rules infraction"
    if "arbiter" in text or "adjudicat" in text:
        return "adjudication"
    return "normal"


def format_clock(seconds: int) -> str:
    """``h:mm:ss`` as ``[%clk]`` writes it."""
    seconds = max(seconds, 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def tag(name: str, value: str) -> str:
    """One tag pair, the value escaped as the PGN standard says (backslash, quote)."""
    clean = value.translate(_CONTROL).replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name} "{clean}"]'


def comment(texts: Sequence[str]) -> str:
    """``{...}`` of the texts joined; braces inside become parentheses; ``""`` when empty."""
    joined = " ".join(t.translate(_CONTROL).strip() for t in texts if t.strip())
    if not joined:
        return ""
    return "{" + joined.replace("{", "(").replace("}", ")") + "}"


# --- one game --------------------------------------------------------------------------------


def _game(
    table: RelayTable,
    broadcast: Broadcast,
    part: Part,
    index: int,
    count: int,
    total: int,
    result_shown: bool,
) -> str:
    view = table.view
    last = index == total - 1
    result_data = view.result if result_shown and last else None
    result = result_data.result if result_data is not None else "*"
    if result not in RESULTS:
        result = "*"
    players = view.players or {}
    event = view.event or broadcast.event
    if index > 0:
        event = f"{event} (part {index + 1})"
    tags = [
        tag("Event", event),
        tag("Site", broadcast.site),
        tag("Date", table.date),
        tag("Round", view.round or "?"),
        tag("White", players.get("white") or "?"),
        tag("Black", players.get("black") or "?"),
        tag("Result", result),
    ]
    if view.board_number:
        tags.append(tag("Board", view.board_number))
    for color in ("white", "black"):
        fide = players.get(f"{color}_fide_id")
        if fide:
            tags.append(tag(f"{color.capitalize()}FideId", fide))
    for color in ("white", "black"):
        rating = players.get(f"{color}_rating")
        if rating:
            tags.append(tag(f"{color.capitalize()}Elo", rating))
    tags.append(tag("Table", table.table))
    if total > 1:
        tags.append(tag("Part", str(index + 1)))
    if part.start_fen != chess.STARTING_FEN:
        tags += [tag("SetUp", "1"), tag("FEN", part.start_fen)]
    if result_data is not None and result != "*":
        tags.append(tag("Termination", termination(result_data.reason)))
    ending: list[str] = []
    if index + 1 < total and part.ending:
        ending.append(part.ending)
    if result_data is not None:
        article = f" (Art. {result_data.article})" if result_data.article else ""
        ending.append(f"{result} {result_data.reason}{article}")
    movetext = _movetext(part, count, ending, result)
    return "\n".join(tags) + "\n\n" + movetext + "\n"


def _movetext(part: Part, count: int, ending: list[str], result: str) -> str:
    board = chess.Board(part.start_fen)
    tokens: list[str] = []
    lead = comment([*part.lead, *part.head_notes, *(ending if count == 0 else ())])
    if lead:
        tokens.append(lead)
    after_comment = bool(lead)
    for index, move in enumerate(part.moves[:count]):
        number = board.fullmove_number
        if board.turn == chess.WHITE:
            tokens.append(f"{number}.")
        elif index == 0 or after_comment:
            tokens.append(f"{number}...")
        tokens.append(move.san)
        board.push_uci(move.uci)
        texts = list(move.notes)
        if index == count - 1:
            texts += ending
        if move.clock is not None:
            texts.append(f"[%clk {format_clock(move.clock)}]")
        note = comment(texts)
        after_comment = bool(note)
        if note:
            tokens.append(note)
    tokens.append(result)
    return _wrap(tokens)


def _wrap(tokens: list[str]) -> str:
    lines: list[str] = []
    line = ""
    for token in tokens:
        for word in token.split(" ") if token.startswith("{") else [token]:
            if line and len(line) + 1 + len(word) > COLUMNS:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
    lines.append(line)
    return "\n".join(lines)
