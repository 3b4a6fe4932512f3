"""A round's pairings as a pairing program exports them, and its results written back (pure).

Two formats (docs/rounds.md):

* **FIDE TRF-16** (the Tournament Report File, the ``.trf``/``.txt`` that Swiss-Manager, Vega,
  JaVaFo and bbpPairings read and write). Player lines start ``001``, in fixed columns (1-based,
  inclusive): start rank 5–8, name 15–47, rating 49–52, federation 54–56, FIDE id 58–68, birth
  date 70–79, points 81–84, rank 86–89; then one 8-character entry per round, round ``r`` at
  column ``92 + 10 (r - 1)``: the opponent's start rank (4, ``0000`` for none), a space, the
  colour (``w``, ``b`` or ``-``), a space, the result (``1 = 0`` played, ``+ -`` forfeit,
  ``W D L`` unrated, ``H F U Z`` byes; a space: not played yet). A line ``012`` names the
  tournament. Board numbers: a TRF does not hold them, so the pairings are ordered as FIDE's
  pairing rules list them (C.04.2 §D): the higher score of the two players before the round
  first, then the sum of both scores, then the higher-ranked player's start rank; board 1 is
  the first.
* **CSV** with a header line naming its columns: ``board``, ``white``, ``black`` (required),
  ``white_fide_id``, ``black_fide_id``, ``white_rating``, ``black_rating`` (optional, may be
  empty), ``round`` (optional: then only the rows of the round asked for), ``result`` (optional:
  ``1-0``, ``0-1``, ``1/2-1/2``, ``*``); other columns are ignored.

Every mistake is a :class:`PairingsError` naming the file and the line.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from bridge.wire import payloads

Result = Literal["1-0", "0-1", "1/2-1/2", "*"]
RESULTS: Final[tuple[Result, ...]] = ("1-0", "0-1", "1/2-1/2", "*")

ENTRY: Final = 8
"""Characters of one round's entry in a TRF player line."""

FIRST_ROUND_COLUMN: Final = 91
"""Where round 1's entry starts in a TRF player line (0-based; column 92)."""

WINS: Final = frozenset("1+WFU")
HALVES: Final = frozenset("=DH")
BYE_CODES: Final = frozenset("HFUZ+-")
"""Results of a round entry without an opponent (``0000``): byes, absences, forfeits."""
PLAYED_CODES: Final = frozenset("10=+-WDL ")
"""Results of a round entry with an opponent (a space: not played yet)."""

MAX_ROUND: Final = 99


class PairingsError(ValueError):
    """The file cannot be used as given; the message names the file and the line."""


