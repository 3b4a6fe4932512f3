"""What a legal move changes on the board, and which lifts and places explain a legal move.

The engine keeps the set of squares where the physical board differs from the game position,
updated in O(1) on every sensor event. A legal move changes two squares (three for en passant,
four for castling), so only when two to four squares differ is there anything to look for, and
then the candidates are read off those squares and python-chess confirms legality: no move
generation on the hot path (the snapshot matchers of other bridges try every legal move after
every change). Pure: no I/O.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Sequence
from typing import Final

import chess

Change = tuple[chess.Square, chess.Piece | None]
"""A square and what stands on it after a move (``None`` = empty)."""
Table = tuple[tuple[int, ...], ...]
"""``[origin][square]``: a number for each pair of squares."""


def move_changes(board: chess.Board, move: chess.Move) -> tuple[Change, ...]:
    """The squares a legal ``move`` changes, with what stands on them afterwards.

    Read off the bitboards (python-chess's ``piece_at``, ``is_castling`` and ``is_en_passant``
    in one pass); the pieces are the shared ones of ``PIECES``.
    """
    origin, target = move.from_square, move.to_square
    here = _BB[origin]
    if not board.occupied & here:
        raise AssertionError(f"no piece on {chess.square_name(origin)} in {board.fen()}")
    color = bool(board.occupied_co[chess.WHITE] & here)
    kinds = PIECES[color]
    if board.kings & here and (
        abs((origin & 7) - (target & 7)) > 1
        or board.rooks & board.occupied_co[board.turn] & _BB[target]
    ):
        # Castling. python-chess encodes standard castling as the king's two-square move.
        rank = origin & ~7
        if target & 7 > origin & 7:  # king's side
            rook_from, king_to, rook_to = rank + 7, rank + 6, rank + 5
        else:
            rook_from, king_to, rook_to = rank, rank + 2, rank + 3
        return (
            (origin, None),
            (rook_from, None),
            (king_to, kinds[chess.KING]),
            (rook_to, kinds[chess.ROOK]),
        )
    # The piece's kind read off its bitboard.
    if move.promotion:
        placed = kinds[move.promotion]
    elif board.pawns & here:
        placed = kinds[chess.PAWN]
    elif board.knights & here:
        placed = kinds[chess.KNIGHT]
    elif board.bishops & here:
        placed = kinds[chess.BISHOP]
    elif board.rooks & here:
        placed = kinds[chess.ROOK]
    else:
        placed = kinds[chess.QUEEN if board.queens & here else chess.KING]
    if (
        target == board.ep_square
        and board.pawns & here
        and abs(target - origin) in (7, 9)
        and not board.occupied & _BB[target]
    ):
        victim = target + (-8 if color == chess.WHITE else 8)
        return ((origin, None), (target, placed), (victim, None))
    return ((origin, None), (target, placed))


PIECES: Final = tuple(
    tuple(chess.Piece(pt, color) for pt in (chess.PAWN, *chess.PIECE_TYPES))
    for color in (chess.BLACK, chess.WHITE)
)
"""``PIECES[color][piece_type]`` (index 0 of each colour unused): one shared ``chess.Piece`` of
each kind. Compared by identity first, they spare python-chess's ``__eq__`` (a Python call);
nothing changes a piece."""


def piece_of(piece: chess.Piece) -> chess.Piece:
    """The shared piece equal to ``piece``."""
    return PIECES[piece.color][piece.piece_type]


def squares_of(board: chess.BaseBoard) -> list[chess.Piece | None]:
    """What stands on each square of ``board`` (a1 first), as shared pieces."""
    return [None if (piece := board.piece_at(sq)) is None else piece_of(piece) for sq in _ALL]


_ALL: Final = range(64)


def san_body(board: chess.Board, move: chess.Move) -> str:
    """``board.san(move)`` without its ``+`` or ``#``, for a legal ``move`` (before it is made).

    python-chess disambiguates by generating the legal moves of the other pieces of the same
    kind to the target square, which costs a king-safety analysis on every move. A piece that no
    other piece of its kind attacks the target square from (one table lookup) needs no
    disambiguation: only then is the SAN written here, else python-chess writes it.
    """
    origin, target = move.from_square, move.to_square
    here = _BB[origin]
    if board.pawns & here:
        # A pawn that changes file captures (en passant included).
        if origin & 7 != target & 7:
            san = _FILES[origin & 7] + "x" + _NAMES[target]
        else:
            san = _NAMES[target]
        if move.promotion:
            san += _PROMOTIONS[move.promotion]
        return san
    if board.kings & here:
        if abs((origin & 7) - (target & 7)) > 1 or (
            board.rooks & board.occupied_co[board.turn] & _BB[target]
        ):
            return "O-O-O" if target & 7 < origin & 7 else "O-O"
        kind: chess.PieceType = chess.KING
    elif not board.occupied & here:
        return board.san(move).rstrip("+#")
    elif board.knights & here:
        kind = chess.KNIGHT
    elif board.bishops & here:
        kind = chess.BISHOP
    elif board.rooks & here:
        kind = chess.ROOK
    else:
        kind = chess.QUEEN
    return _piece_san(board, move, kind, here)


def _piece_san(board: chess.Board, move: chess.Move, kind: chess.PieceType, here: int) -> str:
    """The SAN body of a legal move of the knight, bishop, rook, queen or king (not castling)
    of ``kind`` on ``here`` (its origin's bitboard)."""
    target = move.to_square
    if kind != chess.KING:
        # The pieces of the side to move of the mover's kind that attack the target: a piece
        # attacks a square exactly when the same piece on that square attacks it.
        # A slider with no other of its kind on its lines through the target (the usual case)
        # needs no attack table.
        ours = board.occupied_co[board.turn] & ~here
        occupied = board.occupied
        if kind == chess.KNIGHT:
            others = _KNIGHT_ATTACKS[target] & board.knights & ours
        elif kind == chess.BISHOP:
            others = _DIAGONALS[target] & board.bishops & ours
            if others:
                others &= _DIAG_ATTACKS[target][_DIAG_MASKS[target] & occupied]
        elif kind == chess.ROOK:
            others = _ORTHOGONALS[target] & board.rooks & ours
            if others:
                others &= (
                    _RANK_ATTACKS[target][_RANK_MASKS[target] & occupied]
                    | _FILE_ATTACKS[target][_FILE_MASKS[target] & occupied]
                )
        else:
            others = _LINES[target] & board.queens & ours
            if others:
                others &= (
                    _DIAG_ATTACKS[target][_DIAG_MASKS[target] & occupied]
                    | _RANK_ATTACKS[target][_RANK_MASKS[target] & occupied]
                    | _FILE_ATTACKS[target][_FILE_MASKS[target] & occupied]
                )
        if others:
            return board.san(move).rstrip("+#")  # another piece of the kind may go there too
    capture = "x" if board.occupied_co[not board.turn] & _BB[target] else ""
    return _LETTERS[kind] + capture + _NAMES[target]


_FILES: Final = chess.FILE_NAMES
_NAMES: Final = chess.SQUARE_NAMES
_PROMOTIONS: Final = {pt: "=" + chess.piece_symbol(pt).upper() for pt in chess.PIECE_TYPES}
_LETTERS: Final = {pt: chess.piece_symbol(pt).upper() for pt in chess.PIECE_TYPES}


def play(board: chess.Board, move: chess.Move) -> tuple[str, tuple[Change, ...]]:
    """Make the legal ``move`` on ``board`` (``board.push``); return its ``san_body`` and the
    squares it changes (``move_changes``), with the moving piece's kind read once for all three.

    python-chess's push makes about a dozen Python calls (a piece read square by square, castling
    and Chess960 encodings, the fifty-move test). The usual move of a legal game - a pawn (not
    en passant nor a promotion), knight, bishop, rook, queen or king (not castling) of the side
    to move, capturing no king, on a standard board with moves already on its stack - changes
    what python-chess's does, in the same way, here (each bitboard changed once, the rights
    only when the move touches a square of them or a king moves); anything else is
    ``san_body``, ``move_changes`` and python-chess's own push. The push is written out here,
    not in a function of its own: it is on every recorded move, and reads what the tests above
    read already.
    """
    origin, target = move.from_square, move.to_square
    here, there = _BB[origin], _BB[target]
    turn = board.turn
    occupied_co = board.occupied_co
    ours = occupied_co[turn]
    if (
        type(board) is not chess.Board
        or not ours & here
        or ours & there  # a king onto its own rook: castling, as Chess960 writes it
        or board.kings & there
        or move.promotion
        or move.drop
        or not board._stack
        or board.chess960
    ):
        return _play_otherwise(board, move)
    pawns = board.pawns
    if pawns & here:
        if target == board.ep_square:
            return _play_otherwise(board, move)  # en passant
        kind: chess.PieceType = chess.PAWN
        # A pawn that changes file captures.
        san = (
            _FILES[origin & 7] + "x" + _NAMES[target]
            if origin & 7 != target & 7
            else _NAMES[target]
        )
    else:
        if board.knights & here:
            kind = chess.KNIGHT
        elif board.bishops & here:
            kind = chess.BISHOP
        elif board.rooks & here:
            kind = chess.ROOK
        elif board.queens & here:
            kind = chess.QUEEN
        elif abs((origin & 7) - (target & 7)) > 1:
            return _play_otherwise(board, move)  # castling
        else:
            kind = chess.KING
        san = _piece_san(board, move, kind, here)
    # python-chess's push of the usual move.
    board._stack.append(_State(board))
    board.move_stack.append(move)
    moved = here | there
    them = occupied_co[not turn]
    if kind == chess.PAWN or them & there:  # a pawn move or a capture
        board.halfmove_clock = 0
    else:
        board.halfmove_clock += 1
    if turn == chess.BLACK:
        board.fullmove_number += 1
    # A victim leaves the target square (only an opponent's piece can stand there).
    if them & there:
        if pawns & there:
            board.pawns = pawns = pawns ^ there
        elif board.knights & there:
            board.knights ^= there
        elif board.bishops & there:
            board.bishops ^= there
        elif board.rooks & there:
            board.rooks ^= there
        else:
            board.queens ^= there
        occupied_co[not turn] = them ^ there
    # The piece goes from its square to the target: one toggle of both on its kind's bitboard.
    ep = None
    if kind == chess.PAWN:
        board.pawns = pawns ^ moved
        step = target - origin
        if step == 16 and origin >> 3 == 1:
            ep = origin + 8
        elif step == -16 and origin >> 3 == 6:
            ep = origin - 8
    elif kind == chess.KNIGHT:
        board.knights ^= moved
    elif kind == chess.BISHOP:
        board.bishops ^= moved
    elif kind == chess.ROOK:
        board.rooks ^= moved
    elif kind == chess.QUEEN:
        board.queens ^= moved
    else:
        board.kings ^= moved
    board.ep_square = ep
    board.occupied = (board.occupied ^ here) | there
    occupied_co[turn] = ours ^ moved
    promoted = board.promoted
    if promoted & moved:  # a promoted piece moves or is taken (rare)
        board.promoted = (promoted & ~moved) | (there if promoted & here else 0)
    rights = board.castling_rights
    if rights:
        if kind == chess.KING:  # a king that moves gives up castling on both sides
            board.castling_rights = rights & ~moved & ~_BACK_RANKS[turn]
        elif rights & moved:
            board.castling_rights = rights & ~moved
    board.turn = not turn
    return san, ((origin, None), (target, PIECES[turn][kind]))


def _play_otherwise(board: chess.Board, move: chess.Move) -> tuple[str, tuple[Change, ...]]:
    """``play`` for a move that is not the usual one: python-chess's push."""
    san = san_body(board, move)
    changes = move_changes(board, move)
    board.push(move)
    return san, changes


class _State(chess._BoardState):
    """python-chess's record of the position before a push (``Board._stack``), its fields in
    slots: made on every recorded move, it costs about half as much as an instance dict."""

    __slots__ = (
        "bishops",
        "castling_rights",
        "ep_square",
        "fullmove_number",
        "halfmove_clock",
        "kings",
        "knights",
        "occupied",
        "occupied_b",
        "occupied_w",
        "pawns",
        "promoted",
        "queens",
        "rooks",
        "turn",
    )


_BACK_RANKS: Final = (chess.BB_RANK_8, chess.BB_RANK_1)
"""``[color]``: each side's first rank (black first: ``chess.BLACK`` is 0)."""


def push(board: chess.Board, move: chess.Move) -> None:
    """``board.push(move)`` for a legal ``move``: ``play`` without its answers."""
    play(board, move)


def in_check(board: chess.Board) -> bool:
    """``board.is_check()``: python-chess's test written in one call (it makes four)."""
    turn = board.turn
    kings = board.occupied_co[turn] & board.kings & ~board.promoted
    if not kings:
        return False
    king = kings.bit_length() - 1
    them = board.occupied_co[not turn]
    if (
        (_KING_ATTACKS[king] & board.kings)
        | (_KNIGHT_ATTACKS[king] & board.knights)
        | (_PAWN_ATTACKS[turn][king] & board.pawns)
    ) & them:
        return True
    # A slider checks along a line through the king with nothing between: the attack tables
    # are read only for the kinds of slider that stand on such a line.
    occupied = board.occupied
    rooks = (board.queens | board.rooks) & them & _ORTHOGONALS[king]
    if rooks and (
        (_RANK_ATTACKS[king][_RANK_MASKS[king] & occupied] & rooks)
        or (_FILE_ATTACKS[king][_FILE_MASKS[king] & occupied] & rooks)
    ):
        return True
    bishops = (board.queens | board.bishops) & them & _DIAGONALS[king]
    return bool(bishops and _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied] & bishops)


