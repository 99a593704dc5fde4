"""Prefect flows, the CLI and settings: the composition root of specledger."""
