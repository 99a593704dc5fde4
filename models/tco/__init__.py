"""The TCO model: annualised ownership cost, $/GPU-hour, cost per job, the break-even speed-up
between a scale-up and a scale-out option, Epoch AI's training-run cost, and uncertainty.

Pure functions over floats or numpy arrays (arrays broadcast, so one call evaluates every
Monte Carlo sample). Method: docs/tco-method.md.
"""
