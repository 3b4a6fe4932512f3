"""Rules editions as data: which article each situation cites, and the penalties that differ.

Two editions of the FIDE Laws of Chess, each in standard, rapid and blitz play:

* ``fide-1997`` — the Laws adopted at Yerevan 1996, in force from 1 July 1997 (every article
  cited is quoted in docs/laws.md). Illegal moves: position reinstated (7.4); in a quickplay finish
  the opponent gets two minutes for each of the first two illegal moves and the third loses
  (10.3); in blitz the illegal move is completed by starting the opponent's clock and the
  opponent may claim the win (C.3). An incorrect draw claim costs half the claimant's remaining
  time, at most three minutes, and gives the opponent three minutes (9.5 b). No automatic draw
  by repetition or move count. In blitz, winning needs mating potential as C.4 defines it. In
  blitz an illegal move stands once the opponent has made his own move (C.3); in rapid the
  arbiter rules under Article 10 only when a player asks (B.5), so an unclaimed illegal move
  stands there too.
* ``fide-2018`` — the Laws in force from 1 January 2018 (Articles 5 and 9 are quoted in
  docs/laws.md; the other article numbers are those of that edition). An illegal move is
  completed by pressing the clock (7.5.1); a pawn left unpromoted on the last rank is one too
  (7.5.2), and so is a press without a move (7.5.3). The first gives the opponent two minutes
  (one in blitz, B.2), the second loses (7.5.5). In rapid and blitz (A.4.2; blitz through B.4)
  an illegal move that the opponent does not claim before his own move stands. An incorrect
  draw claim gives the opponent two minutes (9.5 b; one in blitz). Fivefold repetition and 75
  moves end the game at once (9.6); a dead position ends it at once (5.2 b); checkmate ends it
  at once only when the mating move was in accordance with Articles 3 and 4.2-4.7 (5.1.1; 1997
  5.1 a: a legal move, so a touch-move breach does not keep it open). Touching the king
  and then a rook obliges castling on that side when it is legal (4.4.1), and the piece a pawn
  promotes to is chosen once it has touched the promotion square (4.4.4); the 1997 Laws have
  neither rule.

Article numbers of the 2018 edition are given in FIDE's dotted form (5.2.2, 9.6.1, 9.5.3); the
older extracts letter the same paragraphs (5.2 b, 9.6 a, 9.5 b: the unlettered first paragraph
of 9.5 is 9.5.1 there, so b is 9.5.3). The 2018 numbers of Articles 1, 4, 6 and 7 and
Appendices A and B are not quoted in docs/laws.md (it says what each is about): they are those
of the published 2018 Laws (alternate moves 1.2, touch-move 4.3.1-4.3.3, king and rook
4.4.1-4.4.3, the promoted piece 4.4.4, the king released on its castling square 4.6.2 (1997
has no such paragraph: its 4.6 is about claims, and its 4.7 covers a piece released as part of
a legal move, which it cites), j'adoube 4.2.1, pressing the
clock 6.2.1, displaced pieces 7.4.1, illegal moves 7.5.1, unpromoted pawn 7.5.2, press without a
move 7.5.3, their penalty 7.5.5, rapid A.4.2, blitz B.2 and B.4). The 1997
full text has two readings of the quickplay penalty: the Laws (10.3: a third illegal move loses)
and the tournament highlights (the second loses); the Laws are followed. Pure data: no I/O.
"""

from __future__ import annotations

import enum
from typing import Final

import msgspec


class Mode(enum.Enum):
    """The rate of play."""

    STANDARD = "standard"
    RAPID = "rapid"
    BLITZ = "blitz"