def on_king_line(board: chess.Board, square: chess.Square) -> bool:
    """Whether ``square`` is on a rank, file or diagonal through the king of the side to move
    (a piece elsewhere cannot be pinned); true when that king is missing or not alone."""
    kings = board.occupied_co[board.turn] & board.kings & ~board.promoted
    if not kings or kings & (kings - 1):
        return True
    return bool(_LINES[kings.bit_length() - 1] & _BB[square])


def has_legal_move(board: chess.Board, check: bool) -> bool:
    """``any(board.generate_legal_moves())``, answered without a search in most positions.

    When the side to move is not in ``check``, a piece on no line through its king cannot be
    pinned, so any move it can make is legal: a pawn of those that can step forward, or a knight,
    bishop, rook or queen of those with a square to go to, settles it. In check or not, a step of
    a lone king to a square that no piece of the opponent attacks with the king off its square
    is legal (``is_safe``). Otherwise python-chess generates the legal moves.
    """
    turn = board.turn
    ours = board.occupied_co[turn]
    kings = ours & board.kings & ~board.promoted
    if kings:
        king = kings.bit_length() - 1
        if not check:
            free = ours & ~_LINES[king] & ~board.kings
            pawns = free & board.pawns
            ahead = (pawns << 8) & chess.BB_ALL if turn == chess.WHITE else pawns >> 8
            if ahead & ~board.occupied:
                return True
            pieces = free & ~board.pawns
            while pieces:
                square = pieces.bit_length() - 1
                if board.attacks_mask(square) & ~ours:
                    return True
                pieces ^= _BB[square]
        if kings == _BB[king]:
            steps = _KING_ATTACKS[king] & ~ours
            occupied = board.occupied ^ kings
            while steps:
                square = steps.bit_length() - 1
                if not board.attackers_mask(not turn, square, occupied):
                    return True
                steps ^= _BB[square]
    return any(True for _ in board.generate_legal_moves())


