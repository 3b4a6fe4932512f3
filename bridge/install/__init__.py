"""Setting up a Pi for a table: ``chessbridge install`` and ``uninstall``."""
