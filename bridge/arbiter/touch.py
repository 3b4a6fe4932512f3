"""Article 4: touching pieces, releasing them, castling and promotion, on a sensor board.

On a sensor board touching is lifting. Every lift by the player having the move is a touch of
the ply (``Ply``), unless it is not his to answer for: a lift after the end of the game, by the
last mover before he pressed the clock (his own piece), by the player who must re-establish a
position, a piece knocked off with others in one scan, or a piece taken off a square reported
displaced to put it right. A piece that reads empty and then the same again within the
*flicker* time is sensor noise, not a touch; a piece put back on its square is an adjustment,
legal only if j'adoube was announced (4.2), which a board cannot hear: the touch says so.

When a move is recorded, ``touch_breach`` judges the ply's touches against it: 4.3 (the first
own piece touched that can move must move; an opponent's piece touched that can be captured must
be captured), 4.4 (rook touched before king, then castling; 2018 4.4.1: king then rook obliges
castling on that side if legal; 4.4.3: castling there illegal, the king must move) and 4.5
(pieces that can neither move nor be captured oblige nothing); ``move_alerts`` adds 2018 4.4.4
(the piece that first touched the promotion square is the choice) and a clock not pressed
before the opponent moved (6.7). Touches read in one scan of the board (``bursts``) are
simultaneous: neither is first. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Final, NamedTuple

import chess
import msgspec

from bridge.arbiter import alerts
from bridge.arbiter.facts import TouchAction, TouchReported
from bridge.arbiter.rules import Edition

Squares = Sequence[chess.Piece | None]


class Touch(NamedTuple):
    """A piece lifted by the player having the move (a touch, on a sensor board)."""

    square: chess.Square
    piece: chess.Piece
    at: float


class Breach(msgspec.Struct, frozen=True, kw_only=True):
    """A broken Article 4 obligation: the piece that had to move or be captured."""

    kind: str
    article: str
    square: chess.Square
    piece: chess.Piece
    obligation: str
    message: str


def touch_breach(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    edition: Edition,
    simultaneous: float = 0.0,
) -> Breach | None:
    """Whether ``move`` breaks the obligation created by ``touches`` (Art. 4.3-4.5).

    ``board`` is the position before ``move``. Only the first own piece touched that has a legal
    move and the first opponent's piece touched that can be captured create obligations (4.5:
    touching pieces that can neither move nor be captured obliges nothing). Touches less than
    ``simultaneous`` seconds apart were read in one scan of the board: they count as made at the
    same time (1997 4.4 b), so neither is "first" and either may be moved.
    """
    me = board.turn
    castling = board.is_castling(move)
    if not castling:
        origin = move.from_square
        for touch in touches:
            if touch.square != origin:
                break
        else:
            return None  # only the moving piece was touched (the usual case)
        settled = {origin, _captured_square(board, move)}
        if all(t.square in settled for t in touches):
            return None  # only the moving piece and its victim were touched
    owns = [t for t in touches if t.piece.color == me and _can_move(board, t.square)]
    first = [t for t in owns if t.at <= owns[0].at + simultaneous]
    opp = next(
        (t for t in touches if t.piece.color != me and _can_be_captured(board, t.square)), None
    )
    if castling:
        breach = _rook_before_king(board, move, touches, edition, simultaneous)
        if breach is not None:
            return breach
    breach = _king_and_rook(board, move, touches, first, edition, simultaneous)
    if breach is not None:
        return breach
    own = next((t for t in first if t.square == move.from_square), first[0] if first else None)
    if (
        castling
        and own is not None
        and own.square in (move.from_square, _castling_rook(board, move))
    ):
        own = None  # castling moves both the king and the rook
    captured = _captured_square(board, move)
    if own is not None and opp is not None:
        if _legal_capture(board, own.square, opp.square):
            if move.from_square == own.square and captured == opp.square:
                return None
            article = edition.touch_both
            return _breach(board, own, article, f"capture on {chess.square_name(opp.square)}")
        # 4.3(b) / 4.3.3: the first piece touched; when that is unclear, the own piece.
        if own.at > opp.at + simultaneous:
            own = None
        else:
            opp = None
    if own is not None and move.from_square != own.square:
        return _breach(board, own, edition.touch_own, "move")
    if opp is not None and own is None and captured != opp.square:
        return _breach(board, opp, edition.touch_opponent, "capture")
    return None


def obliges_nothing(board: chess.Board, move: chess.Move, touches: Sequence[Touch]) -> bool:
    """True when ``touch_breach`` would find no breach without asking it (the usual ply).

    The move is a king's step (not castling, which has obligations of its own) with only the
    king touched; or it is not the king's, and every touch is of the moving piece on its
    square, of a piece of the side to move on a square where the game has none of its pieces (a
    slide's lifts from the squares it crossed: such a piece cannot be moved), or of an
    opponent's piece on the target square, which the move captures. Only the moving piece
    obliges, and it moved; the only opponent's piece touched that can be captured is the one it
    captured.
    """
    origin = move.from_square
    me = board.turn
    if board.kings & chess.BB_SQUARES[origin]:
        # A king's step touched alone (``touch_breach``'s first test); castling - two files, or
        # onto its own rook - has obligations of its own.
        target = move.to_square
        return (
            abs((origin & 7) - (target & 7)) <= 1
            and not board.rooks & board.occupied_co[me] & chess.BB_SQUARES[target]
            and all(touch.square == origin for touch in touches)
        )
    for touch in touches:
        square = touch.square
        if square == origin:
            continue  # the usual ply: only the moving piece was touched
        if touch.piece.color == me:
            if board.occupied_co[me] & chess.BB_SQUARES[square]:
                return False
        elif square != move.to_square or not board.occupied_co[not me] & chess.BB_SQUARES[square]:
            return False
    return True


def _rook_before_king(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    edition: Edition,
    simultaneous: float,
) -> Breach | None:
    """4.4(a) / 4.4.2: a rook deliberately touched, then the king, then castling on that side."""
    rook = _castling_rook(board, move)
    king_touch = next((t for t in touches if t.square == move.from_square), None)
    rook_touch = next((t for t in touches if t.square == rook), None)
    if rook_touch is None or king_touch is None or rook_touch.at >= king_touch.at - simultaneous:
        return None
    return Breach(
        kind="castling_rook_first",
        article=edition.castling_rook_first,
        square=rook,
        piece=rook_touch.piece,
        obligation="move",
        message=(
            f"the rook on {chess.square_name(rook)} was touched before the king, then "
            f"the player castled: castling is not allowed on that side on this move "
            f"and the rook had to move (Art. {edition.castling_rook_first})"
        ),
    )


def _king_and_rook(
    board: chess.Board,
    move: chess.Move,
    touches: Sequence[Touch],
    first: Sequence[Touch],
    edition: Edition,
    simultaneous: float,
) -> Breach | None:
    """The king touched first (alone or with a rook), then a rook: 4.4(b), 4.4.1, 4.4.3.

    2018 4.4.1: castling on that rook's side is legal, so the player must castle there. 1997
    4.4(b) and 2018 4.4.3: castling there is illegal, so the king must move (castling on the
    other side included). The 1997 Laws do not oblige castling. A king that has lost both
    castling rights is no castling at all: the king touched first obliges under 4.3.
    """
    king = board.king(board.turn)
    king_touch = next((t for t in first if t.square == king), None)
    if king is None or king_touch is None:
        return None  # another piece was touched first: 4.3 governs
    if not board.has_castling_rights(board.turn):
        return None  # a king that can never castle: touching it is 4.3, not castling (4.4)
    rank = chess.square_rank(king)
    rook_touch = next(
        (
            t
            for t in touches
            if t.piece == chess.Piece(chess.ROOK, board.turn)
            and t.at >= king_touch.at - simultaneous
            and chess.square_rank(t.square) == rank
            and chess.square_file(t.square) in (0, 7)
        ),
        None,
    )
    if rook_touch is None:
        return None
    kingside = chess.square_file(rook_touch.square) == 7
    castle = chess.Move(king, chess.square(6 if kingside else 2, rank))
    side = f"with the rook on {chess.square_name(rook_touch.square)}"
    if board.is_legal(castle):
        article = edition.castle_king_and_rook
        if article is None or move == castle:
            return None
        obligation = f"castle {side}"
        message = (
            f"the king and then the rook on {chess.square_name(rook_touch.square)} were touched "
            f"and castling {side} was legal: the player had to castle on that side "
            f"(Art. {article}), unless j'adoube was announced"
        )
    else:
        if move.from_square == king:
            return None
        article = edition.castling_side_illegal
        obligation = "move the king"
        message = (
            f"the king and the rook on {chess.square_name(rook_touch.square)} were touched and "
            f"castling {side} is illegal: the king had to move (Art. {article}), unless "
            "j'adoube was announced"
        )
    return Breach(
        kind="touch_move",
        article=article,
        square=king,
        piece=king_touch.piece,
        obligation=obligation,
        message=message,
    )


def _breach(board: chess.Board, touch: Touch, article: str, obligation: str) -> Breach:
    whose = "own" if touch.piece.color == board.turn else "opponent's"
    verb = "moved" if obligation == "move" else ("captured" if obligation == "capture" else "used")
    had = "move" if obligation == "move" else f"be {verb}"
    name = chess.piece_name(touch.piece.piece_type)
    square = chess.square_name(touch.square)
    return Breach(
        kind="touch_move",
        article=article,
        square=touch.square,
        piece=touch.piece,
        obligation=obligation,
        message=(
            f"the {whose} {name} on {square} was touched first and could be {verb}, but another "
            f"move was made: the {name} had to {had} (Art. {article}), unless j'adoube was "
            "announced"
        ),
    )


def _can_move(board: chess.Board, square: chess.Square) -> bool:
    """Whether the piece on ``square`` has a legal move (false if it is not the mover's)."""
    return any(board.generate_legal_moves(from_mask=chess.BB_SQUARES[square]))


def _can_be_captured(board: chess.Board, square: chess.Square) -> bool:
    mask = chess.BB_SQUARES[square]
    if any(True for _ in board.generate_legal_moves(to_mask=mask)):
        return True
    ep = board.ep_square
    return ep is not None and board.has_legal_en_passant() and _ep_victim(board) == square


def _legal_capture(board: chess.Board, origin: chess.Square, target: chess.Square) -> bool:
    if any(
        True for _ in board.generate_legal_moves(chess.BB_SQUARES[origin], chess.BB_SQUARES[target])
    ):
        return True
    ep = board.ep_square
    return ep is not None and _ep_victim(board) == target and board.is_legal(chess.Move(origin, ep))


def _ep_victim(board: chess.Board) -> chess.Square | None:
    ep = board.ep_square
    if ep is None:
        return None
    return ep + (-8 if board.turn == chess.WHITE else 8)


def _captured_square(board: chess.Board, move: chess.Move) -> chess.Square | None:
    if board.is_en_passant(move):
        return _ep_victim(board)
    if board.piece_at(move.to_square) is not None and not board.is_castling(move):
        return move.to_square
    return None


def _castling_rook(board: chess.Board, move: chess.Move) -> chess.Square:
    rank = chess.square_rank(move.from_square)
    kingside = chess.square_file(move.to_square) > chess.square_file(move.from_square)
    return chess.square(7 if kingside else 0, rank)


class Ply(msgspec.Struct):
    """What the hands did on the board since the last recorded move."""

    squares: list[chess.Square] = msgspec.field(default_factory=list)
    """Every square lifted from or placed on, in order."""
    touches: list[Touch] = msgspec.field(default_factory=list)
    lifted: dict[chess.Square, tuple[chess.Piece, float]] = msgspec.field(default_factory=dict)
    """The pieces in the hand: lifted and not put back, with when."""
    placed: dict[chess.Square, float] = msgspec.field(default_factory=dict)
    """When a piece was last put on each square (the order of two moves in one turn)."""
    promoted: dict[chess.Square, chess.PieceType] = msgspec.field(default_factory=dict)
    """The first new piece put on each promotion square (2018 4.4.4)."""
    castling_king: tuple[chess.Square, float, float | None] | None = None
    """The king put on its castling square while castling there was legal (2018 4.6.2): the
    square, when it was put there, and when it was lifted off again."""

    def lift(
        self,
        square: chess.Square,
        piece: chess.Piece,
        now: float,
        at: float,
        *,
        board: chess.Board,
        excuse: Excuse | None,
    ) -> TouchReported:
        """A piece lifted off ``square``: a touch of the player having the move, unless
        ``excuse`` says why it is not, or it is the other player's own piece that the player
        having the move cannot capture (his hand: two hands on the board, binding nobody)."""
        self.squares.append(square)
        self.lifted[square] = (piece, now)
        king = self.castling_king
        if king is not None and king[0] == square and king[2] is None:
            self.castling_king = (square, king[1], now)
        turn = board.turn
        hand: chess.Color | None = piece.color
        if excuse is not None:
            meaning, hand = excuse
        elif piece.color == turn:
            self.touches.append(Touch(square=square, piece=piece, at=now))
            meaning = _OWN_TOUCHED[piece.piece_type]
        elif board.piece_at(square) == piece and _can_be_captured(board, square):
            # His touch (the victim lifted first) or its owner's hand: what follows tells; at
            # the move, a piece neither captured nor put back was the other hand's.
            self.touches.append(Touch(square=square, piece=piece, at=now))
            meaning = _OPPONENTS_TOUCHED[piece.piece_type]
            hand = None
        else:
            meaning = _theirs(piece)
        return TouchReported(
            action=TouchAction.LIFT,
            square=square,
            piece=piece,
            meaning=meaning,
            ply=board.ply() + 1,
            at=at,
            hand=hand,
        )

    def place(
        self,
        square: chess.Square,
        old: chess.Piece | None,
        new: chess.Piece,
        now: float,
        at: float,
        *,
        board: chess.Board,
        game: Squares,
        flicker: float,
        edition: Edition,
    ) -> TouchReported:
        """A piece put on ``square``: a place, a flicker, or a piece put back."""
        self.squares.append(square)
        lifted = self.lifted.pop(square, None)
        hand: chess.Color | None = new.color
        if lifted is not None and lifted[0] == new:
            held = now - lifted[1]
            if held <= flicker:
                since = lifted[1]  # only that lift: an earlier touch of the square still counts
                self.touches = [t for t in self.touches if t.square != square or t.at < since]
                meaning = f"{name(new)} read again after {held:.2f} s: sensor flicker, not a touch"
            else:
                meaning = (
                    f"{name(new)} put back on its square: an adjustment, legal only if j'adoube "
                    f"was announced (Art. {edition.adjust})"
                )
            if new.color != board.turn and game[square] == new and _can_be_captured(board, square):
                hand = None  # the player having the move's, or its owner's
        else:
            meaning = f"{name(new)} placed"
            if old is not None:
                meaning += f", replacing the {name(old)}"
            self.placed[square] = now
            if self._is_new_promotion_piece(square, new, game):
                self.promoted[square] = new.piece_type
            if self.castling_king is None and _castles_to(board, new, square) is not None:
                self.castling_king = (square, now, None)
        return TouchReported(
            action=TouchAction.PLACE,
            square=square,
            piece=new,
            meaning=meaning,
            ply=board.ply() + 1,
            at=at,
            hand=hand,
        )

    def others(
        self, changed: Collection[chess.Square], game: Squares, physical: Squares
    ) -> dict[chess.Square, tuple[chess.Piece, float]]:
        """The pieces lifted from their squares in the game (``game``) that are neither part of
        the move being recorded (``changed``: the squares it changes) nor back on their squares.

        One hand moves one piece at a time (4.1): a piece still off its square, or replaced,
        when the player's move is made was lifted by the other hand - the opponent reaching for
        his reply (two hands on the board). Its touch binds nobody.
        """
        lifts = [(t.square, t.piece, t.at) for t in self.touches]
        lifts += [(sq, piece, at) for sq, (piece, at) in self.lifted.items()]
        return {
            sq: (piece, at)
            for sq, piece, at in lifts
            if sq not in changed and game[sq] == piece and physical[sq] != piece
        }

    def of_mover(self, others: Mapping[chess.Square, tuple[chess.Piece, float]]) -> Ply:
        """This ply without what ``others`` were lifted by: the mover's own hand's record."""
        if not others:
            return self
        return msgspec.structs.replace(
            self,
            squares=[sq for sq in self.squares if sq not in others],
            touches=[
                t for t in self.touches if t.square not in others or t.at < others[t.square][1]
            ],
        )

    @classmethod
    def carried(cls, held: Mapping[chess.Square, tuple[chess.Piece, float]]) -> Ply:
        """The next ply, begun by pieces the other hand already holds (lifted, not touches:
        they were lifted before it was their owner's move)."""
        return cls(squares=list(held), lifted=dict(held))

    def forget(self, squares: set[chess.Square], since: float) -> None:
        """The touches of ``squares`` from ``since`` on were not touches (a knock)."""
        self.touches = [t for t in self.touches if t.square not in squares or t.at < since]

    def _is_new_promotion_piece(
        self, square: chess.Square, piece: chess.Piece, game: Squares
    ) -> bool:
        """A piece from off the board put on a square where a pawn of its colour may promote."""
        last, seventh = (7, 6) if piece.color == chess.WHITE else (0, 1)
        if piece.piece_type in (chess.PAWN, chess.KING) or chess.square_rank(square) != last:
            return False
        if square in self.promoted or any(p == piece for p, _ in self.lifted.values()):
            return False  # not the first, or a piece of the board in the hand
        pawn = chess.Piece(chess.PAWN, piece.color)
        file = chess.square_file(square)
        return any(
            game[chess.square(f, seventh)] == pawn for f in (file - 1, file, file + 1) if 0 <= f < 8
        )


def _castles_to(board: chess.Board, piece: chess.Piece, square: chess.Square) -> chess.Move | None:
    """The legal castling that puts ``piece``, the king of the side to move, on ``square``."""
    king = board.king(board.turn)
    if piece != chess.Piece(chess.KING, board.turn) or king is None:
        return None
    castling = chess.Move(king, square)
    return castling if board.is_castling(castling) and board.is_legal(castling) else None


def castling_king_moved_on(
    board: chess.Board, move: chess.Move, ply: Ply, edition: Edition, dwell: float
) -> alerts.Alert | None:
    """The king released on its castling square while castling was legal, then ``move``.

    Released: it rested there at least ``dwell`` seconds before it was lifted again (a king
    seen there for a scan or so may have been sliding). Castling on that side was then the only
    move allowed (2018 4.6.2; 1997 4.7: the king was released as part of a legal move).
    """
    placed = ply.castling_king
    if placed is None or placed[2] is None or placed[2] - placed[1] < dwell:
        return None
    square = placed[0]
    castling = _castles_to(board, chess.Piece(chess.KING, board.turn), square)
    if castling is None or move == castling:
        return None
    rook = _castling_rook(board, castling)
    return alerts.castling_king_moved_on(edition, castling, rook, move, board.turn, board.ply() + 1)


def move_alerts(
    board: chess.Board,
    move: chess.Move,
    ply: Ply,
    late: chess.Color | None,
    edition: Edition,
    simultaneous: float,
    dwell: float,
) -> list[alerts.Alert]:
    """The Article 4 and 6.7 alerts of ``move``, about to be made on ``board`` after ``ply``.

    ``late``: the player whose press was awaited when the move was made (his opponent's move
    then means he did not press). ``dwell``: how long a piece rests on a square to count as
    released there.
    """
    color = board.turn
    number = board.ply() + 1
    raised: list[alerts.Alert] = []
    # The king released on its castling square: what it obliged (castling) is the one alert
    # about the king; a touch of it obliged less.
    released = castling_king_moved_on(board, move, ply, edition, dwell)
    if not obliges_nothing(board, move, ply.touches):
        breach = touch_breach(board, move, ply.touches, edition, simultaneous)
        if breach is not None and (released is None or breach.square != board.king(color)):
            raised.append(alerts.touch_breach(breach, move, color, number))
    if released is not None:
        raised.append(released)
    if move.promotion:
        chosen = ply.promoted.get(move.to_square)
        if chosen is not None and chosen != move.promotion:
            alert = alerts.promotion_changed(edition, move, chosen, color, number)
            if alert is not None:
                raised.append(alert)
    if late is not None and late != color:
        raised.append(alerts.clock_not_pressed(edition, late, number - 1))
    return raised


def revision_alert(
    board: chess.Board, first: chess.Move, move: chess.Move, edition: Edition
) -> alerts.Alert | None:
    """The alert of ``move`` made on ``board`` instead of ``first``, released for the same ply."""
    color = board.turn
    number = board.ply() + 1
    if (first.from_square, first.to_square) == (move.from_square, move.to_square):
        # The same pawn, another piece: 2018 4.4.4 fixes the first one; 1997 does not.
        assert first.promotion is not None
        return alerts.promotion_changed(edition, move, first.promotion, color, number)
    castling = board.is_castling(move)
    return alerts.revision(edition, first, move, color, number, castling=castling)


class Excuse(NamedTuple):
    """Why a lift is not a touch of the player having the move, and whose hand it was."""

    meaning: str
    hand: chess.Color | None


def excuse(
    square: chess.Square,
    piece: chess.Piece,
    board: chess.Board,
    game: Squares,
    *,
    over: bool,
    awaiting: chess.Color | None,
    offender: chess.Color | None,
    knocked: bool,
    displaced: Collection[chess.Square],
) -> Excuse | None:
    """Why a lift of ``piece`` off ``square`` is not a touch of the player having the move.

    ``None`` when it is one. Not a touch: a lift after the end of the game (``over``), by the
    last mover before his press (``awaiting``: whose press is awaited), by the player who must
    re-establish the position after his illegal move (``offender``), a piece ``knocked`` off
    with others in one scan, or a piece taken off a square reported ``displaced`` to put it
    right.
    """
    turn = board.turn
    kind = chess.piece_name(piece.piece_type)
    if over:
        return Excuse(f"{kind} lifted after the end of the game", piece.color)
    if piece.color != turn and awaiting == piece.color:
        return Excuse(
            f"{kind} lifted by the player who just moved, before pressing the clock", piece.color
        )
    if piece.color == offender != turn:
        return Excuse(f"{kind} lifted by the player who must re-establish the position", offender)
    if knocked:
        return Excuse(
            f"{name(piece)} knocked off its square with others in one scan: not a touch", None
        )
    if square in displaced and game[square] != piece:
        return Excuse(
            f"{name(piece)} lifted from a square reported displaced: putting it right", None
        )
    return None


def _theirs(piece: chess.Piece) -> str:
    """The meaning of a lift by the player not having the move of one of his own pieces."""
    owner = _color(piece.color).capitalize()
    return (
        f"{name(piece)} lifted by {owner}, who does not have the move: his reply begun (two "
        "hands on the board); it binds nobody (Art. 4.3 binds the player having the move)"
    )


def name(piece: chess.Piece) -> str:
    """``white knight``."""
    return f"{_color(piece.color)} {chess.piece_name(piece.piece_type)}"


def _color(color: chess.Color) -> str:
    return "white" if color == chess.WHITE else "black"


_KINDS: Final = ("", *(chess.piece_name(pt) for pt in chess.PIECE_TYPES))
_OWN_TOUCHED: Final = tuple(f"own {kind} touched by the player having the move" for kind in _KINDS)
_OPPONENTS_TOUCHED: Final = tuple(
    f"opponent's {kind} touched by the player having the move" for kind in _KINDS
)