_LINES: Final = tuple(
    chess.BB_RANK_ATTACKS[sq][0] | chess.BB_FILE_ATTACKS[sq][0] | chess.BB_DIAG_ATTACKS[sq][0]
    for sq in chess.SQUARES
)
"""Every square on a rank, file or diagonal through each square (a piece there may be pinned)."""
_DIAGONALS: Final = tuple(chess.BB_DIAG_ATTACKS[sq][0] for sq in chess.SQUARES)
"""Every square on a diagonal through each square."""
_ORTHOGONALS: Final = tuple(
    chess.BB_RANK_ATTACKS[sq][0] | chess.BB_FILE_ATTACKS[sq][0] for sq in chess.SQUARES
)
"""Every square on the rank or file through each square."""


def fen(board: chess.Board, ranks: Sequence[str]) -> str:
    """``board.fen()``, with the placement made of the eight ``rank_text`` strings (rank 1 first).

    The engine keeps those strings and redraws only the ranks a move changes: much cheaper than
    python-chess's ``board_fen()``, which reads all 64 squares. The en passant square is written
    when a legal capture there exists, as python-chess does; a square no pawn of the side to move
    attacks is settled without its search.
    """
    turn = board.turn
    ep = board.ep_square
    if ep is not None and (
        # No pawn of the side to move attacks the square (after most double steps): python-chess
        # would find no capture there, and searching for one costs more than the rest of the FEN.
        not board.pawns & board.occupied_co[turn] & _PAWN_ATTACKS[not turn][ep]
        or not board.has_legal_en_passant()
    ):
        ep = None
    castling = _CASTLING_CACHE.get(board.castling_rights)
    if castling is None:
        castling = _castling_text(board)
    placement = "/".join(ranks[::-1])
    side = "w" if turn else "b"
    square = "-" if ep is None else _NAMES[ep]
    return f"{placement} {side} {castling} {square} {board.halfmove_clock} {board.fullmove_number}"


