"""The facts the engine reads off a move are python-chess's.

Which squares a move changes (``positions.move_changes``), which legal move a board shows
(``positions.find_move``), whether a move's piece may still be on its way
(``positions.is_ambiguous``), whether the game ended (``judge.ending_after_move``), which draws
could be claimed (``judge.claimable``) and whether a ply's touches oblige nothing
(``touch.obliges_nothing``): each is compared with python-chess's plain answer, on random games
(with players who often undo their last move, so that positions repeat up to fivefold and
beyond) and on random positions with many pieces of one kind (pins, checks, stalemates, bare
material).
"""

from __future__ import annotations

import chess
from hypothesis import HealthCheck, assume, event, example, given, settings
from hypothesis import strategies as st

from bridge.arbiter import dead, judge, positions, rules, touch
from bridge.arbiter.judge import Ending

EDITIONS = (rules.DEFAULT, *(e for e in rules.EDITIONS.values() if e != rules.DEFAULT))


def reference_ending(board: chess.Board, edition: rules.Edition) -> Ending | None:
    """The ending as python-chess's own checks say, with no shortcut."""
    draw = "1/2-1/2"
    if board.is_checkmate():
        winner = "0-1" if board.turn == chess.WHITE else "1-0"
        return Ending(result=winner, reason="checkmate", article=edition.checkmate)
    if board.is_stalemate():
        return Ending(result=draw, reason="stalemate", article=edition.stalemate)
    if board.is_insufficient_material() or dead.is_blockade(board):
        return Ending(result=draw, reason="dead position", article=edition.dead_position)
    if edition.seventy_five and board.halfmove_clock >= 150:
        return Ending(result=draw, reason="75 moves", article=edition.seventy_five)
    if edition.fivefold and board.is_fivefold_repetition():
        return Ending(result=draw, reason="fivefold repetition", article=edition.fivefold)
    return None


def reference_ambiguous(board: chess.Board, move: chess.Move) -> bool:
    """``positions.is_ambiguous`` by its definition, over python-chess's legal moves."""
    if move.promotion:
        return False
    origin, target = move.from_square, move.to_square
    if any(
        other.from_square == origin and chess.between(origin, other.to_square) & (1 << target)
        for other in board.legal_moves
    ):
        return True  # the piece may go on along the line (a king on its way to castle too)
    king = board.king(board.turn)
    rank = chess.square_rank(origin)
    if king is None or board.piece_type_at(origin) != chess.ROOK or chess.square_rank(king) != rank:
        return False
    for rook, rook_to, king_to in ((7, 5, 6), (0, 3, 2)):  # the rook half of a castling
        if (origin, target) == (chess.square(rook, rank), chess.square(rook_to, rank)):
            return board.is_legal(chess.Move(king, chess.square(king_to, rank)))
    return False


def reference_changes(board: chess.Board, move: chess.Move) -> dict[chess.Square, object]:
    """The squares ``move`` changes and what stands on them after it, by making it."""
    before = _bitboards(board)
    board.push(move)
    try:
        changed = 0
        for was, now in zip(before, _bitboards(board), strict=True):
            changed |= was ^ now  # a square changes when the kind or colour on it does
        return {sq: board.piece_at(sq) for sq in chess.SquareSet(changed)}
    finally:
        board.pop()


def _bitboards(board: chess.Board) -> tuple[int, ...]:
    return (
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        *board.occupied_co,
    )


def check_position(board: chess.Board) -> None:
    """The facts of every legal move of ``board``, against python-chess."""
    game = positions.squares_of(board)
    assert game == [board.piece_at(sq) for sq in chess.SQUARES]
    for move in board.legal_moves:
        changes = positions.move_changes(board, move)
        assert dict(changes) == reference_changes(board, move), move.uci()
        assert len(changes) == len(dict(changes)), move.uci()
        physical = list(game)
        for square, piece in changes:
            physical[square] = piece
        diff = {sq for sq in chess.SQUARES if physical[sq] != game[sq]}
        assert positions.find_move(board, game, physical, diff) == move, move.uci()
        ambiguous = positions.is_ambiguous(board, move)
        assert ambiguous == reference_ambiguous(board, move), move.uci()
        if ambiguous:
            event("a move that may go on")