@dataclass(frozen=True, slots=True)
class Player:
    """One player as the pairings name them."""

    name: str
    fide_id: int | None = None
    rating: int | None = None
    rank: int | None = None
    """The TRF start rank (``None`` in a CSV)."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """One board of the round."""

    board: int
    white: Player
    black: Player
    line: int
    """The line of the file that gave it (a TRF: the white player's line)."""
    result: Result = "*"
    """What the file already says (a forfeit decided in the pairing program): ``*`` if nothing."""
    forfeit: bool = False
    """The file's result is a forfeit (``+``/``-`` in a TRF)."""


@dataclass(frozen=True, slots=True)
class Unpaired:
    """A player without a board this round: a bye, an absence, or not paired at all."""

    player: Player
    line: int
    code: str
    """The TRF result code (``H``, ``F``, ``U``, ``Z``, ``+``, ``-``), empty when not paired."""

    def describe(self) -> str:
        return {
            "H": "half-point bye",
            "F": "full-point bye",
            "U": "pairing-allocated bye",
            "Z": "zero-point bye",
            "+": "forfeit win without opponent",
            "-": "forfeit loss without opponent",
        }.get(self.code, "not paired")


@dataclass(frozen=True, slots=True)
class RoundPairings:
    """A round's boards (by board number) and the players without one."""

    round: int
    pairings: tuple[Pairing, ...]
    unpaired: tuple[Unpaired, ...] = ()
    event: str | None = None


# --- TRF ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """One round of a TRF player line."""

    opponent: int
    """The opponent's start rank; 0: none."""
    color: Literal["w", "b", "-"]
    result: str
    """One character; a space: not played yet."""

    def text(self) -> str:
        return f"{self.opponent:04d} {self.color} {self.result}"


BLANK: Final = " " * ENTRY


@dataclass(frozen=True, slots=True)
class TrfPlayer:
    """A TRF ``001`` line."""

    rank: int
    name: str
    line: int
    rating: int | None = None
    fide_id: int | None = None
    federation: str = ""
    sex: str = ""
    title: str = ""
    birth: str = ""
    points: str = ""
    place: str = ""
    rounds: Mapping[int, Entry] = field(default_factory=dict)
    """Entries by round number; a round left blank is not there."""

    @property
    def player(self) -> Player:
        return Player(name=self.name, fide_id=self.fide_id, rating=self.rating, rank=self.rank)


@dataclass(frozen=True, slots=True)
class Trf:
    """A TRF file: its lines as they are (to write them back) and its players."""

    lines: tuple[str, ...]
    players: tuple[TrfPlayer, ...]
    name: str | None = None

    def rounds(self) -> int:
        """The last round any player line holds."""
        return max((r for p in self.players for r in p.rounds), default=0)


def _lines(text: str) -> list[str]:
    """The lines of a text file: apart at ``\n`` (and ``\r\n``) only, not at the other
    characters :meth:`str.splitlines` takes for line ends (a name may hold one)."""
    lines = text.replace("\r\n", "\n").split("\n")
    return lines[:-1] if lines and not lines[-1] else lines


def _int_field(text: str, what: str, where: str) -> int | None:
    text = text.strip()
    if not text:
        return None
    if not text.isdigit():
        raise PairingsError(f"{where}: {what} {text!r} is not a number")
    return int(text)


def read_trf(text: str, source: str) -> Trf:
    """Parse a TRF-16 file (``source`` names it in errors)."""
    lines = tuple(_lines(text))
    players: list[TrfPlayer] = []
    name: str | None = None
    ranks: dict[int, int] = {}
    for number, line in enumerate(lines, 1):
        where = f"{source} line {number}"
        code = line[:3]
        if code == "012":
            name = line[4:].strip() or None
            continue
        if code != "001":
            continue
        rank = _int_field(line[4:8], "start rank", where)
        if rank is None or rank < 1:
            raise PairingsError(f"{where}: a player line (001) needs its start rank in columns 5-8")
        if rank in ranks:
            raise PairingsError(
                f"{where}: start rank {rank} is already the player of line {ranks[rank]}"
            )
        ranks[rank] = number
        player_name = line[14:47].strip()
        if not player_name:
            raise PairingsError(f"{where}: player {rank} has no name (columns 15-47)")
        rounds: dict[int, Entry] = {}
        tail = line[FIRST_ROUND_COLUMN:]
        for index in range(0, len(tail), ENTRY + 2):
            chunk = tail[index : index + ENTRY].ljust(ENTRY)
            round_number = index // (ENTRY + 2) + 1
            if not chunk.strip():
                continue
            rounds[round_number] = _entry(chunk, f"{where}, round {round_number}")
        players.append(
            TrfPlayer(
                rank=rank,
                name=player_name,
                line=number,
                sex=line[9:10].strip(),
                title=line[10:13].strip(),
                rating=_int_field(line[48:52], "rating", where) or None,
                federation=line[53:56].strip(),
                fide_id=_int_field(line[57:68], "FIDE id", where) or None,
                birth=line[69:79].strip(),
                points=line[80:84].strip(),
                place=line[85:89].strip(),
                rounds=rounds,
            )
        )
    if not players:
        raise PairingsError(f"{source}: no player lines (001): not a FIDE TRF file")
    return Trf(lines=lines, players=tuple(players), name=name)


def _entry(chunk: str, where: str) -> Entry:
    opponent_text, color, result = chunk[0:4], chunk[5], chunk[7]
    opponent = _int_field(opponent_text, "opponent", where) or 0
    if chunk[4] != " " or chunk[6] != " ":
        raise PairingsError(f"{where}: {chunk!r} is not 'NNNN c r' (opponent, colour, result)")
    if color not in ("w", "b", "-"):
        raise PairingsError(f"{where}: colour {color!r} is not w, b or -")
    if opponent == 0:
        if result not in BYE_CODES:
            raise PairingsError(f"{where}: result {result!r} without an opponent (0000)")
        return Entry(0, "-", result)
    if result not in PLAYED_CODES:
        raise PairingsError(f"{where}: result {result!r} is not one of 1 = 0 + - W D L")
    if color == "w":
        return Entry(opponent, "w", result)
    if color == "b":
        return Entry(opponent, "b", result)
    raise PairingsError(f"{where}: a game against player {opponent} needs colour w or b")


def _points(entry: Entry) -> float:
    if entry.result in WINS:
        return 1.0
    if entry.result in HALVES:
        return 0.5
    return 0.0


def trf_pairings(trf: Trf, round_number: int, source: str) -> RoundPairings:
    """The pairings of ``round_number`` in ``trf``, numbered as a pairing program lists them."""
    if round_number not in {r for p in trf.players for r in p.rounds}:
        held = trf.rounds()
        has = f"rounds 1 to {held}" if held else "no round"
        raise PairingsError(f"{source}: round {round_number} is not in the file (it holds {has})")
    by_rank = {p.rank: p for p in trf.players}
    scores = {
        p.rank: sum(_points(e) for r, e in p.rounds.items() if r < round_number)
        for p in trf.players
    }
    seated: dict[int, int] = {}  # rank -> the line that seated it
    games: list[tuple[TrfPlayer, TrfPlayer, int]] = []
    unpaired: list[Unpaired] = []
    for player in trf.players:
        where = f"{source} line {player.line}"
        entry = player.rounds.get(round_number)
        if entry is None or entry.opponent == 0:
            code = "" if entry is None else entry.result
            unpaired.append(Unpaired(player.player, player.line, code))
            continue
        opponent = by_rank.get(entry.opponent)
        if opponent is None:
            raise PairingsError(
                f"{where}: round {round_number}: opponent {entry.opponent} has no player line"
            )
        if opponent.rank == player.rank:
            raise PairingsError(f"{where}: round {round_number}: player {player.rank} plays itself")
        theirs = opponent.rounds.get(round_number)
        if theirs is not None and theirs.opponent not in (0, player.rank):
            raise PairingsError(
                f"{where}: round {round_number}: player {opponent.rank} is paired twice: "
                f"with {player.rank} here, with {theirs.opponent} on line {opponent.line}"
            )
        if theirs is None or theirs.opponent != player.rank or theirs.color == entry.color:
            raise PairingsError(
                f"{where}: round {round_number}: player {player.rank} plays {opponent.rank} "
                f"with {entry.color}, but line {opponent.line} does not say so"
            )
        if entry.color == "w":
            for rank in (player.rank, opponent.rank):
                if rank in seated:
                    raise PairingsError(
                        f"{where}: round {round_number}: player {rank} is paired twice "
                        f"(also on line {seated[rank]})"
                    )
                seated[rank] = player.line
            games.append((player, opponent, player.line))
    for player in trf.players:
        entry = player.rounds.get(round_number)
        if entry is not None and entry.opponent and player.rank not in seated:
            raise PairingsError(
                f"{source} line {player.line}: round {round_number}: player {player.rank} "
                "has black but no white player names them"
            )

    def order(game: tuple[TrfPlayer, TrfPlayer, int]) -> tuple[float, float, int]:
        white, black, _ = game
        a, b = scores[white.rank], scores[black.rank]
        return (-max(a, b), -(a + b), min(white.rank, black.rank))

    pairings: list[Pairing] = []
    for board, (white, black, line) in enumerate(sorted(games, key=order), 1):
        code = white.rounds[round_number].result
        pairings.append(
            Pairing(
                board=board,
                white=white.player,
                black=black.player,
                line=line,
                result=_result_of(code),
                forfeit=code in "+-",
            )
        )
    return RoundPairings(
        round=round_number, pairings=tuple(pairings), unpaired=tuple(unpaired), event=trf.name
    )


def _result_of(white_code: str) -> Result:
    if white_code in "1+W":
        return "1-0"
    if white_code in "0-L":
        return "0-1"
    if white_code in "=D":
        return "1/2-1/2"
    return "*"


TRF_CODES: Final[dict[Result, tuple[str, str]]] = {
    "1-0": ("1", "0"),
    "0-1": ("0", "1"),
    "1/2-1/2": ("=", "="),
    "*": (" ", " "),
}
"""A result as the white and the black player's TRF codes (``*``: not played yet)."""


def with_results(
    trf: Trf, round_number: int, results: Mapping[int, tuple[int, int, Result, bool]]
) -> str:
    """``trf``'s text with the round's entries set: ``results`` by board, each ``(white rank,
    black rank, result, forfeit)``. Other lines and rounds are kept as they were."""
    entries: dict[int, Entry] = {}
    for white, black, result, forfeit in results.values():
        w, b = TRF_CODES[result]
        if forfeit and result != "*":
            w, b = ("+", "-") if result == "1-0" else ("-", "+")
        entries[white] = Entry(black, "w", w)
        entries[black] = Entry(white, "b", b)
    by_line = {p.line: p for p in trf.players}
    out: list[str] = []
    for number, line in enumerate(trf.lines, 1):
        player = by_line.get(number)
        if player is not None and player.rank in entries:
            line = set_entry(line, round_number, entries[player.rank].text())
        out.append(line)
    return "\n".join(out) + "\n"


def set_entry(line: str, round_number: int, text: str) -> str:
    """A TRF player line with round ``round_number``'s entry replaced by ``text``."""
    start = FIRST_ROUND_COLUMN + (round_number - 1) * (ENTRY + 2)
    padded = line.ljust(start + ENTRY)
    return (padded[:start] + text.ljust(ENTRY) + padded[start + ENTRY :]).rstrip()


def player_line(player: TrfPlayer, rounds: int) -> str:
    """The ``001`` line of ``player`` in TRF-16's columns (its entries up to ``rounds``)."""
    line = (
        f"001 {player.rank:4d} {player.sex:1.1}{player.title:>3.3} {player.name:<33.33} "
        f"{'' if player.rating is None else player.rating:>4} {player.federation:3.3} "
        f"{'' if player.fide_id is None else player.fide_id:>11} {player.birth:10.10} "
        f"{player.points:>4.4} {player.place:>4.4}"
    )
    for round_number in range(1, rounds + 1):
        entry = player.rounds.get(round_number)
        line = line.ljust(FIRST_ROUND_COLUMN + (round_number - 1) * (ENTRY + 2))
        line += BLANK if entry is None else entry.text()
    return line.rstrip()


def write_trf(players: Sequence[TrfPlayer], *, name: str | None = None) -> str:
    """A TRF-16 file of ``players`` (and the tournament's ``name``)."""
    rounds = max((r for p in players for r in p.rounds), default=0)
    head = [] if name is None else [f"012 {name}"]
    return "\n".join([*head, *(player_line(p, rounds) for p in players)]) + "\n"


# --- CSV ---------------------------------------------------------------------------------------

CSV_COLUMNS: Final = (
    "board",
    "white",
    "black",
    "white_fide_id",
    "black_fide_id",
    "white_rating",
    "black_rating",
)


def csv_pairings(text: str, round_number: int, source: str) -> RoundPairings:
    """The pairings of a CSV file (the rows of ``round_number`` if it has a ``round`` column)."""
    reader = csv.DictReader(io.StringIO(text, newline=""), skipinitialspace=True)
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("board", "white", "black") if c not in header]
    if missing:
        raise PairingsError(
            f"{source} line 1: the header must name the columns board, white, black "
            f"(missing: {', '.join(missing)})"
        )
    reader.fieldnames = header
    boards: dict[int, int] = {}
    seen: dict[object, int] = {}
    pairings: list[Pairing] = []
    rounds: set[str] = set()
    for row in reader:
        line = reader.line_num
        where = f"{source} line {line}"
        if None in row:
            raise PairingsError(f"{where}: more fields than the header names")
        values = {k: (v or "").strip() for k, v in row.items() if k is not None}
        if not any(values.values()):
            continue
        if "round" in values:
            rounds.add(values["round"])
            if values["round"] != str(round_number):
                continue
        board = _int_field(values["board"], "board", where)
        if board is None or board < 1:
            raise PairingsError(f"{where}: board must be a number from 1")
        if board in boards:
            raise PairingsError(f"{where}: board {board} is already on line {boards[board]}")
        boards[board] = line
        players = []
        for color in ("white", "black"):
            name = values[color]
            if not name:
                raise PairingsError(f"{where}: no {color} player")
            player = Player(
                name=name,
                fide_id=_int_field(values.get(f"{color}_fide_id", ""), f"{color}_fide_id", where),
                rating=_int_field(values.get(f"{color}_rating", ""), f"{color}_rating", where),
            )
            for key in (("name", name), ("fide", player.fide_id)):
                if key[1] is None:
                    continue
                if key in seen:
                    raise PairingsError(
                        f"{where}: {name} plays twice in round {round_number} "
                        f"(also on line {seen[key]})"
                    )
                seen[key] = line
            players.append(player)
        text = values.get("result") or "*"
        result = next((r for r in RESULTS if r == text), None)
        if result is None:
            raise PairingsError(f"{where}: result {text!r} is not 1-0, 0-1, 1/2-1/2 or *")
        pairings.append(Pairing(board, players[0], players[1], line, result))
    if "round" in header and str(round_number) not in rounds:
        held = ", ".join(sorted(rounds, key=lambda r: (len(r), r))) or "none"
        raise PairingsError(
            f"{source}: round {round_number} is not in the file (its rounds: {held})"
        )
    if not pairings:
        raise PairingsError(f"{source}: no pairings in the file")
    return RoundPairings(
        round=round_number, pairings=tuple(sorted(pairings, key=lambda p: p.board))
    )


