"""Fixtures shared by the ledger's result and warehouse tests."""

from __future__ import annotations

import pytest

from db.engine import Engine
from tests.conftest import NVLINK_PACK


@pytest.fixture
def versions(ledger: Engine, ingest, write_pack, clock) -> tuple[int, int]:
    """Two dataset versions: the NVLink pack, then a correction of it."""
    first = ingest(write_pack("v1.yaml", NVLINK_PACK)).dataset_version
    clock.tick()
    second = ingest(write_pack("v2.yaml", NVLINK_PACK.replace("value: 1.8,", "value: 1.9,")))
    return first, second.dataset_version
