"""Bounds on what one input may cost: every reader checks them and refuses with a clear reason.

Hostile or careless input is normal input. A file, a remote response, a scenario or a sweep
that would exhaust memory or time is refused (a rejected file, a rejected row or a scenario
error naming the file, line and field), never allowed to stop the run or the machine. The
defaults are generous for real sources; each is a setting (SPECLEDGER_<NAME>, see Settings).
"""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1 << 20
# Keys and names the ledger indexes as unique (sources, items, scenarios): PostgreSQL cannot
# index a text much over 2,700 bytes, and no real key comes near this.
MAX_KEY_LENGTH = 300


@dataclass(frozen=True)
class InputLimits:
    """What one input may hold. Plain values, so readers stay pure and tests can shrink them."""

    # A file read whole (packs, adapters, scenarios): larger files are rejected unread.
    max_file_bytes: int = 256 * MIB
    # Candidate rows in one file; a longer file is a rejected file (split it).
    max_rows_per_file: int = 1_000_000
    # YAML: nesting depth of mappings and lists, and how many nodes aliases may bring in
    # (each alias counts the size of what it refers to: the "billion laughs" defence).
    yaml_max_depth: int = 64
    yaml_max_alias_nodes: int = 10_000
    # JSON (nccl-tests -J, MLPerf): nesting depth.
    json_max_depth: int = 64
    # A remote response body, compressed and after decompression.
    fetch_max_bytes: int = 256 * MIB
    # The C2C sweep's candidate layouts, and Monte Carlo samples of a TCO band.
    sweep_max_layouts: int = 2_000_000
    max_samples: int = 1_000_000


DEFAULT_LIMITS = InputLimits()
