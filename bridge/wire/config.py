"""The configuration file (TOML) and its schema. Pure: bytes in, a validated ``Config`` out.

Secrets (the broker password) come from here or from the environment, never from the command
line. Example (see docs/chessbridge.example.toml)::

    [broker]
    url = "mqtts://broker.venue.lan:8883"
    username = "t042"
    password = "..."            # or CHESSBRIDGE_MQTT_PASSWORD in the environment
    ca_file = "/etc/chessbridge/ca.pem"

    [engine]
    dwell = 0.4                 # seconds a piece rests before an ambiguous move counts as released
    clock_white_side = "left"   # default: inferred (the clock running before move 1 is White's)

    [ble]
    radio = "/run/chessbridge/radio"   # a virtual radio instead of Bluetooth (emulated boards)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal
from urllib.parse import urlsplit

import msgspec

from bridge.arbiter import rules
from drivers.link import LinkSettings

ENV_USERNAME: Final = "CHESSBRIDGE_MQTT_USERNAME"
ENV_PASSWORD: Final = "CHESSBRIDGE_MQTT_PASSWORD"
ENV_BLE_RADIO: Final = "CHESSBRIDGE_BLE_RADIO"
ENV_RELAY_PASSWORD: Final = "CHESSBRIDGE_RELAY_PASSWORD"
ENV_LICHESS_TOKEN: Final = "CHESSBRIDGE_LICHESS_TOKEN"

LIVECHESS_LISTEN: Final = "127.0.0.1:1982"
"""Where the LiveChess API listens by default: this machine only, DGT LiveChess's port."""

RULES: Final = ("fide-2018", "fide-1997")
MODES: Final = ("standard", "rapid", "blitz")
DEFAULT_RULES: Final = "fide-2018"


class ConfigError(ValueError):
    """The configuration is invalid; the message says which setting and why."""


class BrokerConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[broker]``."""

    url: str | None = None
    """``mqtt[s]://host[:port]``, or the nodes of a clustered broker separated by commas."""
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    mqtt5: bool = True
    """The table's connection speaks MQTT 5 (a retained request is then recognised also when it
    arrives live); ``false`` for a broker that speaks only 3.1.1 and does not say so."""
    connect_jitter: float = 0.0
    """Seconds over which the first connection is spread (a random wait up to this long): the
    tables of a venue that come back together after a power cut do not reach the broker in one
    burst. 0 (the default): connect at once."""


class EngineSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[engine]``. ``dwell`` and ``flicker`` default to the board family's (its scan rate)."""

    dwell: float | None = None
    flicker: float | None = None
    clock_white_side: Literal["left", "right"] | None = None
    touch_events: bool = True


class BleSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[ble]``: how Bluetooth LE boards are reached."""

    radio: str | None = None
    """A virtual radio's socket instead of the system's Bluetooth (docs/virtual-radio.md)."""
    scan_timeout: float = 10.0
    """Seconds to look for the board before giving up (and retrying)."""
    connect_timeout: float = 20.0
    """Seconds one connection attempt to a board found may take (a few attempts, then the
    supervisor retries with backoff)."""


class LichessSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[relay.lichess]``: push the round to a lichess broadcast round.

    The token comes from ``token_file`` or ``CHESSBRIDGE_LICHESS_TOKEN``, never from here or the
    command line.
    """

    round_id: str
    token_file: str | None = None
    url: str = "https://lichess.org"
    debounce: float = 2.0


class RelaySection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[relay]``: what ``chessbridge relay`` broadcasts and who may act on its page."""

    round: str | None = None
    event: str | None = None
    site: str | None = None
    delay: float = 0.0
    """Broadcast delay in minutes."""
    password: str | None = None
    secure_cookies: bool = False
    state_dir: str | None = None
    lichess: LichessSection | None = None


class DiscoverySection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[discovery]``: retained descriptions for dashboards (bridge/wire/discovery.py); off."""

    index: bool = False
    """Publish ``chessbridge/1/index/{table}``, so a dashboard finds every table."""
    home_assistant: bool = False
    """Publish Home Assistant MQTT discovery for the table's sensors."""
    home_assistant_prefix: str = "homeassistant"
    """Home Assistant's discovery prefix (its MQTT integration's setting)."""


