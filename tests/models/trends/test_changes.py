"""What changed between two dataset versions, and which scenario results moved."""

from datetime import UTC, date, datetime

import pandas as pd

from models.trends import observation_changes, result_changes, result_moves
from tests.models.trends.frames import frame, obs_row

V1 = datetime(2026, 1, 1, 12, tzinfo=UTC)     # previous version's cut-off
V2 = datetime(2026, 1, 8, 12, tzinfo=UTC)     # this version's cut-off
BEFORE = datetime(2026, 1, 1, tzinfo=UTC)     # recorded before V1
DURING = datetime(2026, 1, 5, tzinfo=UTC)     # recorded in (V1, V2]
AFTER = datetime(2026, 1, 9, tzinfo=UTC)      # recorded after V2


def power(item, value, source, recorded_at=BEFORE, **overrides):
    fields = {"item": item, "item_kind": "rack", "metric": "rack_it_power", "unit": "kW",
              "value": value, "source": source, "as_of": date(2025, 1, 1),
              "recorded_at": recorded_at}
    return obs_row(**{**fields, **overrides})


def changes(rows, previous=V1, cutoff=V2, **kwargs):
    return observation_changes(frame(rows), previous_cutoff=previous, cutoff=cutoff, **kwargs)


def summary(result):
    return [(c.kind, c.item, c.source, c.before, c.after, c.observation_ids)
            for c in result.observations]


def test_a_new_figure_from_a_new_source_is_added():
    result = changes([power("gb200", 132, "sheet"), power("gb200", 132, "press", DURING)])
    assert summary(result) == [("added", "gb200", "press", None, 132, (2,))]


def test_a_corrected_figure_is_changed_with_before_and_after():
    rows = [power("gb200", 120, "sheet", superseded_at=DURING),
            power("gb200", 132, "sheet", DURING)]
    assert summary(changes(rows)) == [("changed", "gb200", "sheet", 120, 132, (1, 2))]


def test_a_newer_figure_in_a_sources_series_is_a_change_of_that_source():
    rows = [power("gb200", 120, "sheet"),
            power("gb200", 132, "sheet", DURING, as_of=date(2025, 6, 1))]
    assert summary(changes(rows)) == [("changed", "gb200", "sheet", 120, 132, (1, 2))]


def test_a_restatement_of_the_same_figure_is_not_a_change():
    rows = [power("gb200", 132, "sheet", superseded_at=DURING, quote="old wording"),
            power("gb200", 132, "sheet", DURING, quote="new wording")]
    result = changes(rows)
    assert result.observations == () and result.flags == ()


def test_a_figure_withdrawn_without_a_successor_is_superseded():
    rows = [power("gb200", 132, "sheet"), power("gb300", 142, "sheet", superseded_at=DURING)]
    assert summary(changes(rows)) == [("superseded", "gb300", "sheet", 142, None, (2,))]


def test_only_the_window_counts():
    rows = [power("old", 1, "s"), power("late", 2, "s", AFTER),
            power("gone-late", 3, "s", superseded_at=AFTER),
            power("gone-early", 4, "s", superseded_at=datetime(2025, 12, 1, tzinfo=UTC)),
            power("blip", 5, "s", DURING, superseded_at=DURING)]
    assert changes(rows).observations == ()


def test_changes_across_three_versions_follow_each_window():
    rows = [power("gb200", 120, "sheet", superseded_at=DURING),
            power("gb200", 132, "sheet", DURING, superseded_at=AFTER),
            power("gb200", 135, "sheet", AFTER)]
    first = changes(rows)
    second = changes(rows, previous=V2, cutoff=datetime(2026, 1, 15, tzinfo=UTC))
    assert [(c.before, c.after) for c in first.observations] == [(120, 132)]
    assert [(c.before, c.after) for c in second.observations] == [(132, 135)]


def test_a_change_that_moves_the_resolved_value_warns_per_pair():
    rows = [power("gb200", 120, "sheet", superseded_at=DURING, as_of_precision="year"),
            power("gb200", 132, "sheet", DURING, as_of_precision="year")]
    [flag] = changes(rows).flags
    assert (flag.kind, flag.severity, flag.subject) == ("changed", "warning",
                                                        "gb200 / rack_it_power")
    assert "sheet 120 kW → 132 kW (2025)" in flag.message
    assert "moved from 120 kW (sheet, 2025) to 132 kW (sheet, 2025), beyond 1%" in flag.message
    assert flag.observation_ids == (1, 2)


