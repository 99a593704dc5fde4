"""Trends and flags: pure functions over the ledger's observations (no I/O, no clock)."""
