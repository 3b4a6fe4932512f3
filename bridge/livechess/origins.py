"""Which web pages may use the LiveChess API (pure).

Any website open in the user's browser could reach ``ws://localhost:1982`` and call ``setup``,
so a browser page is let in only from an allowed origin: its ``Origin`` header is matched
against patterns ``scheme://host[:port]``, where the host may start with ``*.`` (any subdomain,
not the domain itself) and the port may be ``*`` (any, or none). ``*`` alone allows every page;
``null`` allows pages that have no origin of their own (a file opened from the disk, a
sandboxed frame: any website can make one, so it is never a default). A client without an
``Origin`` header is not a web page (a tool, a script) and is let in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

DEFAULT_ORIGINS: Final = (
    "https://lichess.org",
    "https://*.lichess.org",
    "https://chess.com",
    "https://*.chess.com",
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
)
"""lichess.org, chess.com, and the pages of this machine."""

_DEFAULT_PORTS: Final = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class _Pattern:
    scheme: str
    host: str
    subdomains: bool
    port: int | None
    """``None``: any port."""


class Origins:
    """The allowed origins."""

    def __init__(self, patterns: tuple[str, ...] = DEFAULT_ORIGINS) -> None:
        """Raises:
        ValueError: a pattern that is not ``scheme://host[:port]`` (``*.`` and ``:*`` as
            above), ``*`` or ``null``; the message names it.
        """
        self.patterns = patterns
        self._any = "*" in patterns
        self._null = "null" in patterns
        self._parsed = [_parse(text) for text in patterns if text not in ("*", "null")]

    def allows(self, origin: str | None) -> bool:
        """Whether a client sending ``origin`` (``None``: no ``Origin`` header) may connect."""
        if origin is None or self._any:
            return True
        origin = origin.strip()
        if origin == "null":
            return self._null
        parts = urlsplit(origin.lower())
        try:
            port = parts.port
        except ValueError:
            return False
        host = parts.hostname
        if host is None or parts.scheme not in _DEFAULT_PORTS:
            return False
        port = port if port is not None else _DEFAULT_PORTS[parts.scheme]
        return any(_matches(pattern, parts.scheme, host, port) for pattern in self._parsed)


def _matches(pattern: _Pattern, scheme: str, host: str, port: int) -> bool:
    if pattern.scheme != scheme or (pattern.port is not None and pattern.port != port):
        return False
    if pattern.subdomains:
        return host.endswith("." + pattern.host)
    return host == pattern.host


def _parse(text: str) -> _Pattern:
    wrong = ValueError(
        f"origin {text!r} is not scheme://host[:port] (http or https; *.domain for its "
        "subdomains, :* for any port), * or null"
    )
    scheme, sep, rest = text.strip().lower().partition("://")
    if not sep or scheme not in _DEFAULT_PORTS or not rest or "/" in rest or "@" in rest:
        raise wrong
    any_port = rest.endswith(":*")
    if any_port:
        rest = rest[:-2]
    parts = urlsplit(f"{scheme}://{rest}")
    try:
        port = parts.port
    except ValueError:
        raise wrong from None
    host = parts.hostname
    if not host or (any_port and port is not None):
        raise wrong
    subdomains = host.startswith("*.")
    if subdomains:
        host = host[2:]
    if not host or "*" in host:
        raise wrong
    if not any_port and port is None:
        port = _DEFAULT_PORTS[scheme]
    return _Pattern(scheme, host, subdomains, None if any_port else port)