def test_a_change_within_the_tolerance_is_information_grouped_by_source():
    rows = [power("gb200", 132, "sheet", superseded_at=DURING),
            power("gb200", 132.5, "sheet", DURING)]
    [flag] = changes(rows).flags
    assert (flag.severity, flag.subject) == ("info", "source sheet")
    assert "1 value(s) changed" in flag.message


def test_a_new_source_that_outranks_the_old_one_warns():
    rows = [power("gb200", 120, "press", source_kind="secondary_press"),
            power("gb200", 132, "sheet", DURING)]
    [flag] = changes(rows).flags
    assert (flag.kind, flag.severity) == ("added", "warning")
    assert "moved from 120 kW (press, 2025-01-01) to 132 kW (sheet, 2025-01-01)" in flag.message


def test_many_added_values_from_one_source_are_one_flag():
    rows = [power(f"rack-{n}", 100 + n, "dataset", DURING) for n in range(12)]
    [flag] = changes(rows).flags
    assert (flag.kind, flag.subject) == ("added", "source dataset")
    assert "12 value(s) added" in flag.message and "and 7 more" in flag.message
    assert len(flag.observation_ids) == 12
    assert len(changes(rows).observations) == 12


def test_the_first_version_adds_everything_under_one_flag():
    rows = [power(f"rack-{n}", 100 + n, f"source-{n % 3}") for n in range(30)]
    result = observation_changes(frame(rows), previous_cutoff=None, cutoff=V2)
    assert len(result.observations) == 30
    assert {c.kind for c in result.observations} == {"added"}
    [flag] = result.flags
    assert (flag.kind, flag.subject) == ("added", "first dataset version")
    assert "30 observations of 30 items and 1 metrics from 3 sources" in flag.message


def results(*rows):
    return pd.DataFrame(rows, columns=["scenario", "c2c_class", "recommended_fabric",
                                       "break_even_speedup"])


PREVIOUS = results(("gpt3-nvl72", "performance-sensitive", "scale-up", float("nan")),
                   ("tco-nvl72-vs-ib", None, None, 1.20),
                   ("llama-8b", "compute-bound", "scale-out", float("nan")))


def test_result_moved_on_class_fabric_or_break_even_beyond_tolerance():
    current = results(("gpt3-nvl72", "communication-bound", "scale-up", float("nan")),
                      ("tco-nvl72-vs-ib", None, None, 1.30),
                      ("llama-8b", "compute-bound", "scale-out", float("nan")))
    flags = {f.subject: f for f in result_changes(PREVIOUS, current, tolerance=0.05)}
    assert set(flags) == {"gpt3-nvl72", "tco-nvl72-vs-ib"}
    gpt3 = flags["gpt3-nvl72"]
    assert (gpt3.kind, gpt3.severity, gpt3.scenario) == ("result_moved", "warning", "gpt3-nvl72")
    assert "C2C class performance-sensitive → communication-bound" in gpt3.message
    assert "break-even speed-up 1.2 → 1.3 (+8 %)" in flags["tco-nvl72-vs-ib"].message


def test_break_even_within_tolerance_does_not_move():
    current = results(("tco-nvl72-vs-ib", None, None, 1.25))  # +4.2 %
    assert result_changes(PREVIOUS, current, tolerance=0.05) == []
    assert len(result_changes(PREVIOUS, current, tolerance=0.04)) == 1


def test_result_moves_table_lists_each_field_that_moved():
    current = results(("gpt3-nvl72", "communication-bound", "scale-out", float("nan")))
    moves = result_moves(PREVIOUS, current)
    assert moves.to_dict("records") == [
        {"scenario": "gpt3-nvl72", "field": "c2c_class", "before": "performance-sensitive",
         "after": "communication-bound"},
        {"scenario": "gpt3-nvl72", "field": "recommended_fabric", "before": "scale-up",
         "after": "scale-out"}]


def test_a_result_present_on_one_side_only_did_not_move():
    current = results(("gpt3-nvl72", "performance-sensitive", "scale-up", 1.1),
                      ("new-scenario", "compute-bound", "scale-out", float("nan")))
    assert result_moves(PREVIOUS, current).empty
    assert result_changes(PREVIOUS, current) == []
