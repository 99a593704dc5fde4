"""One typed settings object, read at the edge (CLI, flow entry) and passed down."""

from __future__ import annotations

import unicodedata
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from pipelines.inputs.limits import DEFAULT_LIMITS, InputLimits

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def _no_control_characters(text: str) -> None:
    """A header value is one line of printable text: CR or LF would start another header
    (and Python's e-mail package refuses them only when the message is made, mid-run)."""
    bad = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cc"})
    if bad:
        raise ValueError(f"holds control characters ({', '.join(bad)}); give it on one line "
                         "without them")


# Upper bounds a setting is checked against when it is read, each with why: a value past
# them is refused by name with the range, never accepted and failing later in a query, a
# timedelta or a sleep.
MAX_LOCK_TIMEOUT_SECONDS = (2**31 - 1) // 1000   # PostgreSQL's lock_timeout: int32 ms
MAX_AGE_DAYS = 36_500          # a century: past it, a date difference has no meaning here
MAX_RETRIES = 100              # more retries than that is a loop, not a policy
MAX_WAIT_SECONDS = 86_400.0    # a day: the run is weekly

class Settings(BaseSettings):
    """specledger configuration; every field can be set as SPECLEDGER_<NAME>."""

    model_config = SettingsConfigDict(env_prefix="SPECLEDGER_", env_file=".env", extra="ignore")

    home: Path = Path("var")
    # Secret: printing the settings (a traceback's locals, a task's parameters) shows ***.
    database_url: SecretStr | None = None
    sources_dir: Path = PROJECT_ROOT / "data" / "sources"
    catalog_path: Path = PROJECT_ROOT / "data" / "catalog.yaml"
    # Names other files use for the ledger's items (Epoch's "NVIDIA H100 SXM5 80GB" -> h100-sxm5).
    aliases_path: Path = PROJECT_ROOT / "data" / "item_aliases.yaml"
    scenarios_dir: Path = PROJECT_ROOT / "data" / "scenarios"
    # At most what PostgreSQL's lock_timeout takes (milliseconds in a 32-bit integer).
    lock_timeout_seconds: float = Field(60.0, ge=0, le=MAX_LOCK_TIMEOUT_SECONDS,
                                        allow_inf_nan=False)
    # A run whose database connection was lost (server restart) retries its ledger update.
    ledger_retries: int = Field(2, ge=0, le=MAX_RETRIES)
    ledger_retry_delay_seconds: float = Field(15.0, ge=0, le=MAX_WAIT_SECONDS,
                                              allow_inf_nan=False)
    # Flags: a value with no observation newer than this is stale; sources disagreeing by more
    # than flag_tolerance (relative) conflict; a break-even speed-up moving by more than
    # result_tolerance (relative) is a result move.
    stale_after_days: int = Field(730, ge=1, le=MAX_AGE_DAYS)
    # The market's age limit: an offer priced more than this many days before a dataset
    # version's date leaves that version's price index and is listed as stale
    # (models/market/valid_time.py, whose MAX_OFFER_AGE_DAYS it equals; written out here so
    # that reading the settings does not load pandas). A large number keeps every offer.
    market_max_age_days: int = Field(120, ge=1, le=MAX_AGE_DAYS)
    flag_tolerance: float = Field(0.01, ge=0, le=10, allow_inf_nan=False)
    result_tolerance: float = Field(0.05, ge=0, le=10, allow_inf_nan=False)
    # Per-GPU scale-out bandwidth = NIC rate x this (rail-optimised 8-GPU nodes: one NIC a GPU).
    nics_per_gpu: float = Field(1.0, gt=0, le=64, allow_inf_nan=False)
    comparison_path: Path = PROJECT_ROOT / "data" / "comparison.yaml"
    # Remote sources (pipelines/fetch/remote.py): files declared by URL, fetched before the ingest.
    # A missing declaration file means none. Each fetch attempt may take fetch_timeout_seconds
    # in all; a failed attempt is retried fetch_retries times, waiting fetch_backoff_seconds,
    # doubled after each retry (capped at a minute).
    remote_sources_path: Path = PROJECT_ROOT / "data" / "remote_sources.yaml"
    fetch_timeout_seconds: float = Field(30.0, gt=0, le=MAX_WAIT_SECONDS, allow_inf_nan=False)
    fetch_retries: int = Field(3, ge=0, le=MAX_RETRIES)
    fetch_backoff_seconds: float = Field(2.0, ge=0, le=MAX_WAIT_SECONDS, allow_inf_nan=False)
    # gpuhunt's own setting, under its own name: a mirror of its published catalogs (None:
    # gpuhunt's public bucket). A mirror may be on the LAN (its sources may reach it).
    gpuhunt_catalog_url: str | None = Field(None, validation_alias="GPUHUNT_CATALOG_URL")
    # Skip every remote source (`specledger run --offline`): the last good copies stand.
    offline: bool = False
    # Bounds on one input (pipelines/inputs/limits.py): larger inputs are refused, saying why.
    max_file_bytes: int = Field(DEFAULT_LIMITS.max_file_bytes, gt=0)
    max_rows_per_file: int = Field(DEFAULT_LIMITS.max_rows_per_file, gt=0)
    yaml_max_depth: int = Field(DEFAULT_LIMITS.yaml_max_depth, gt=0)
    yaml_max_alias_nodes: int = Field(DEFAULT_LIMITS.yaml_max_alias_nodes, ge=0)
    json_max_depth: int = Field(DEFAULT_LIMITS.json_max_depth, gt=0)
    fetch_max_bytes: int = Field(DEFAULT_LIMITS.fetch_max_bytes, gt=0)
    sweep_max_layouts: int = Field(DEFAULT_LIMITS.sweep_max_layouts, gt=0)
    max_samples: int = Field(DEFAULT_LIMITS.max_samples, gt=0)
    # Delivery of the weekly briefing (pipelines/delivery/deliver.py). E-mail: sent through
    # smtp_host (None: no e-mail) to mail_to (comma-separated in the environment; empty: no
    # e-mail), from mail_from; smtp_security is "none", "starttls" (upgrade a plain connection)
    # or "ssl" (TLS from the start, usually port 465); smtp_user / smtp_password log in when a
    # user is set. A whole SMTP exchange (connect to the last reply) may take
    # smtp_timeout_seconds. An address holding a control character (CR, LF, ...) is refused
    # when the settings are read: it would end a mail header early.
    smtp_host: str | None = None
    smtp_port: int = Field(25, gt=0, le=65535)
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_security: Literal["none", "starttls", "ssl"] = "none"
    smtp_timeout_seconds: float = Field(30.0, gt=0, le=MAX_WAIT_SECONDS, allow_inf_nan=False)
    mail_from: str = "specledger@localhost"
    mail_to: Annotated[list[str], NoDecode] = []
    # Folder: a copy of the briefing's PDFs written into delivery_dir (None: no copy).
    delivery_dir: Path | None = None
    # A failed delivery is retried delivery_retries times per channel, waiting
    # delivery_retry_delay_seconds, doubled after each retry (capped at a minute).
    delivery_retries: int = Field(3, ge=0, le=MAX_RETRIES)
    delivery_retry_delay_seconds: float = Field(5.0, ge=0, le=MAX_WAIT_SECONDS,
                                                allow_inf_nan=False)

    @field_validator("mail_to", mode="before")
    @classmethod
    def _addresses(cls, value: Any) -> Any:
        """`a@example.com, b@example.com` (the environment's form) as a list of addresses."""
        if isinstance(value, str):
            _no_control_characters(value)
            return [address.strip() for address in value.split(",") if address.strip()]
        return value

    @field_validator("mail_to", "mail_from", "smtp_host", "smtp_user")
    @classmethod
    def _one_line(cls, value: Any) -> Any:
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str):
                _no_control_characters(text)
        return value

    @property
    def input_limits(self) -> InputLimits:
        """The bounds every reader checks, as one plain value to pass down."""
        return InputLimits(**{f.name: getattr(self, f.name) for f in fields(InputLimits)})

    @property
    def resolved_database_url(self) -> str:
        """The ledger URL: SPECLEDGER_DATABASE_URL, else a SQLite file under home."""
        if self.database_url and self.database_url.get_secret_value():
            return self.database_url.get_secret_value()
        return f"sqlite:///{(self.home / 'specledger.sqlite').resolve()}"

    @property
    def warehouse_path(self) -> Path:
        return self.home / "warehouse.duckdb"

    @property
    def briefings_dir(self) -> Path:
        return self.home / "briefings"
