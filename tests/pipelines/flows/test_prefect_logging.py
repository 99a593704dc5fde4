"""The logging configuration `specledger run` hands Prefect (and so its temporary server)."""

from __future__ import annotations

import os
import subprocess
import sys

from pipelines.flows.prefect_logging import ASYNC_POOL_LOGGER, quiet_logging_config

# What a process does with Prefect's logging set up from the file: it logs one error from the
# async pool (the temporary server's shutdown message) and one from a synchronous pool.
LOG_BOTH = f"""
import logging
from prefect.logging.configuration import setup_logging
setup_logging()
logging.getLogger({ASYNC_POOL_LOGGER!r}).error("Exception during reset or similar")
logging.getLogger("sqlalchemy.pool.impl.QueuePool").error("the ledger's pool failed")
logging.getLogger("pipelines.delivery.deliver").warning("a folder could not be copied to")
"""


def test_prefect_with_the_file_hides_the_servers_shutdown_message_and_nothing_else(tmp_path):
    path = quiet_logging_config(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(tmp_path), PREFECT_LOGGING_SETTINGS_PATH=str(path))
    done = subprocess.run([sys.executable, "-c", LOG_BOTH], env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert "Exception during reset" not in done.stderr
    assert "the ledger's pool failed" in done.stderr
    assert "a folder could not be copied to" in done.stderr


def test_writing_the_file_twice_leaves_one_file_and_no_partial_one(tmp_path):
    first = quiet_logging_config(tmp_path)
    written = first.stat().st_mtime_ns
    assert quiet_logging_config(tmp_path) == first
    assert first.stat().st_mtime_ns == written  # unchanged content is not rewritten
    assert [p.name for p in tmp_path.iterdir()] == [first.name]
