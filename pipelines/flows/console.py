"""Prefect's console log as the CLI shows it: no tracebacks, the ledger password masked."""

from __future__ import annotations

import logging

from prefect.logging.configuration import ensure_logging_setup

from db.redact import redact


class WithoutTraceback(logging.Formatter):
    """Prefect's console format minus tracebacks (the CLI explains a failure itself; the
    Prefect server keeps the full log), with the ledger password masked."""

    def __init__(self, inner: logging.Formatter, secrets: list[str]) -> None:
        super().__init__()
        self.inner, self.secrets = inner, secrets

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text, record.stack_info
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        try:
            return redact(self.inner.format(record), self.secrets)
        finally:
            record.exc_info, record.exc_text, record.stack_info = saved


def console_without_tracebacks(secrets: list[str]) -> None:
    """Prefect's console handler prints no tracebacks and no password."""
    # Configure Prefect's logging now (from the PREFECT_* defaults just set), not lazily in the
    # flow, so that its console handler exists to be changed; later set-ups are incremental.
    ensure_logging_setup()
    for handler in logging.getLogger().handlers:
        if type(handler).__name__ == "PrefectConsoleHandler" and handler.formatter:
            handler.setFormatter(WithoutTraceback(handler.formatter, secrets))
