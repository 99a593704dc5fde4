"""The steps of a run as plain functions: ingest, recompute, flags, fetch, publish, render."""