class Edition(msgspec.Struct, frozen=True, kw_only=True):
    """One edition in one mode: article numbers and the penalties that differ."""

    name: str
    year: int
    mode: Mode
    touch_own: str
    touch_opponent: str
    touch_both: str
    adjust: str
    castling_rook_first: str
    castle_king_and_rook: str | None
    """2018 4.4.1: king then rook touched obliges castling on that side when legal (1997: none)."""
    castling_side_illegal: str
    """King and rook touched (together, or king first), castling there illegal: the king moves."""
    promotion_choice: str | None
    """2018 4.4.4: the promoted piece is chosen once it touched the square (1997: none)."""
    release: str
    castling_king_released: str
    """The king released on its castling square while castling there is legal: castling on
    that side is obliged (2018 4.6.2, 1997 4.6 b, as the printings that number the release
    article 4.6 have it; the texts quoted in docs/laws.md number it 4.7)."""
    illegal_move: str
    unpromoted_pawn: str
    """A pawn left on the last rank and pressed (2018 7.5.2; 1997: an illegal move like any)."""
    alternate_moves: str
    """Moves alternate: two moves in one turn break it (1997 1.1, 2018 1.2)."""
    illegal_loss: str
    """The article of the loss by illegal moves (2018 7.5.5, 1997 rapid 10.3)."""
    illegal_stands: str | None
    """Where an illegal move that the opponent does not claim before replying stands."""
    press_completes: str
    displaced: str
    press_without_move: str
    clock_not_pressed: str
    flag_fall: str
    checkmate: str
    mate_needs_article_4: bool
    """2018 5.1.1: checkmate ends the game at once only if the mating move was in accordance
    with Article 3 and Articles 4.2-4.7; 1997 5.1(a) asks only for a legal move."""
    stalemate: str
    dead_position: str
    fivefold: str | None
    seventy_five: str | None
    threefold: str
    fifty_moves: str
    incorrect_claim: str
    illegal_minutes_to_opponent: tuple[int, ...]
    """Minutes given to the opponent for the 1st, 2nd, ... illegal move; past the end: loss."""
    illegal_loses_at: int | None
    """The illegal move (by count) that loses the game; ``None``: the opponent may claim."""
    illegal_penalty_text: str
    claim_penalty_text: str
    c4_mating_potential: bool
    """1997 blitz: a win needs mating potential as C.4 defines it (K+N+N is not enough)."""

    def loses_at_once(self, count: int) -> bool:
        """Whether a player's ``count``-th illegal move ends the game when it is completed.

        Only where an illegal move cannot stand: in rapid and blitz (2018 A.4.2, 1997 B.5 and
        C.3) the opponent must claim before his own move, or the arbiter step in.
        """
        return (
            self.illegal_loses_at is not None
            and count >= self.illegal_loses_at
            and self.illegal_stands is None
        )

    def illegal_penalty(self, count: int) -> str:
        """What the edition prescribes for a player's ``count``-th illegal move."""
        if self.illegal_loses_at is not None and count >= self.illegal_loses_at:
            lost = f"game lost by the player ({self.illegal_loss}, illegal move no. {count})"
            if self.illegal_stands is None:
                return lost
            return (
                f"{lost} if the opponent claims it before making his own move or the arbiter "
                f"intervenes; otherwise the illegal move stands ({self.illegal_stands})"
            )
        if self.illegal_minutes_to_opponent and count <= len(self.illegal_minutes_to_opponent):
            minutes = self.illegal_minutes_to_opponent[count - 1]
            return f"{minutes} minute{'s' if minutes != 1 else ''} extra to the opponent; " + (
                self.illegal_penalty_text
            )
        return self.illegal_penalty_text

    @property
    def label(self) -> str:
        """``fide-2018``, ``fide-1997-blitz``..."""
        return self.name if self.mode is Mode.STANDARD else f"{self.name}-{self.mode.value}"


