"""Certabo RFID boards (board-protocols.md §5): the codec, its serial link and emulator."""
