"""Pure analytics: units, observation validation, conflict resolution (later C2C, TCO)."""
