"""Every published set the models are checked against, in one list: the C2C model's training
runs, then the serving model's measured serving points (one set per GPU family)."""

from __future__ import annotations

from models.c2c.validation import SetReport, fidelity_report
from models.serving.validation import fidelity_report as serving_report


def validation_reports() -> tuple[SetReport, ...]:
    """The C2C sets, then the serving sets (`specledger validate`, model_error, the briefing)."""
    return (*fidelity_report(), *serving_report())
