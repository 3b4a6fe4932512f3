"""The DGT LiveChess local API (docs/livechess.md): the websocket at ``/api/v1.0`` that
lichess.org/dgt, chess.com and broadcast tools connect to, served for every board family.

Pure: :mod:`~bridge.livechess.protocol` (the messages), :mod:`~bridge.livechess.hall` (the
boards, folded from the tables' payloads), :mod:`~bridge.livechess.session` (one client's calls
and feeds), :mod:`~bridge.livechess.origins` (which web pages may connect) and
:mod:`~bridge.livechess.cli` (the command line's options, loaded with every command: nothing
heavy). The shell: :mod:`~bridge.livechess.server` (aiohttp), and where the payloads come from:
:mod:`~bridge.livechess.local` (the table daemon of this process, ``run --livechess``),
:mod:`~bridge.livechess.venue` (every table on a broker, ``chessbridge livechess``) and
:mod:`~bridge.livechess.home` (one board with the embedded broker, ``livechess --board``).
"""
