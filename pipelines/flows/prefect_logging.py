"""Prefect's logging for `specledger run`: its own configuration, less one shutdown message.

Prefect's temporary server is a child process that Prefect stops with SIGTERM when the run
ends. A request still inside the server's database then has its connection's rollback
cancelled, and SQLAlchemy's async pool logs that at ERROR, with a traceback, on the run's
stderr: a run that succeeded looks as if it failed. The child reads the same logging settings
as the run, so the configuration written here is Prefect's own file with one logger raised to
CRITICAL: the async pool's. The ledger's engines are synchronous (other pool classes), so a
pool error of the ledger's own still shows.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

# The pool class of SQLAlchemy's asyncio engines, which only Prefect's server database uses.
ASYNC_POOL_LOGGER = "sqlalchemy.pool.impl.AsyncAdaptedQueuePool"
CONFIG_NAME = "specledger-logging.yml"


def quiet_logging_config(prefect_home: Path) -> Path:
    """Write Prefect's default logging configuration, the async pool's logger at CRITICAL,
    under `prefect_home`, and return its path (for PREFECT_LOGGING_SETTINGS_PATH)."""
    import prefect.logging

    default = Path(prefect.logging.__file__).with_name("logging.yml")
    # Loaded as YAML, not substituted: Prefect fills its ${SETTING} placeholders itself when
    # it reads the file, so they pass through as strings.
    config = yaml.safe_load(default.read_text(encoding="utf-8"))
    config.setdefault("loggers", {})[ASYNC_POOL_LOGGER] = {"level": "CRITICAL"}
    target = prefect_home / CONFIG_NAME
    text = yaml.safe_dump(config, sort_keys=False)
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        partial = target.with_name(f"{CONFIG_NAME}.{os.getpid()}.partial")
        partial.write_text(text, encoding="utf-8")
        partial.replace(target)  # two runs of one home at once never read half a file
    return target