def _castling_text(board: chess.Board) -> str:
    """``board.castling_xfen()``, cached by the castling rights (they rarely change)."""
    rights = board.castling_rights
    text = _CASTLING_CACHE.get(rights)
    if text is None:
        text = _CASTLING_CACHE[rights] = board.castling_xfen()
    return text


_CASTLING_CACHE: dict[int, str] = {}


def rank_text(squares: Sequence[chess.Piece | None], rank: int) -> str:
    """One rank of a FEN placement (``rank`` 0 is rank 1)."""
    row = ""
    empty = 0
    for piece in squares[rank * 8 : rank * 8 + 8]:
        if piece is None:
            empty += 1
        elif empty:
            row += _DIGITS[empty] + FEN_LETTERS[piece.color][piece.piece_type]
            empty = 0
        else:
            row += FEN_LETTERS[piece.color][piece.piece_type]
    return row + _DIGITS[empty] if empty else row


FEN_LETTERS: Final = (
    ("", *(chess.piece_symbol(pt) for pt in chess.PIECE_TYPES)),
    ("", *(chess.piece_symbol(pt).upper() for pt in chess.PIECE_TYPES)),
)
"""``[color][piece_type]``: a piece's letter in a FEN (black first: ``chess.BLACK`` is 0)."""
_DIGITS: Final = tuple(str(n) for n in range(9))


