"""One typed settings object, read at the edge (CLI, flow entry) and passed down."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from pipelines.limits import DEFAULT_LIMITS, InputLimits

PROJECT_ROOT = Path(__file__).resolve().parents[1]


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
    lock_timeout_seconds: float = 60.0
    # A run whose database connection was lost (server restart) retries its ledger update.
    ledger_retries: int = 2
    ledger_retry_delay_seconds: float = 15.0
    # Flags: a value with no observation newer than this is stale; sources disagreeing by more
    # than flag_tolerance (relative) conflict; a break-even speed-up moving by more than
    # result_tolerance (relative) is a result move.
    stale_after_days: int = 730
    flag_tolerance: float = 0.01
    result_tolerance: float = 0.05
    # Per-GPU scale-out bandwidth = NIC rate x this (rail-optimised 8-GPU nodes: one NIC a GPU).
    nics_per_gpu: float = 1.0
    comparison_path: Path = PROJECT_ROOT / "data" / "comparison.yaml"
    # Remote sources (pipelines/remote.py): files declared by URL, fetched before the ingest.
    # A missing declaration file means none. Each fetch attempt may take fetch_timeout_seconds
    # in all; a failed attempt is retried fetch_retries times, waiting fetch_backoff_seconds,
    # doubled after each retry (capped at a minute).
    remote_sources_path: Path = PROJECT_ROOT / "data" / "remote_sources.yaml"
    fetch_timeout_seconds: float = 30.0
    fetch_retries: int = 3
    fetch_backoff_seconds: float = 2.0
    # Bounds on one input (pipelines/limits.py): larger inputs are refused with a clear reason.
    max_file_bytes: int = DEFAULT_LIMITS.max_file_bytes
    max_rows_per_file: int = DEFAULT_LIMITS.max_rows_per_file
    yaml_max_depth: int = DEFAULT_LIMITS.yaml_max_depth
    yaml_max_alias_nodes: int = DEFAULT_LIMITS.yaml_max_alias_nodes
    json_max_depth: int = DEFAULT_LIMITS.json_max_depth
    fetch_max_bytes: int = DEFAULT_LIMITS.fetch_max_bytes
    sweep_max_layouts: int = DEFAULT_LIMITS.sweep_max_layouts
    max_samples: int = DEFAULT_LIMITS.max_samples

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
