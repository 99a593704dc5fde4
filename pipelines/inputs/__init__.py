"""Every file reader: source packs, scenarios, TCO scenarios, the metric catalogue, adapters for
files people already have, and the bounds every reader checks."""