def _fide_1997(mode: Mode) -> Edition:
    blitz = mode is Mode.BLITZ
    illegal = "C.3" if blitz else ("10.3" if mode is Mode.RAPID else "7.4")
    return Edition(
        name="fide-1997",
        year=1997,
        mode=mode,
        touch_own="4.3(a)",
        touch_opponent="4.3(a)",
        touch_both="4.3(b)",
        adjust="4.2",
        castling_rook_first="4.4(a)",
        castle_king_and_rook=None,
        castling_side_illegal="4.4(b)",
        promotion_choice=None,
        release="4.7",
        castling_king_released="4.6(b)",
        illegal_move=illegal,
        unpromoted_pawn=illegal,
        alternate_moves="1.1",
        illegal_loss="10.3",
        illegal_stands="C.3" if blitz else ("B.5" if mode is Mode.RAPID else None),
        press_completes="6.7(a)",
        displaced="7.3",
        press_without_move="6.7(a)",
        clock_not_pressed="6.7(a)",
        flag_fall="C.4" if blitz else "6.9",
        checkmate="5.1(a)",
        mate_needs_article_4=False,
        stalemate="5.2",
        dead_position="9.6",
        fivefold=None,
        seventy_five=None,
        threefold="9.2",
        fifty_moves="9.3",
        incorrect_claim="9.5(b)",
        illegal_minutes_to_opponent=() if blitz or mode is Mode.STANDARD else (2, 2),
        illegal_loses_at=None if blitz or mode is Mode.STANDARD else 3,
        illegal_penalty_text=(
            "the illegal move is completed once the opponent's clock has been started; the "
            "opponent may claim a win before making his own move (C.3)"
            if blitz
            else "the position before the irregularity is reinstated and the clocks adjusted "
            "(7.4, 6.13); in a quickplay finish the opponent gets two minutes for each of the "
            "first two illegal moves and the third loses (10.3)"
            + (
                "; in rapidplay the arbiter rules only on a claim (B.5): if the opponent makes "
                "his own move instead, the illegal move stands"
                if mode is Mode.RAPID
                else ""
            )
        ),
        claim_penalty_text=(
            "half of the claimant's remaining time is deducted, at most three minutes, and "
            "three minutes are added to the opponent's time; the intended move must be played "
            "(9.5 b)"
        ),
        c4_mating_potential=blitz,
    )


def _fide_2018(mode: Mode) -> Edition:
    fast = mode is not Mode.STANDARD
    blitz = mode is Mode.BLITZ
    # Rapid and blitz without the competition rules (A.4; blitz through B.4): A.4.2.
    fast_rule = ", A.4.2" if fast else ""
    return Edition(
        name="fide-2018",
        year=2018,
        mode=mode,
        touch_own="4.3.1",
        touch_opponent="4.3.2",
        touch_both="4.3.3",
        adjust="4.2.1",
        castling_rook_first="4.4.2",
        castle_king_and_rook="4.4.1",
        castling_side_illegal="4.4.3",
        promotion_choice="4.4.4",
        release="4.7",
        castling_king_released="4.6.2",
        illegal_move="7.5.1" + fast_rule,
        unpromoted_pawn="7.5.2" + fast_rule,
        alternate_moves="1.2",
        illegal_loss="7.5.5" + fast_rule,
        illegal_stands=("A.4.2, B.4" if blitz else "A.4.2") if fast else None,
        press_completes="6.2.1",
        displaced="7.4.1",
        press_without_move="7.5.3",
        clock_not_pressed="6.2.1",
        flag_fall="6.9",
        checkmate="5.1.1",
        mate_needs_article_4=True,
        stalemate="5.2.1",
        dead_position="5.2.2",
        fivefold="9.6.1",
        seventy_five="9.6.2",
        threefold="9.2",
        fifty_moves="9.3",
        incorrect_claim="9.5.3",
        # B.2: in blitz the penalties of Articles 7 and 9 are one minute instead of two.
        illegal_minutes_to_opponent=(1,) if blitz else (2,),
        illegal_loses_at=2,
        illegal_penalty_text=(
            "the position immediately before the irregularity is reinstated (7.5.1); the "
            "second completed illegal move by the same player loses, unless the opponent cannot "
            "checkmate by any series of legal moves (7.5.5)"
            + (
                "; the opponent must claim before making his own move, or the illegal move "
                "stands (A.4.2)"
                if fast
                else ""
            )
        ),
        claim_penalty_text=(
            f"{'one minute is' if blitz else 'two minutes are'} added to the opponent's remaining "
            "time; the game continues and an intended move must be played (9.5.3"
            + (", B.2)" if blitz else ")")
        ),
        c4_mating_potential=False,
    )


EDITIONS: Final[dict[str, Edition]] = {
    edition.label: edition
    for factory in (_fide_2018, _fide_1997)
    for edition in (factory(mode) for mode in Mode)
}
"""Every edition by its ``--rules`` label (``fide-2018``, ``fide-2018-rapid``, ...)."""

DEFAULT: Final = EDITIONS["fide-2018"]


def edition(label: str) -> Edition:
    """The edition named ``label``.

    Raises:
        ValueError: an unknown label; the message lists the known ones.
    """
    try:
        return EDITIONS[label]
    except KeyError:
        known = ", ".join(EDITIONS)
        raise ValueError(f"unknown rules edition {label!r}; choose one of {known}") from None
