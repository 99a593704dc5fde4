"""all_flags: every family of flags in one deterministic, deduplicated, ordered list."""

from datetime import UTC, date, datetime

import pandas as pd

from models.resolve import CONFLICT_TOLERANCE
from models.trends import TrendParams, all_flags, deduplicate
from models.trends.types import SEVERITIES, Flag, by_severity
from tests.models.trends.frames import frame, obs_row, rack, threshold

PREVIOUS = datetime(2026, 1, 1, tzinfo=UTC)
CUTOFF = datetime(2026, 2, 1, tzinfo=UTC)
ON = date(2026, 2, 1)


def ledger() -> pd.DataFrame:
    return frame([
        threshold("air-cooling", 20, 40, "guide"),
        rack("gb200", 132, date(2024, 1, 1)),
        rack("vr200", 210, date(2026, 1, 1), recorded_at=datetime(2026, 1, 15, tzinfo=UTC)),
        obs_row(item="nvlink-5", value=1800, as_of=date(2024, 3, 18)),
        obs_row(item="nvlink-6", value=3600, as_of=date(2026, 1, 5), source_kind="vendor_press"),
        obs_row(item="ib-xdr", item_kind="scaleout_fabric", metric="port_rate", unit="Gb/s",
                value=800, as_of=date(2024, 3, 18), source="quantum-page"),
    ])


def flags(**kwargs):
    options = {"on": ON, "cutoff": CUTOFF, "previous_cutoff": PREVIOUS,
               "params": TrendParams(), **kwargs}
    return all_flags(ledger(), **options)


def test_default_parameters():
    params = TrendParams()
    assert (params.stale_after_days, params.tolerance, params.nics_per_gpu,
            params.result_tolerance, params.evidence_metrics) == (730, CONFLICT_TOLERANCE,
                                                                   1.0, 0.05, None)


def test_all_families_of_flags_come_back_most_severe_first():
    found = flags(previous_results=pd.DataFrame(
                      [("s", "compute-bound", "scale-out", float("nan"))],
                      columns=["scenario", "c2c_class", "recommended_fabric",
                               "break_even_speedup"]),
                  current_results=pd.DataFrame(
                      [("s", "communication-bound", "scale-up", float("nan"))],
                      columns=["scenario", "c2c_class", "recommended_fabric",
                               "break_even_speedup"]))
    kinds = {f.kind for f in found}
    assert {"density_threshold", "density_growth", "interconnect_trend", "bandwidth_ratio",
            "single_source", "claim_without_measurement", "added", "result_moved"} <= kinds
    ranks = [SEVERITIES.index(f.severity) for f in found]
    assert ranks == sorted(ranks)
    assert found == by_severity(found)
    assert len({(f.kind, f.subject) for f in found}) == len(found)


def test_the_same_inputs_give_the_same_flags():
    assert flags() == flags()


def test_results_are_compared_only_when_both_versions_have_them():
    assert "result_moved" not in {f.kind for f in flags()}


def test_evidence_metrics_restrict_the_evidence_flags():
    found = flags(params=TrendParams(evidence_metrics=frozenset({"port_rate"})))
    evidence = {f.metric for f in found if f.kind in ("single_source", "stale",
                                                        "claim_without_measurement")}
    assert evidence == {"port_rate"}


def test_a_first_version_has_one_summary_of_what_was_added():
    added = [f for f in flags(previous_cutoff=None) if f.kind == "added"]
    assert [f.subject for f in added] == ["first dataset version"]


def test_deduplicate_keeps_the_most_severe_flag_per_kind_and_subject():
    info = Flag("conflicting", "info", "x / m", "first")
    warning = Flag("conflicting", "warning", "x / m", "second")
    other = Flag("stale", "info", "x / m", "third")
    assert deduplicate([info, warning, other]) == [warning, other]
    assert deduplicate([warning, Flag("conflicting", "warning", "x / m", "again")]) == [warning]


def test_empty_ledger_gives_only_the_first_version_summary():
    found = all_flags(frame([]), on=ON, cutoff=CUTOFF, previous_cutoff=None,
                      params=TrendParams())
    assert [(f.kind, f.subject) for f in found] == [("added", "first dataset version")]
