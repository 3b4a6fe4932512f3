"""The broker a bench runs on: one private Mosquitto, or a private three-node NATS cluster.

Both are started by the bench on loopback and stopped after it, so the fleet and relay figures
can be measured on each in the same invocation (``--brokers mosquitto cluster``) and printed
side by side. On the cluster, client number ``i`` is given the nodes' list starting at node
``i % 3`` (the tables spread over the nodes, each with the others to go on to, as
docs/cluster.md advises), and the bench's own subscribers and baseline publishers sit on the
first node, beside the relay.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from bench.latency_bench import mosquitto_version, private_broker_process, split_url

Kind = Literal["mosquitto", "cluster"]
KINDS: Final[tuple[Kind, ...]] = ("mosquitto", "cluster")


@dataclass(frozen=True)
class Broker:
    """A running broker: its nodes' URLs (one for Mosquitto) and the processes serving them."""

    kind: Kind
    nodes: tuple[str, ...]
    pids: tuple[int, ...]

    def url_for(self, index: int) -> str:
        """The ``--broker`` value of client ``index``: every node, starting at its own."""
        count = len(self.nodes)
        return ",".join(self.nodes[(index + i) % count] for i in range(count))

    @property
    def first(self) -> tuple[str, int]:
        """Host and port of the first node: where the bench's own clients connect."""
        return split_url(self.nodes[0])

    @property
    def label(self) -> str:
        return "one Mosquitto" if self.kind == "mosquitto" else f"{len(self.nodes)} NATS nodes"


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--brokers``: the brokers a bench runs on, in turn (``args.brokers``)."""
    parser.add_argument(
        "--brokers",
        nargs="+",
        choices=KINDS,
        default=["mosquitto"],
        help="one Mosquitto (default), three NATS nodes (cluster), or both side by side",
    )


def describe(kind: Kind) -> str:
    """The broker's software and version, for a bench's header."""
    if kind == "mosquitto":
        return f"mosquitto {mosquitto_version()}"
    from tests.nats_cluster import NATS_CANDIDATES

    found = shutil.which("nats-server")
    binary = next((c for c in (found, *NATS_CANDIDATES) if c and Path(c).exists()), None)
    if binary is None:
        raise SystemExit("nats-server not found: install the Debian package nats-server")
    out = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, timeout=5, check=False
    ).stdout
    return out.strip() or "nats-server"


@contextlib.asynccontextmanager
async def running(kind: Kind, mosquitto_config: str = "") -> AsyncIterator[Broker]:
    """Start a private broker of ``kind`` (``mosquitto_config``: lines added to Mosquitto's
    configuration) and yield it; stopped on the way out."""
    if kind == "mosquitto":
        with private_broker_process(mosquitto_config) as (url, pid):
            yield Broker(kind, (url,), (pid,))
        return
    from tests.nats_cluster import NatsCluster  # the tests' harness: the same three nodes

    with tempfile.TemporaryDirectory(prefix="bench-nats-") as directory:
        cluster = NatsCluster(Path(directory))
        await cluster.start()
        try:
            yield Broker(
                kind,
                tuple(node.url for node in cluster.nodes),
                tuple(node.pid for node in cluster.nodes),
            )
        finally:
            cluster.stop()