@st.composite
def games(draw: st.DrawFn) -> chess.Board:
    """A random game (from the start or a random position) with its move stack."""
    board = draw(st.one_of(st.just(chess.Board()), positions_with_many_pieces()))
    undo_bias = draw(st.sampled_from([0.0, 0.5, 0.9]), label="how often a player undoes")
    for _ in range(draw(st.integers(0, 160), label="plies")):
        legal = list(board.legal_moves)
        if not legal or board.is_fivefold_repetition() or board.halfmove_clock >= 150:
            break
        back = None
        if len(board.move_stack) >= 2:
            last = board.move_stack[-2]
            back = chess.Move(last.to_square, last.from_square)
        undo = back in legal and draw(st.floats(0, 1)) < undo_bias
        move = back if undo and back is not None else draw(st.sampled_from(legal))
        board.push(move)
    return board


@st.composite
def positions_with_many_pieces(draw: st.DrawFn) -> chess.Board:
    """A legal position: kings and a few pawns, or a random set of pieces, often several of one
    kind."""
    board = chess.Board(None)
    squares = draw(st.permutations(list(chess.SQUARES)))
    board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
    if draw(st.booleans(), label="sparse: kings and pawns, stalemates"):
        kinds = st.sampled_from([chess.PAWN, chess.PAWN, chess.PAWN, chess.QUEEN, chess.ROOK])
        count = draw(st.integers(0, 4), label="pieces")
    else:
        kinds = st.sampled_from([chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN])
        count = draw(st.integers(0, 12), label="pieces")
    for square in squares[2 : 2 + count]:
        kind = draw(kinds)
        if kind == chess.PAWN and chess.square_rank(square) in (0, 7):
            continue
        board.set_piece_at(square, chess.Piece(kind, draw(st.booleans())))
    board.turn = draw(st.booleans())
    assume(board.is_valid())
    return board


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=games())
def test_the_facts_of_every_position_of_a_game_are_python_chess_s(board: chess.Board) -> None:
    replay = board.root()
    for move in [*board.move_stack, None]:
        check_position(replay)
        for edition in EDITIONS:
            expected = reference_ending(replay, edition)
            if expected is not None:
                event(f"game: {expected.reason}")
            assert judge.ending_after_move(replay, edition) == expected
        if move is not None:
            replay.push(move)


def reference_claimable(board: chess.Board) -> tuple[str, ...]:
    """The draws the player having the move could claim, as python-chess's own checks say."""
    threefold = ("threefold",) if board.can_claim_threefold_repetition() else ()
    return threefold + (("fifty_moves",) if board.can_claim_fifty_moves() else ())


def _played(*sans: str) -> chess.Board:
    board = chess.Board()
    for san in sans:
        board.push_san(san)
    return board


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(board=games(), counted=st.integers(0, 12))
# The quickest repetition: Black may claim it by Ng8 at a count of 7.
@example(board=_played("Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"), counted=0)
def test_the_draws_claimable_at_every_position_of_a_game_are_python_chess_s(
    board: chess.Board, counted: int
) -> None:
    # ``counted``: plies without a capture or pawn move before the game's first position (a
    # game set up from a FEN), so that the count can exceed the moves the board knows of.
    replay = board.root()
    replay.halfmove_clock += counted
    for move in [*board.move_stack, None]:
        expected = reference_claimable(replay)
        if expected:
            event(f"claimable: {' '.join(expected)}")
        assert judge.claimable(replay) == expected, replay.fen()
        if move is not None:
            replay.push(move)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(board=positions_with_many_pieces())