class LiveChessSection(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """``[livechess]``: the DGT LiveChess local API (docs/livechess.md)."""

    listen: str | None = None
    """``[HOST:]PORT``. ``run``: serve the table's board there too (as ``--livechess``);
    ``livechess``: where to listen (as ``--listen``). Default: off for ``run``, else
    127.0.0.1:1982."""
    origins: tuple[str, ...] | None = None
    """The web pages (their ``Origin``) that may connect: ``scheme://host[:port]``, ``*.`` before
    a domain for its subdomains, ``:*`` for any port. Default: lichess.org, chess.com and pages
    of this machine (localhost)."""
    setup: bool | None = None
    """Whether a client's ``setup`` of another position starts a new game. Default: yes for a
    table's own board (``run``, ``livechess --board``), no for a venue's tables."""


class Config(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The whole file; every section optional."""

    broker: BrokerConfig = msgspec.field(default_factory=BrokerConfig)
    engine: EngineSection = msgspec.field(default_factory=EngineSection)
    ble: BleSection = msgspec.field(default_factory=BleSection)
    relay: RelaySection = msgspec.field(default_factory=RelaySection)
    discovery: DiscoverySection = msgspec.field(default_factory=DiscoverySection)
    livechess: LiveChessSection = msgspec.field(default_factory=LiveChessSection)
    rules: str | None = None


def decode(raw: bytes, source: str = "config") -> Config:
    """Parse and validate a TOML config file.

    Raises:
        ConfigError: not TOML, an unknown setting, or a value of the wrong type.
    """
    import tomllib  # only with a config file: not on the way of every start

    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    try:
        config = msgspec.convert(data, Config)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{source}: {exc}") from exc
    engine = config.engine
    if engine.dwell is not None and not 0 <= engine.dwell <= 5:
        raise ConfigError(f"{source}: engine.dwell must be between 0 and 5 seconds")
    if not 0 <= config.broker.connect_jitter <= 60:
        raise ConfigError(f"{source}: broker.connect_jitter must be between 0 and 60 seconds")
    if engine.flicker is not None and not 0 <= engine.flicker <= 2:
        raise ConfigError(f"{source}: engine.flicker must be between 0 and 2 seconds")
    if not 1 <= config.ble.scan_timeout <= 120:
        raise ConfigError(f"{source}: ble.scan_timeout must be between 1 and 120 seconds")
    if not 1 <= config.ble.connect_timeout <= 120:
        raise ConfigError(f"{source}: ble.connect_timeout must be between 1 and 120 seconds")
    if config.rules is not None:
        check_rules(config.rules)
    _check_livechess(config.livechess, source)
    relay = config.relay
    if not 0 <= relay.delay <= 180:
        raise ConfigError(f"{source}: relay.delay must be between 0 and 180 minutes")
    lichess = relay.lichess
    if lichess is not None:
        if len(lichess.round_id) != 8 or not lichess.round_id.isalnum():
            raise ConfigError(
                f"{source}: relay.lichess.round_id must be the 8 letters and digits of the "
                f"round's id (the end of its URL), not {lichess.round_id!r}"
            )
        if not lichess.url.startswith(("https://", "http://")):
            raise ConfigError(f"{source}: relay.lichess.url must start with https://")
        if not 0 <= lichess.debounce <= 60:
            raise ConfigError(f"{source}: relay.lichess.debounce must be 0 to 60 seconds")
    return config


def _check_livechess(section: LiveChessSection, source: str) -> None:
    if section.listen is not None:
        try:
            parse_listen(section.listen)
        except ValueError as exc:
            raise ConfigError(f"{source}: livechess.listen: {exc}") from None
    if section.origins is not None:
        from bridge.livechess.origins import Origins  # only with a config file that lists some

        try:
            Origins(section.origins)
        except ValueError as exc:
            raise ConfigError(f"{source}: livechess.origins: {exc}") from None


def with_environment(config: Config, env: Mapping[str, str]) -> Config:
    """Credentials, the arbiters' password and the virtual radio from the environment override
    those of the file."""
    broker = config.broker
    username = env.get(ENV_USERNAME) or broker.username
    password = env.get(ENV_PASSWORD) or broker.password
    radio = env.get(ENV_BLE_RADIO) or config.ble.radio
    relay_password = env.get(ENV_RELAY_PASSWORD) or config.relay.password
    return msgspec.structs.replace(
        config,
        broker=msgspec.structs.replace(broker, username=username, password=password),
        ble=msgspec.structs.replace(config.ble, radio=radio),
        relay=msgspec.structs.replace(config.relay, password=relay_password),
    )


def link_settings(config: Config) -> LinkSettings:
    """What the board links need of the configuration."""
    ble = config.ble
    return LinkSettings(
        ble_radio=ble.radio,
        ble_scan_timeout=ble.scan_timeout,
        ble_connect_timeout=ble.connect_timeout,
    )


class BrokerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Where the broker is and how to reach it: built once from the command line's URL and the
    config's ``[broker]`` (:func:`broker_settings`), and handed as one object to whatever
    connects (the table's publisher, ``watch``, ``send``, the relay). The password is never
    shown by ``repr``."""

    host: str
    port: int
    tls: bool = False
    """``mqtts://``: TLS, with the files below (the system's CA bundle without ``ca_file``)."""
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    client_id: str | None = None
    """The MQTT client id; ``None``: the connection's own (``chessbridge-{table}`` for a table)."""
    mqtt5: bool = True
    """The table's connection speaks MQTT 5 (``[broker] mqtt5``); the views speak 3.1.1."""
    connect_jitter: float = 0.0
    """Seconds over which the table's first connection is spread (``[broker] connect_jitter``)."""
    others: tuple[tuple[str, int], ...] = ()
    """The further nodes of a clustered broker, ``(host, port)`` each, after ``host:port``
    (``--broker`` with a comma-separated list): the connection goes to the first that answers
    and, once lost, to the next in turn. Credentials and TLS are the same for every node."""

    @property
    def nodes(self) -> tuple[tuple[str, int], ...]:
        """Every node, ``(host, port)``, the first (``host``, ``port``) first."""
        return ((self.host, self.port), *self.others)

    def node(self, index: int) -> BrokerSettings:
        """The settings of node ``index`` alone (modulo the number of nodes)."""
        nodes = self.nodes
        host, port = nodes[index % len(nodes)]
        return msgspec.structs.replace(self, host=host, port=port, others=())

    @property
    def address(self) -> str:
        """``host:port`` (of each node, comma-separated), for logs."""
        return ",".join(f"{host}:{port}" for host, port in self.nodes)

    def __repr__(self) -> str:
        return f"BrokerSettings({self.address}, tls={self.tls}, user={self.username!r})"


def broker_settings(url: str, broker: BrokerConfig | None = None) -> BrokerSettings:
    """The settings of the broker at ``url`` (``mqtt://host[:port]`` or ``mqtts://host[:port]``,
    or several of them separated by commas: the nodes of a clustered broker) with the
    credentials, TLS files and connection options of ``broker`` (a config's ``[broker]``; its
    ``url`` is not used). The TLS files are only named here: the MQTT shell loads them
    (``bridge.mqtt.session.check_tls``).

    Raises:
        ValueError: a malformed URL (see :func:`parse_broker_url`; in a list, the message says
            which one), a list that mixes ``mqtt://`` and ``mqtts://`` or names a node twice,
            or TLS files with ``mqtt://``.
    """
    urls = [part.strip() for part in url.split(",")]
    if len(urls) > 1 and "@" in url:
        # Before splitting: a password may hold a comma, and a piece of it must not be shown.
        raise ValueError(
            "put the broker username/password in the config or environment, not in the URL"
        )
    if len(urls) == 1:
        host, port, tls = parse_broker_url(urls[0])
        others: tuple[tuple[str, int], ...] = ()
    else:
        nodes: list[tuple[str, int]] = []
        schemes: set[bool] = set()
        for number, part in enumerate(urls, 1):
            if not part:
                raise ValueError(
                    f"broker URL number {number} of the list {redact_url(url)!r} is empty: "
                    "separate the nodes' URLs with single commas"
                )
            try:
                node_host, node_port, node_tls = parse_broker_url(part)
            except ValueError as exc:
                raise ValueError(f"broker URL number {number} of the list: {exc}") from None
            if (node_host, node_port) in nodes:
                raise ValueError(
                    f"broker URL number {number} of the list names {node_host}:{node_port} "
                    "again: give each node once"
                )
            nodes.append((node_host, node_port))
            schemes.add(node_tls)
        if len(schemes) > 1:
            raise ValueError(
                "the broker URLs mix mqtt:// and mqtts://: the nodes of one broker share its "
                "TLS settings, so give them all the same scheme"
            )
        (host, port), *rest = nodes
        others = tuple(rest)
        tls = schemes.pop()
    broker = BrokerConfig() if broker is None else broker
    if not tls and (broker.ca_file or broker.cert_file or broker.key_file):
        raise ValueError("TLS files given but the broker URL is not mqtts://")
    return BrokerSettings(
        host=host,
        port=port,
        tls=tls,
        username=broker.username,
        password=broker.password,
        ca_file=broker.ca_file,
        cert_file=broker.cert_file,
        key_file=broker.key_file,
        mqtt5=broker.mqtt5,
        connect_jitter=broker.connect_jitter,
        others=others,
    )


def parse_broker_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of ``mqtt://host[:port]`` or ``mqtts://host[:port]``.

    Raises:
        ValueError: another scheme, no host, a bad port, a path, or credentials in the URL
            (they belong in the config file or the environment, never on a command line). The
            message never repeats credentials found in the URL.
    """
    shown = redact_url(url)
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"broker URL must start with mqtt:// or mqtts://: {shown!r}")
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            "put the broker username/password in the config or environment, not in the URL"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"broker URL must be mqtt[s]://host[:port]: {shown!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"bad port in broker URL {shown!r}") from None
    if not parts.hostname:
        raise ValueError(f"no host in broker URL {shown!r}")
    tls = parts.scheme == "mqtts"
    return parts.hostname, port if port is not None else (8883 if tls else 1883), tls


def parse_listen(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``[HOST:]PORT`` (``[::1]:1982`` for IPv6; a port alone is on
    127.0.0.1, this machine only). Port 0: any free one.

    Raises:
        ValueError: anything else.
    """
    host, colon, port = text.strip().rpartition(":")
    if not colon:
        host = "127.0.0.1"
    bracketed = host.startswith("[") and host.endswith("]")
    host = host[1:-1] if bracketed else host
    if not host or (":" in host and not bracketed) or not port.isdigit() or int(port) > 65535:
        raise ValueError(
            f"{text!r} is not [HOST:]PORT: e.g. 1982, 127.0.0.1:1982, 0.0.0.0:1982 or [::1]:1982"
        )
    return host, int(port)


def redact_url(url: str) -> str:
    """``url`` with whatever stands before its last ``@`` (after the scheme) replaced by ``***``.

    The last ``@`` of the whole rest, not of the authority as a URL parser finds it: a password
    may hold ``/``, ``?`` or ``#``, which would end the authority before the ``@`` and leave the
    password's tail in the "path". A broker URL has no path to lose.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if "@" in rest:
        rest = "***@" + rest.rpartition("@")[2]
    return f"{scheme}{sep}{rest}"


def check_rules(text: str) -> str:
    """Validate a rules edition: ``fide-2018`` or ``fide-1997``, optionally ``-rapid``/``-blitz``.

    Returns the canonical label (``-standard`` is accepted and dropped).

    Raises:
        ConfigError: an unknown edition or mode.
    """
    label = text.removesuffix("-standard")
    if label in rules.EDITIONS:
        return label
    choices = ", ".join(f"{e}[-{'|-'.join(MODES)}]" for e in RULES)
    raise ConfigError(f"unknown rules edition {text!r}; choose one of {choices}")
