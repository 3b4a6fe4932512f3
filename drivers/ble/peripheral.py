"""What every emulated Bluetooth LE board does on the virtual radio, whatever its protocol.

:class:`RadioBoard` is the part of an emulator that is not its family's protocol: being put on
a radio (its own, or one shared with other boards), switched off and on, connected to one host
at a time, notifying values cut to the connection's MTU as a real board must, and holding the
pieces a person put on it, by square, in the player's frame or turned round, as the hands of
:class:`drivers.emulation.EmulatedBoard` lift and place them. Each family's emulator adds its
GATT services, what it does with a host's writes, and how it reports a lift or a place
(:meth:`RadioBoard.on_square_changed`), from its own protocol tables.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from types import TracebackType
from typing import Final, Self

import chess

from drivers.ble.radio import Advertisement, Central, Service, VirtualRadio

_PIECES: Final = frozenset("KQRBNPkqrbnp")
"""The FEN letters a hand may put down."""


class RadioBoard:
    """The radio side of an emulated board (see the module docstring); subclass it."""

    def __init__(
        self,
        *,
        radio: VirtualRadio | None,
        address: str,
        advertisement: Advertisement,
        position: str | None,
        rotated: bool,
    ) -> None:
        self._own_radio = radio is None
        self.radio = radio if radio is not None else VirtualRadio()
        self._address = address.upper()
        self._advertisement = advertisement
        self._rotated = rotated
        board = chess.BaseBoard(
            chess.STARTING_BOARD_FEN if position is None else position.split()[0]
        )
        self.pieces: dict[chess.Square, str] = {
            self.frame(square): piece.symbol() for square, piece in board.piece_map().items()
        }
        """The pieces standing on the board, by square in the board's own frame."""
        self.central: Central | None = None

    async def __aenter__(self) -> Self:
        if self._own_radio:
            await self.radio.start()
        self.radio.add(self)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.radio.remove(self._address)
        if self._own_radio:
            await self.radio.stop()

    @property
    def address(self) -> str:
        """Its Bluetooth address: the board URI is ``{scheme}:{address}``."""
        return self._address

    @property
    def advertisement(self) -> Advertisement:
        """What it advertises while nobody is connected."""
        return self._advertisement

    @property
    def connected(self) -> bool:
        """Whether a host is connected."""
        return self.central is not None

    @property
    def position(self) -> dict[str, str]:
        """The pieces standing on the board, by square name (player's frame)."""
        return {chess.square_name(self.frame(sq)): piece for sq, piece in self.pieces.items()}

    async def lift(self, square: str) -> str | None:
        """Take the piece off ``square``; returns its letter (``None``: the square was empty)."""
        sq = self.square(square)
        piece = self.pieces.pop(sq, None)
        if piece is not None:
            self.on_square_changed(sq)
        await asyncio.sleep(0)
        return piece

    async def place(self, square: str, piece: str) -> None:
        """Put ``piece`` (a FEN letter) on ``square``; the board reports it if that changed it."""
        if piece not in _PIECES:
            raise ValueError(f"unknown piece symbol: {piece!r}")
        sq = self.square(square)
        if self.pieces.get(sq) != piece:
            self.pieces[sq] = piece
            self.on_square_changed(sq)
        await asyncio.sleep(0)

    async def press(self, side: str) -> None:
        """No Bluetooth LE family has a clock: nothing happens."""
        await asyncio.sleep(0)

    async def power_off(self) -> None:
        """Switch the board off: the host's connection drops and it stops advertising."""
        self.radio.power(self._address, on=False)
        await asyncio.sleep(0)

    async def power_on(self) -> None:
        """Switch it back on: it advertises again and waits for a host."""
        self.radio.power(self._address, on=True)
        await asyncio.sleep(0)

    def on_connect(self, central: Central) -> None:
        """A host connected (subclasses reset their session state, then call this)."""
        self.central = central

    def on_disconnect(self) -> None:
        """The host went away."""
        self.central = None

    def on_read(self, uuid: str) -> bytes:
        """No readable characteristic by default."""
        return b""

    @property
    def services(self) -> Sequence[Service]:
        """Its GATT services: the family's."""
        raise NotImplementedError

    def on_write(self, uuid: str, value: bytes) -> None:
        """What the board does with a host's write: the family's."""
        raise NotImplementedError

    def on_square_changed(self, square: chess.Square) -> None:
        """What the board reports when a hand changed ``square`` (the board's own frame; see
        :attr:`pieces`): the family's."""
        raise NotImplementedError

    def notify(self, uuid: str, value: bytes) -> None:
        """Notify ``value`` on ``uuid``, in pieces of at most ``mtu - 3`` bytes (none if alone)."""
        central = self.central
        if central is None:
            return
        size = central.mtu - 3
        for start in range(0, len(value), size):
            central.notify(uuid, value[start : start + size])

    def square(self, name: str) -> chess.Square:
        """A square name in the player's frame → the board's own square."""
        return self.frame(chess.parse_square(name))

    def frame(self, square: chess.Square) -> chess.Square:
        """Player's frame ↔ board frame (a board set up from Black's side is turned round)."""
        return 63 - square if self._rotated else square