@example(board=chess.Board("7k/5Q2/8/1p6/1P6/8/8/K7 b - - 0 1"))  # stalemate, a pawn blocked
@example(board=chess.Board("7k/8/8/8/8/8/2q5/K7 w - - 0 1"))  # white is stalemated
@example(board=chess.Board("k7/8/8/8/1Q1Q4/8/1Q6/7K w - - 0 1"))  # Qb4d2? Qbd4? Qd4b2? Q2b3?
@example(board=chess.Board("4k3/8/8/8/4r3/8/4N3/4K2R w K - 0 1"))  # a pinned knight; O-O
@example(board=chess.Board("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1"))  # Ra8#
@example(board=chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"))  # rook first, king first
@example(board=chess.Board("8/8/8/KPp4r/8/8/8/7k w - c6 0 1"))  # en passant pinned: no ep
@example(board=chess.Board("7k/8/8/1Pp5/8/8/8/K7 w - c6 0 1"))  # en passant legal
@example(board=chess.Board("7k/8/8/2p5/8/8/8/K7 w - c6 0 1"))  # no pawn attacks c6
def test_the_facts_of_a_crowded_position_are_python_chess_s(board: chess.Board) -> None:
    check_position(board)
    for edition in EDITIONS:
        expected = reference_ending(board, edition)
        if expected is not None:
            event(f"position: {expected.reason}")
        assert judge.ending_after_move(board, edition) == expected


@st.composite
def touched_moves(draw: st.DrawFn) -> tuple[chess.Board, chess.Move, list[touch.Touch]]:
    """A legal move of a game position and the touches of its ply: often a slide's (the mover
    lifted from squares without a piece of its side) or a capture's (its victim lifted, before
    or after the mover), sometimes any piece on any square."""
    board = draw(st.one_of(games(), positions_with_many_pieces()))
    legal = list(board.legal_moves)
    assume(legal)
    move = draw(st.sampled_from(legal))
    mover = board.piece_at(move.from_square)
    assert mover is not None
    free = [sq for sq in chess.SQUARES if not board.occupied_co[board.turn] & chess.BB_SQUARES[sq]]
    square = st.one_of(st.sampled_from(free), st.sampled_from(chess.SQUARES))
    piece = st.one_of(
        st.just(mover), st.builds(chess.Piece, st.sampled_from(chess.PIECE_TYPES), st.booleans())
    )
    touches = [touch.Touch(move.from_square, mover, 0.0)] if draw(st.booleans()) else []
    victim = board.piece_at(move.to_square)
    if victim is not None and draw(st.booleans(), label="the victim touched"):
        touches.append(touch.Touch(move.to_square, victim, draw(st.sampled_from([0.0, 0.5]))))
    for _ in range(draw(st.integers(0, 5), label="other touches")):
        at = draw(st.sampled_from([0.0, 0.01, 0.5, 1.0]))
        touches.append(touch.Touch(draw(square), draw(piece), at))
    touches.sort(key=lambda t: t.at)
    return board, move, touches


_CASTLING = chess.Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=touched_moves(), simultaneous=st.sampled_from([0.0, 0.04]))
@example(  # castling with the king alone touched: a king's move that is not a step
    case=(
        _CASTLING,
        chess.Move(chess.E1, chess.G1),
        [touch.Touch(chess.E1, chess.Piece(chess.KING, True), 0.0)],
    ),
    simultaneous=0.0,
)
def test_a_ply_that_obliges_nothing_has_no_breach(
    case: tuple[chess.Board, chess.Move, list[touch.Touch]], simultaneous: float
) -> None:
    board, move, touches = case
    if (
        len(touches) == 1
        and touches[0].square == move.from_square
        and board.piece_type_at(move.from_square) != chess.KING
    ):
        event("only the mover touched")  # the usual ply
        assert touch.obliges_nothing(board, move, touches)
    if touch.obliges_nothing(board, move, touches):
        event("obliges nothing")
        for edition in EDITIONS:
            assert touch.touch_breach(board, move, touches, edition, simultaneous) is None
    else:
        event("asked")
