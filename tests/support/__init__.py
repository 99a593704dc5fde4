"""Code the tests and the bench scripts share: the kill-trial harness (fault_trials), the briefing
contexts built from dataclasses (contexts, fixture_sources) and the calibration fits whose results
models/ stores (c2c_fit, serving_fit).

The direction is one way: bench/ imports tests.support as a normal module (run a script from the
repository root as `python -m bench.<name>`), and nothing under tests/ imports bench/.
"""