def letters_of(squares: Sequence[chess.Piece | None]) -> list[str]:
    """Each square's letter in a FEN placement, ``""`` where it is empty (for ``rank_of``)."""
    return [letter(piece) for piece in squares]


def letter(piece: chess.Piece | None) -> str:
    """A piece's letter in a FEN placement; ``""`` for an empty square."""
    return "" if piece is None else FEN_LETTERS[piece.color][piece.piece_type]


def rank_of(letters: Sequence[str], occupied: int, rank: int) -> str:
    """``rank_text`` of a position given by its ``letters`` (``letters_of``) and its occupied
    squares (a bitboard): one format of the rank's eight letters, no loop over its squares.

    The format is chosen by the rank's occupied squares: a ``%s`` for each square (an empty
    one's letter is ``""``) and the count of each run of empty squares after its last one.
    """
    start = rank * 8
    return _RANK_FORMATS[(occupied >> start) & 0xFF] % tuple(letters[start : start + 8])


def redraw(
    ranks: list[str],
    letters: Sequence[str],
    occupied: int,
    origin: chess.Square,
    target: chess.Square,
) -> None:
    """``rank_of`` for the ranks of ``origin`` and ``target`` (one, or two), into ``ranks``: a
    move of one piece, in one call (the engine's usual move)."""
    start = origin & 56
    ranks[origin >> 3] = _RANK_FORMATS[(occupied >> start) & 0xFF] % tuple(
        letters[start : start + 8]
    )
    end = target & 56
    if end != start:
        ranks[target >> 3] = _RANK_FORMATS[(occupied >> end) & 0xFF] % tuple(letters[end : end + 8])


def _rank_format(occupied: int) -> str:
    """The format of a rank whose occupied files are the bits of ``occupied`` (file a: bit 0)."""
    text = ""
    empty = 0
    for file in range(8):
        if occupied >> file & 1:
            text += (_DIGITS[empty] if empty else "") + "%s"
            empty = 0
        else:
            text += "%s"
            empty += 1
    return text + (_DIGITS[empty] if empty else "")


_RANK_FORMATS: Final = tuple(_rank_format(occupied) for occupied in range(256))


def find_move(
    board: chess.Board,
    game: Sequence[chess.Piece | None],
    physical: Sequence[chess.Piece | None],
    diff: Collection[chess.Square],
    check: bool | None = None,
) -> chess.Move | None:
    """The legal move of ``board`` that turns ``game`` into ``physical``, if there is one.

    ``game`` and ``physical`` list what stands on each square (a1 first); ``diff`` is exactly the
    set of squares where they differ. ``check``: whether the side to move is in check, if the
    caller knows it.
    """
    count = len(diff)
    if not 2 <= count <= 4:
        return None
    turn = board.turn
    if count == 2:
        # The usual case, a piece moved (or captured with): one square emptied, one filled.
        # Castling and en passant change more squares; promotions are left to the general case.
        source, target = diff
        if physical[source] is not None:
            source, target = target, source
        mover, placed = game[source], physical[target]
        if (
            physical[source] is None
            and mover is not None
            and placed is not None
            and mover.piece_type == placed.piece_type
            and mover.color == placed.color == turn
            and not (mover.piece_type == chess.PAWN and target == board.ep_square)
            and not (mover.piece_type == chess.KING and abs(target - source) == 2)
        ):
            if not reaches(board, source, target):
                return None
            move = _MOVES[source][target]  # on a line or a knight's jump: made already
            assert move is not None
            return move if is_safe(board, move, check) else None
    sources = [sq for sq in diff if physical[sq] is None and _is_color(game[sq], turn)]
    targets = [sq for sq in diff if _is_color(physical[sq], turn)]
    for source in sources:
        mover = game[source]
        assert mover is not None
        for target in targets:
            placed = physical[target]
            assert placed is not None
            promotion: chess.PieceType | None = None
            if placed.piece_type != mover.piece_type:
                if mover.piece_type != chess.PAWN or chess.square_rank(target) not in (0, 7):
                    continue
                promotion = placed.piece_type
            # Castling is the king's two-square move (python-chess's standard encoding).
            move = chess.Move(source, target, promotion)
            # Cheap geometric checks first; legality (the costly part) last.
            if _explains(board, move, physical, diff) and is_safe(board, move, check):
                return move  # pseudo-legal and leaves no king in check: legal
    return None


