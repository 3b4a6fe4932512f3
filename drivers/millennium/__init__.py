"""Millennium ChessLink boards (board-protocols.md §4): the codec, and its serial link."""
