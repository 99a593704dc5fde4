"""Which ledger the running command uses, so its messages name that one.

A failure is explained after the command has returned (pipelines.cli.app.main); by then only
what the command recorded here says whether --home pointed somewhere else than the default.
"""

from __future__ import annotations

import os
from pathlib import Path

from db.redact import redact_url, secrets_of
from pipelines.settings import Settings

_in_use: list[Settings] = []  # the settings of the command running now (at most one)


def settings_for(home: Path | None) -> Settings:
    """The command's settings (--home, else SPECLEDGER_HOME, else ./var), remembered."""
    settings = Settings(home=home) if home is not None else Settings()
    _in_use[:] = [settings]
    return settings


def forget() -> None:
    """No command has run yet (the next one records its settings)."""
    _in_use.clear()


def _settings() -> Settings:
    return _in_use[0] if _in_use else Settings()


def ledger_shown() -> str:
    """The ledger's URL as it may be shown (password masked)."""
    try:
        return redact_url(_settings().resolved_database_url)
    except Exception:  # settings that do not even load: say less rather than fail again
        return "(SPECLEDGER_DATABASE_URL)"


def known_secrets() -> list[str]:
    """Passwords of the configured ledger URL, to mask wherever they appear."""
    urls = [os.environ.get("SPECLEDGER_DATABASE_URL")]
    try:
        urls.append(_settings().resolved_database_url)
    except Exception:  # the environment alone then
        pass
    return [secret for url in urls for secret in secrets_of(url)]