def reaches(board: chess.Board, origin: chess.Square, target: chess.Square) -> bool:
    """``board.is_pseudo_legal(chess.Move(origin, target))``, from the bitboards.

    python-chess reads the piece type square by square and, for a pawn, runs its move generator;
    here a few table lookups decide. A king's move that may be castling (to a square of the
    castling rights, or from e1 or e8 to a castling king's square), a pawn's to the en passant
    square and any move on a Chess960 board are left to python-chess.
    """
    here = _BB[origin]
    turn = board.turn
    ours = board.occupied_co[turn]
    if not ours & here:
        return False  # no piece of the side to move there
    if board.chess960:
        return board.is_pseudo_legal(chess.Move(origin, target))
    there = _BB[target]
    if board.kings & here:
        if board.castling_rights & there or (origin in _KING_HOMES and there & _CASTLED):
            return board.is_pseudo_legal(chess.Move(origin, target))  # castling, maybe
        return not ours & there and bool(_KING_ATTACKS[origin] & there)
    if ours & there:
        return False
    if board.pawns & here:
        if target == board.ep_square:
            return board.is_pseudo_legal(chess.Move(origin, target))
        if target >> 3 in (0, 7):
            return False  # only a promotion goes there
        if _PAWN_ATTACKS[turn][origin] & there:
            return bool(board.occupied_co[not turn] & there)
        occupied = board.occupied
        step = 8 if turn == chess.WHITE else -8
        if target == origin + step:
            return not occupied & there
        if target == origin + 2 * step:
            # python-chess's generator: the single step's square and the target empty, and the
            # target on the ranks a double step from the second rank (or the first) reaches.
            double = _DOUBLE_WHITE if turn == chess.WHITE else _DOUBLE_BLACK
            return not occupied & (there | _BB[origin + step]) and bool(there & double)
        return False
    if board.knights & here:
        return bool(_KNIGHT_ATTACKS[origin] & there)
    # A slider attacks the target when the target is on one of its lines through the origin
    # and nothing stands between: python-chess's attack tables say the same.
    if board.bishops & here:
        lines = _DIAGONALS[origin]
    elif board.rooks & here:
        lines = _ORTHOGONALS[origin]
    elif board.queens & here:
        lines = _LINES[origin]
    else:
        return False
    return bool(lines & there) and not _BETWEEN[origin][target] & board.occupied


_BB: Final = chess.BB_SQUARES
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS
_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_RAYS: Final = chess.BB_RAYS
_DOUBLE_WHITE: Final = chess.BB_RANK_3 | chess.BB_RANK_4
_DOUBLE_BLACK: Final = chess.BB_RANK_6 | chess.BB_RANK_5
_KING_HOMES: Final = (chess.E1, chess.E8)
_CASTLED: Final = chess.BB_C1 | chess.BB_G1 | chess.BB_C8 | chess.BB_G8
"""Where a castling king goes (python-chess's encoding of castling from e1 or e8); its other
encoding, the king onto the rook, goes to a square of the castling rights."""


def is_safe(board: chess.Board, move: chess.Move, check: bool | None = None) -> bool:
    """``not board.is_into_check(move)`` for a pseudo-legal ``move``, cheaply when it is clear.

    ``check``: whether the side to move is in check, if the caller knows it. With the king not
    in check, a move of a piece other than the king (en passant aside: the victim may be pinned)
    is safe unless the piece is pinned - the only piece between its king and an opponent's rook,
    bishop or queen on that line - and leaves the line: python-chess's own test, for that one
    line instead of every line through the king. The king's own step (not castling) is safe
    when no piece of the opponent attacks its target with the king off its square, in check or
    not: python-chess's evasions and its attack test in one.
    """
    turn = board.turn
    kings = board.kings & board.occupied_co[turn] & ~board.promoted
    origin = move.from_square
    here = _BB[origin]
    if kings == here:
        target = move.to_square  # castling (a king's two files, or onto its rook) aside
        if (
            abs((origin & 7) - (target & 7)) <= 1
            and not board.occupied_co[turn] & _BB[target]
            and not board.chess960
        ):
            return not board.attackers_mask(not turn, target, board.occupied ^ here)
    elif kings and not kings & here and move.to_square != board.ep_square:
        king = kings.bit_length() - 1
        if check is None:
            check = bool(board.attackers_mask(not turn, king))
        if not check:
            if not _LINES[king] & here:
                return True  # on no line through its king: it cannot be pinned
            occupied = board.occupied
            if _BETWEEN[king][origin] & occupied:
                return True  # another piece stands between it and its king
            beyond = _BEYOND[king][origin] & occupied
            if not beyond:
                return True
            # The first piece past ``origin`` on the line from the king.
            first = beyond & -beyond if origin > king else 1 << (beyond.bit_length() - 1)
            if king >> 3 == origin >> 3 or king & 7 == origin & 7:
                snipers = board.rooks | board.queens
            else:
                snipers = board.bishops | board.queens
            if not first & snipers & board.occupied_co[not turn]:
                return True  # no rook, bishop or queen of the opponent behind it on the line
            return bool(_RAYS[origin][move.to_square] & _BB[king])  # pinned: along the line
    return not board.is_into_check(move)


