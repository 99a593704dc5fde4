"""Every published set the models are checked against, in one list: the C2C model's training
runs, then the serving model's measured serving points (one set per GPU family), then the
phase-isolated serving throughputs it is checked on and not fitted on. The tables are
arguments (pipelines/inputs/measurements.py reads them from data/measurements/)."""

from __future__ import annotations

from models.c2c.measured_runs import TrainingRuns
from models.c2c.validation import SetReport, fidelity_report
from models.serving.measured_points import ServingPoints
from models.serving.phases import PhasePoints, phase_report
from models.serving.validation import fidelity_report as serving_report


def validation_reports(runs: TrainingRuns, points: ServingPoints,
                       phases: PhasePoints | None = None) -> tuple[SetReport, ...]:
    """The C2C sets, then the serving sets, then the phase checks when given (`specledger
    validate`, model_error, the briefing)."""
    phase_set = phase_report(phases) if phases is not None else None
    return (*fidelity_report(runs), *serving_report(points),
            *((phase_set,) if phase_set is not None else ()))
