"""TRF-16 files written for the tests straight from FIDE's description of the format (the
Tournament Report File, 2016), column by column, apart from the code under test.

Player line (``001``), columns 1-based and inclusive:

====  =======  ======================================================
1-3   ``001``
5-8   start rank, right-aligned
10    sex (``m``/``w``)
11-13 title, right-aligned
15-47 name (``Surname, Name``)
49-52 FIDE rating
54-56 federation
58-68 FIDE id, right-aligned
70-79 birth date ``YYYY/MM/DD``
81-84 points (``11.5``), right-aligned
86-89 rank, right-aligned
92-99 round 1: opponent's start rank (4 digits, ``0000`` none), blank, colour (``w``/``b``/``-``),
      blank, result (``1 = 0 + - W D L H F U Z``; blank: not played yet)
102-  round 2, and so on every 10 columns
====  =======  ======================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


def put(line: list[str], first: int, last: int, text: str, *, right: bool = False) -> None:
    """Write ``text`` in columns ``first``..``last`` (1-based, inclusive) of ``line``."""
    width = last - first + 1
    assert len(text) <= width, (text, width)
    text = text.rjust(width) if right else text.ljust(width)
    while len(line) < last:
        line.append(" ")
    line[first - 1 : last] = list(text)


@dataclass
class Row:
    """One player of a test tournament."""

    rank: int
    name: str
    rating: int | None = None
    fide_id: int | None = None
    federation: str = "NOR"
    rounds: list[tuple[int, str, str] | None] = field(default_factory=list)
    """Per round: (opponent rank, colour, result), or ``None`` for a blank entry."""

    def line(self) -> str:
        cells: list[str] = []
        put(cells, 1, 3, "001")
        put(cells, 5, 8, str(self.rank), right=True)
        put(cells, 10, 10, "m")
        put(cells, 15, 47, self.name)
        put(cells, 49, 52, "" if self.rating is None else str(self.rating), right=True)
        put(cells, 54, 56, self.federation)
        put(cells, 58, 68, "" if self.fide_id is None else str(self.fide_id), right=True)
        put(cells, 70, 79, "1990/01/01")
        put(cells, 81, 84, "0.0", right=True)
        put(cells, 86, 89, str(self.rank), right=True)
        for index, entry in enumerate(self.rounds):
            first = 92 + 10 * index
            if entry is None:
                put(cells, first, first + 7, "")
                continue
            opponent, colour, result = entry
            put(cells, first, first + 3, f"{opponent:04d}")
            put(cells, first + 5, first + 5, colour)
            put(cells, first + 7, first + 7, result)
        return "".join(cells).rstrip()


def trf(rows: Sequence[Row], name: str = "Test Open 2026") -> str:
    """A TRF file: the tournament's name (``012``) and its player lines."""
    head = [f"012 {name}", "022 Oslo", "042 2026/05/01"]
    return "\n".join([*head, *(row.line() for row in rows)]) + "\n"


def thirty_boards() -> list[Row]:
    """Round 1 of a 62-player open: 30 boards (rank i against rank i + 30, the higher-ranked
    player white on odd boards and black on even ones), board 30 forfeited by rank 60 (white there),
    rank 61 with the pairing-allocated bye and rank 62 not paired (withdrawn: a blank entry)."""
    rows = [
        Row(rank, f"Player{rank:02d}, Test", 2700 - 10 * rank, 1_000_000 + rank)
        for rank in range(1, 63)
    ]
    for top in range(1, 31):
        bottom = top + 30
        top_colour, bottom_colour = ("w", "b") if top % 2 else ("b", "w")
        top_result, bottom_result = ("+", "-") if top == 30 else (" ", " ")
        rows[top - 1].rounds = [(bottom, top_colour, top_result)]
        rows[bottom - 1].rounds = [(top, bottom_colour, bottom_result)]
    rows[60].rounds = [(0, "-", "U")]
    rows[61].rounds = [None]
    return rows