def legal_with_displaced(
    board: chess.Board,
    game: Sequence[chess.Piece | None],
    physical: Sequence[chess.Piece | None],
    diff: Collection[chess.Square],
) -> list[tuple[chess.Move, frozenset[chess.Square]]]:
    """Legal moves of ``board`` whose every square reads as after the move; and what is left.

    Each answer is a legal move whose changed squares are all in ``diff`` and all show what the
    move puts there, with the other squares of ``diff``: pieces displaced (or a second move; the
    caller decides). Asked only at a clock press that ``find_move`` does not explain: the board
    shows a move and something else besides, such as a piece knocked off its square.
    """
    turn = board.turn
    sources = [sq for sq in diff if physical[sq] is None and _is_color(game[sq], turn)]
    targets = [sq for sq in diff if _is_color(physical[sq], turn) and physical[sq] != game[sq]]
    found: list[tuple[chess.Move, frozenset[chess.Square]]] = []
    for source in sources:
        mover = game[source]
        assert mover is not None
        for target in targets:
            placed = physical[target]
            assert placed is not None
            promotion: chess.PieceType | None = None
            if placed.piece_type != mover.piece_type:
                if mover.piece_type != chess.PAWN or chess.square_rank(target) not in (0, 7):
                    continue
                promotion = placed.piece_type
            move = chess.Move(source, target, promotion)
            if not board.is_pseudo_legal(move):
                continue
            changes = move_changes(board, move)
            if all(sq in diff and physical[sq] == piece for sq, piece in changes) and (
                board.is_legal(move)
            ):
                found.append((move, frozenset(diff) - {sq for sq, _ in changes}))
    return found


def board_of(
    squares: Sequence[chess.Piece | None], base: chess.Board, turn: chess.Color
) -> chess.Board:
    """A position read off the sensors, ``turn`` to move, with what ``base`` says of the rest.

    For an illegal move that stood: castling rights are those of ``base`` still possible with
    the kings and rooks where they stand, there is no en passant, and the move counters go on
    from ``base`` (the fifty-move count starts again: the move was not a normal one).
    """
    board = chess.Board(None)
    for square, piece in enumerate(squares):
        if piece is not None:
            board.set_piece_at(square, piece)
    board.turn = turn
    board.castling_rights = base.castling_rights
    board.castling_rights = board.clean_castling_rights()
    board.ep_square = None
    board.halfmove_clock = 0
    board.fullmove_number = base.fullmove_number + (
        1 if turn == chess.WHITE and base.turn == chess.BLACK else 0
    )
    return board


def is_ambiguous(board: chess.Board, move: chess.Move, check: bool | None = None) -> bool:
    """Whether the piece of ``move`` could still be on its way to another legal move.

    True when another legal move of the same piece goes further along the line through
    ``move.to_square`` (a slide passing by, a pawn passing its third rank, a king passing f1 on
    the way to castle) or when ``move`` is the rook half of a legal castling (rook first).
    ``check``: whether the side to move is in check, if the caller knows it.
    """
    origin, target = move.from_square, move.to_square
    here = _BB[origin]  # the piece's kind read off the bitboards (``piece_type_at``)
    if board.knights & here or move.promotion:
        return False
    if board.pawns & here:
        # Only a pawn's first step can go on: its double step (no other pawn move is two
        # squares along a line).
        step = 8 if board.turn == chess.WHITE else -8
        if target - origin != step or origin >> 3 != (1 if step > 0 else 6):  # its second rank
            return False
        return board.is_legal(chess.Move(origin, target + step))
    if board.kings & here:
        # A king goes two squares only to castle: one step along its rank, with rights left.
        following = _NEXT[origin][target]
        if not board.castling_rights or abs(target - origin) != 1 or following < 0:
            return False
        return board.is_legal(chess.Move(origin, following))
    if board.rooks & here and board.castling_rights & here and _is_castling_rook_move(board, move):
        return True
    following = _NEXT[origin][target]
    if following < 0 or board.occupied & chess.BB_SQUARES[target]:
        return False  # the end of the line, or a capture: the piece cannot pass the victim
    if not (board.is_check() if check is None else check):
        # Not in check, and ``move`` is legal: a pin cannot stop the piece going on along the
        # same line, so one square's occupancy decides (no legality search per square).
        return not board.occupied_co[board.turn] & chess.BB_SQUARES[following]
    for square in _squares_beyond(origin, target):
        occupant = board.color_at(square)
        if occupant == board.turn:
            return False
        if board.is_legal(chess.Move(origin, square)):
            return True
        if occupant is not None:
            return False
    return False