def write_csv(rows: Iterable[Mapping[str, object]], columns: Sequence[str]) -> str:
    """CSV text with a header line (``None``: an empty field)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return out.getvalue()


# --- either ------------------------------------------------------------------------------------


def is_trf(text: str) -> bool:
    """Whether ``text`` reads as a TRF file (it has a player line ``001``)."""
    return any(line.startswith("001 ") for line in _lines(text))


def read_pairings(text: str, round_number: int, source: str) -> tuple[RoundPairings, Trf | None]:
    """The round's pairings from a TRF or a CSV file, and the TRF itself if it was one."""
    if not 1 <= round_number <= MAX_ROUND:
        raise PairingsError(f"round must be 1 to {MAX_ROUND}, not {round_number}")
    if is_trf(text):
        trf = read_trf(text, source)
        return trf_pairings(trf, round_number, source), trf
    return csv_pairings(text, round_number, source), None


# --- the venue map -----------------------------------------------------------------------------

_KEY_LINE: Final = re.compile(r'^\s*"?(\d+)"?\s*=')


def default_table(board: int) -> str:
    """The table of board ``board`` without a venue map: ``b1``, ``b2``..."""
    return f"b{board}"


def read_venue(text: str, source: str) -> dict[int, str]:
    """A venue map: TOML with a ``[boards]`` table, ``board number = "table id"``."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PairingsError(f"{source}: {exc}") from None
    boards = raw.get("boards")
    if not isinstance(boards, dict):
        raise PairingsError(f'{source}: needs a [boards] table (1 = "t001", 2 = "t002"...)')
    lines: dict[str, int] = {}
    for number, line in enumerate(_lines(text), 1):
        match = _KEY_LINE.match(line)
        if match:
            lines.setdefault(match.group(1), number)
    venue: dict[int, str] = {}
    tables: dict[str, int] = {}
    for key, table in boards.items():
        where = f"{source} line {lines.get(key, '?')}"
        if not key.isdigit() or int(key) < 1:
            raise PairingsError(f"{where}: {key!r} is not a board number")
        if not isinstance(table, str):
            raise PairingsError(f"{where}: board {key}: the table id must be a string")
        try:
            payloads.topic(table, "")
        except ValueError as exc:
            raise PairingsError(f"{where}: board {key}: {exc}") from None
        if table in tables:
            raise PairingsError(f"{where}: table {table} is already board {tables[table]}'s")
        tables[table] = int(key)
        venue[int(key)] = table
    return venue


def tables(pairings: RoundPairings, venue: Mapping[int, str] | None, source: str) -> dict[int, str]:
    """Each board's table: the venue map's, else ``bN``."""
    out: dict[int, str] = {}
    for pairing in pairings.pairings:
        if venue is None:
            out[pairing.board] = default_table(pairing.board)
        elif pairing.board in venue:
            out[pairing.board] = venue[pairing.board]
        else:
            raise PairingsError(
                f"{source} line {pairing.line}: board {pairing.board} has no table in the venue map"
            )
    return out


def assign_fields(pairing: Pairing, round_number: int, event: str | None) -> dict[str, object]:
    """The ``assign`` request's fields for one board."""
    fields: dict[str, object] = {
        "white": pairing.white.name,
        "black": pairing.black.name,
        "white_fide_id": pairing.white.fide_id,
        "black_fide_id": pairing.black.fide_id,
        "white_rating": pairing.white.rating,
        "black_rating": pairing.black.rating,
        "event": event,
        "round": str(round_number),
        "board": pairing.board,
    }
    return {k: v for k, v in fields.items() if v is not None}
