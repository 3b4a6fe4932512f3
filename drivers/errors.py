"""Errors of board links. Board *bytes* never raise; these mean the link itself failed."""

from __future__ import annotations


class LinkError(Exception):
    """A board link failed; ``path`` names the device, the message says what to do."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class BoardNotFoundError(LinkError):
    """The device path cannot be opened (absent, unplugged, no permission)."""


class AmbiguousBoardError(LinkError):
    """The board was given by a name that more than one board in range answers to."""


class NotABoardError(LinkError):
    """The device opened but did not answer as the expected board does."""


class LinkLostError(LinkError):
    """An open link went silent or was closed (cable pulled, board switched off)."""