def _is_color(piece: chess.Piece | None, color: chess.Color) -> bool:
    return piece is not None and piece.color == color


def _explains(
    board: chess.Board,
    move: chess.Move,
    physical: Sequence[chess.Piece | None],
    diff: Collection[chess.Square],
) -> bool:
    if not board.is_pseudo_legal(move):
        return False
    changes = move_changes(board, move)
    if len(changes) != len(diff):
        return False
    return all(square in diff and physical[square] == piece for square, piece in changes)


def _is_castling_rook_move(board: chess.Board, move: chess.Move) -> bool:
    rank = chess.square_rank(move.from_square)
    king = board.king(board.turn)
    if king is None or chess.square_rank(king) != rank:
        return False
    for rook_file, rook_to_file, king_to_file in ((7, 5, 6), (0, 3, 2)):
        if move.from_square == chess.square(rook_file, rank) and move.to_square == chess.square(
            rook_to_file, rank
        ):
            return board.is_legal(chess.Move(king, chess.square(king_to_file, rank)))
    return False


def _next_on_line(origin: chess.Square, square: chess.Square) -> chess.Square:
    df = _sign(chess.square_file(square) - chess.square_file(origin))
    dr = _sign(chess.square_rank(square) - chess.square_rank(origin))
    return chess.square(chess.square_file(square) + df, chess.square_rank(square) + dr)


def _squares_beyond(origin: chess.Square, square: chess.Square) -> list[chess.Square]:
    out: list[chess.Square] = []
    beyond = _BEYOND[origin][square]
    current = square
    while beyond:
        current = _next_on_line(origin, current)
        out.append(current)
        beyond &= ~chess.BB_SQUARES[current]
    return out


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


_DIRECTIONS: Final = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1))


def _line_tables() -> tuple[Table, Table, Table]:
    """Three ``[origin][square]`` tables of the lines through ``origin``, made in one walk along
    each of its eight directions (about 2 ms at start; made apart, ``between`` by
    ``chess.between`` for every pair, the three took 5-6 ms):

    * ``between``: the squares strictly between the two (``chess.between``; 0 off a line);
    * ``beyond``: the squares on the line from ``origin`` through ``square`` that lie past
      ``square`` (0 when the two are not on one line);
    * ``next``: the square after ``square`` on that line (-1 at the end of the line, or when the
      two are not on one line).
    """
    between, beyond, following = [], [], []
    for origin in chess.SQUARES:
        before_row, beyond_row, next_row = [0] * 64, [0] * 64, [-1] * 64
        file, rank = origin & 7, origin >> 3
        for df, dr in _DIRECTIONS:
            line: list[chess.Square] = []
            f, r = file + df, rank + dr
            while 0 <= f < 8 and 0 <= r < 8:
                line.append(r * 8 + f)
                f += df
                r += dr
            mask = 0
            for square in line:
                before_row[square] = mask
                mask |= 1 << square
            for square, after in itertools.pairwise(line):
                next_row[square] = after
            mask = 0
            for square in reversed(line):
                beyond_row[square] = mask
                mask |= 1 << square
        between.append(tuple(before_row))
        beyond.append(tuple(beyond_row))
        following.append(tuple(next_row))
    return tuple(between), tuple(beyond), tuple(following)


def _moves_table() -> tuple[tuple[chess.Move | None, ...], ...]:
    """``[origin][target]``: the move (no promotion) between two squares on one rank, file or
    diagonal or a knight's jump apart, made once (``None`` for the others): every move but a
    promotion goes so, and making a ``chess.Move`` is a Python call. Made at import (some 3 ms):
    made on first use instead, the completing event was 1-2 µs slower in the engine benchmark."""
    rows = []
    for a in chess.SQUARES:
        row: list[chess.Move | None] = [None] * 64
        for b in chess.scan_forward(chess.BB_KNIGHT_ATTACKS[a] | _LINES[a]):
            row[b] = chess.Move(a, b)
        rows.append(tuple(row))
    return tuple(rows)


_MOVES: Final = _moves_table()
_LINE_TABLES: Final = _line_tables()
_BETWEEN: Final = _LINE_TABLES[0]
"""``[a][b]``: the squares strictly between ``a`` and ``b`` on their line (``chess.between``)."""
_BEYOND: Final = _LINE_TABLES[1]
_NEXT: Final = _LINE_TABLES[2]
