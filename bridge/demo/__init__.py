"""``chessbridge demo``: a broker, an emulated board, the daemon and a view in one process."""
