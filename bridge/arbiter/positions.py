"""What a legal move changes on the board, and which move the squares that differ show.

The engine keeps the set of squares where the physical board differs from the game position,
updated on every sensor event. A legal move changes two squares (three for en passant, four for
castling), so only when two to four squares differ is there anything to look for; the candidate
moves are read off those squares and python-chess says which is legal. No move is generated per
sensor event (the snapshot matchers of other bridges try every legal move after every change).
Everything here uses python-chess's public API. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import chess

Squares = Sequence[chess.Piece | None]
"""What stands on each square, a1 first (``None``: empty)."""
Change = tuple[chess.Square, chess.Piece | None]
"""A square and what stands on it after a move (``None`` = empty)."""


def squares_of(board: chess.BaseBoard) -> list[chess.Piece | None]:
    """What stands on each square of ``board``, a1 first."""
    return [board.piece_at(square) for square in chess.SQUARES]


def move_changes(board: chess.Board, move: chess.Move) -> tuple[Change, ...]:
    """The squares a legal ``move`` of ``board`` changes, with what stands on them afterwards."""
    origin, target = move.from_square, move.to_square
    piece = board.piece_at(origin)
    if piece is None:
        raise ValueError(f"no piece on {chess.square_name(origin)} in {board.fen()}")
    if board.is_castling(move):
        rank = chess.square_rank(origin)
        kingside = board.is_kingside_castling(move)
        rook_from = chess.square(7 if kingside else 0, rank)
        king_to = chess.square(6 if kingside else 2, rank)
        rook_to = chess.square(5 if kingside else 3, rank)
        return (
            (origin, None),
            (rook_from, None),
            (king_to, piece),
            (rook_to, chess.Piece(chess.ROOK, piece.color)),
        )
    placed = chess.Piece(move.promotion, piece.color) if move.promotion else piece
    if board.is_en_passant(move):
        victim = chess.square(chess.square_file(target), chess.square_rank(origin))
        return ((origin, None), (target, placed), (victim, None))
    return ((origin, None), (target, placed))


def find_move(
    board: chess.Board, game: Squares, physical: Squares, diff: Collection[chess.Square]
) -> chess.Move | None:
    """The legal move of ``board`` that turns ``game`` into ``physical``, if there is one.

    ``game`` and ``physical`` list what stands on each square; ``diff`` is exactly the set of
    squares where they differ.
    """
    if not 2 <= len(diff) <= 4:
        return None
    for move in _read_moves(board, game, physical, diff):
        if board.is_legal(move) and _shows(board, move, physical, diff, exactly=True):
            return move
    return None


def find_move_with_hand(
    board: chess.Board,
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
    carried: Collection[chess.Square] = (),
) -> tuple[chess.Move, frozenset[chess.Square]] | None:
    """The legal move of ``board`` the squares show, with the opponent's hand already at work.

    Two hands on the board: the opponent reaches for his reply before the mover's piece has
    landed. The answer is the one legal move whose squares all show what it puts there, every
    other square of ``diff`` (one or two) reading empty where the game has a piece that the
    opponent, to move after it, may be holding (``holds``); and those squares. ``carried``:
    squares whose pieces were already held when the last move was recorded - a hand holds a
    piece through the opponent's move, not through its own.
    """
    if not 3 <= len(diff) <= 6:
        return None
    found: list[tuple[chess.Move, frozenset[chess.Square]]] = []
    for move, rest in legal_with_displaced(board, game, physical, diff):
        if not 1 <= len(rest) <= 2 or any(physical[sq] is not None or sq in carried for sq in rest):
            continue
        after = board.copy(stack=False)
        after.push(move)
        if holds(after, rest, other=False):
            found.append((move, rest))
    return found[0] if len(found) == 1 else None


def holds(board: chess.Board, squares: Collection[chess.Square], *, other: bool = True) -> bool:
    """Whether pieces of ``board`` lifted from ``squares`` are what hands at work hold.

    One piece: the player having the move holds one of his own (to move it, or to adjust it),
    or a piece he can capture (its victim is often lifted first). Two pieces: both of a capture
    under way, or, with ``other``, one of each player's: the other player reached for his reply
    before the move of the player having it has landed (two hands on the board). (The other
    player alone holding one of his own is not a hand at work: he has just moved.)
    """
    turn = board.turn
    held = list(squares)
    if len(held) == 1:
        (square,) = held
        return board.color_at(square) == turn or _capturable(board, square)
    if len(held) != 2:
        return False
    a, b = held
    for move in board.generate_legal_moves(
        chess.BB_SQUARES[a] | chess.BB_SQUARES[b], chess.BB_SQUARES[a] | chess.BB_SQUARES[b]
    ):
        if {move.from_square, move.to_square} == {a, b}:
            return True
    ep = board.ep_square
    if ep is not None:
        for move in board.generate_legal_ep(chess.BB_SQUARES[a] | chess.BB_SQUARES[b]):
            if {move.from_square, _ep_victim(board, move)} == {a, b}:
                return True
    colors = {board.color_at(a), board.color_at(b)}
    return other and colors == {chess.WHITE, chess.BLACK}


def _capturable(board: chess.Board, square: chess.Square) -> bool:
    """A piece of the player not having the move that the player having it can capture."""
    if board.color_at(square) != (not board.turn):
        return False
    if any(board.generate_legal_moves(chess.BB_ALL, chess.BB_SQUARES[square])):
        return True
    return any(_ep_victim(board, move) == square for move in board.generate_legal_ep())


def _ep_victim(board: chess.Board, move: chess.Move) -> chess.Square:
    return chess.square(chess.square_file(move.to_square), chess.square_rank(move.from_square))


def legal_with_displaced(
    board: chess.Board, game: Squares, physical: Squares, diff: Collection[chess.Square]
) -> list[tuple[chess.Move, frozenset[chess.Square]]]:
    """Legal moves of ``board`` whose every square reads as after the move; and what is left.

    Each answer is a legal move whose changed squares are all in ``diff`` and all show what the
    move puts there, with the other squares of ``diff``: pieces displaced (or a second move; the
    caller decides). Asked only at a clock press that ``find_move`` does not explain: the board
    shows a move and something else besides, such as a piece knocked off its square.
    """
    found: list[tuple[chess.Move, frozenset[chess.Square]]] = []
    for move in _read_moves(board, game, physical, diff, arrivals_only=True):
        if board.is_legal(move) and _shows(board, move, physical, diff, exactly=False):
            changed = {square for square, _ in move_changes(board, move)}
            found.append((move, frozenset(diff) - changed))
    return found


def _read_moves(
    board: chess.Board,
    game: Squares,
    physical: Squares,
    diff: Collection[chess.Square],
    *,
    arrivals_only: bool = False,
) -> Iterator[chess.Move]:
    """The moves the squares of ``diff`` may show: a piece of the side to move gone from one
    square and standing on another (castling as python-chess encodes it, the king's two-square
    move; a pawn on its last rank as the piece it became). ``arrivals_only``: the target must
    show a piece that the game does not have there."""
    turn = board.turn
    sources = [sq for sq in diff if physical[sq] is None and _is_color(game[sq], turn)]
    targets = [
        sq
        for sq in diff
        if _is_color(physical[sq], turn) and not (arrivals_only and physical[sq] == game[sq])
    ]
    for source in sources:
        mover = game[source]
        assert mover is not None
        for target in targets:
            placed = physical[target]
            assert placed is not None
            if placed.piece_type == mover.piece_type:
                yield chess.Move(source, target)
            elif mover.piece_type == chess.PAWN and chess.square_rank(target) in (0, 7):
                yield chess.Move(source, target, placed.piece_type)


def _shows(
    board: chess.Board,
    move: chess.Move,
    physical: Squares,
    diff: Collection[chess.Square],
    *,
    exactly: bool,
) -> bool:
    """Whether every square ``move`` changes is in ``diff`` and shows what the move puts there
    (``exactly``: and ``diff`` holds no other square)."""
    changes = move_changes(board, move)
    if exactly and len(changes) != len(diff):
        return False
    return all(square in diff and physical[square] == piece for square, piece in changes)


def is_ambiguous(board: chess.Board, move: chess.Move) -> bool:
    """Whether the piece of the legal ``move`` could still be on its way to another legal move.

    True when another legal move of the same piece goes further along the line through
    ``move.to_square`` (a slide passing by, a pawn passing its third rank, a king passing f1 on
    the way to castle) or when ``move`` is the rook half of a legal castling (rook first).
    """
    if move.promotion or board.piece_type_at(move.from_square) == chess.KNIGHT:
        return False
    if _is_castling_rook_move(board, move):
        return True
    if board.piece_at(move.to_square) is not None:
        return False  # a capture: the piece cannot pass its victim
    for square in _beyond(move.from_square, move.to_square):
        if board.color_at(square) == board.turn:
            return False
        if board.is_legal(chess.Move(move.from_square, square)):
            return True
        if board.piece_at(square) is not None:
            return False
    return False


def board_of(squares: Squares, base: chess.Board, turn: chess.Color) -> chess.Board:
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


def _is_color(piece: chess.Piece | None, color: chess.Color) -> bool:
    return piece is not None and piece.color == color


def _is_castling_rook_move(board: chess.Board, move: chess.Move) -> bool:
    """``move`` takes a rook from its corner to where it stands after a legal castling."""
    if board.piece_type_at(move.from_square) != chess.ROOK:
        return False
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


def _beyond(origin: chess.Square, target: chess.Square) -> Iterator[chess.Square]:
    """The squares past ``target`` on the line from ``origin`` through it (none off a line)."""
    df = chess.square_file(target) - chess.square_file(origin)
    dr = chess.square_rank(target) - chess.square_rank(origin)
    if (df and dr and abs(df) != abs(dr)) or not (df or dr):
        return  # not on a rank, file or diagonal
    step_f, step_r = (df > 0) - (df < 0), (dr > 0) - (dr < 0)
    file, rank = chess.square_file(target) + step_f, chess.square_rank(target) + step_r
    while 0 <= file < 8 and 0 <= rank < 8:
        yield chess.square(file, rank)
        file += step_f
        rank += step_r
