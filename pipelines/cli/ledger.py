"""Which ledger the running command uses, so its messages name that one.

A failure is explained after the command has returned (pipelines.cli.app.main); by then only
what the command recorded here says whether --home pointed somewhere else than the default.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pydantic and SQLAlchemy load with the first command that needs them
    from pipelines.settings import Settings

_in_use: list[Settings] = []  # the settings of the command running now (at most one)


def settings_for(home: Path | None) -> Settings:
    """The command's settings (--home, else SPECLEDGER_HOME, else ./var), remembered."""
    from pipelines.settings import Settings

    settings = Settings(home=home) if home is not None else Settings()
    _in_use[:] = [settings]
    return settings


def forget() -> None:
    """No command has run yet (the next one records its settings)."""
    _in_use.clear()


def _settings() -> Settings:
    from pipelines.settings import Settings

    return _in_use[0] if _in_use else Settings()


def ledger_shown() -> str:
    """The ledger's URL as it may be shown (password masked)."""
    from db.redact import redact_url

    try:
        return redact_url(_settings().resolved_database_url)
    except Exception:  # settings that do not even load: say less rather than fail again
        return "(SPECLEDGER_DATABASE_URL)"


def known_secrets() -> list[str]:
    """Passwords of the configured ledger URL, to mask wherever they appear."""
    from db.redact import secrets_of

    urls = [os.environ.get("SPECLEDGER_DATABASE_URL")]
    try:
        urls.append(_settings().resolved_database_url)
    except Exception:  # the environment alone then
        pass
    return [secret for url in urls for secret in secrets_of(url)]
