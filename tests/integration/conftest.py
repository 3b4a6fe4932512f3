"""Fixtures of the integration tests that need more than tests/conftest.py gives every test."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.nats_cluster import NatsCluster


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[NatsCluster]:
    """Three NATS nodes (tests/nats_cluster.py), started, stopped after the test."""
    nats = NatsCluster(tmp_path / "nats")
    try:
        await nats.start()
        yield nats
    finally:
        await asyncio.to_thread(nats.stop)
