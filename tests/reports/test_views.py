"""What the template is given beyond the context: the summary's flags, counts, error
summaries and numbered inputs."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from models.trends.types import Changes, Flag, ObservationChange
from reports.context import ChangeCount, Cited
from reports.views import (
    COMPACT_FLAG_GROUP,
    change_counts,
    change_totals,
    changes_left_out,
    changes_query,
    flags_by_kind,
    number_inputs,
    scale_up_share,
    spec_sections,
    summarise_flags,
    summarise_validation,
    validation_sets,
)
from tests.support.contexts import D, full_context, scenarios, specs, validation_lines


def flag(kind: str, severity: str, subject: str) -> Flag:
    return Flag(kind, severity, subject, f"{subject} message")


def test_the_summary_keeps_the_most_severe_flags_and_counts_the_rest_by_kind():
    flags = [flag("single_source", "info", f"s{n}") for n in range(4)] + [
        flag("stale", "info", "old"), flag("density_threshold", "critical", "rack"),
        flag("unconfirmed", "warning", "rubin")]
    summary = summarise_flags(flags, limit=3)
    assert [f.subject for f in summary.shown] == ["rack", "rubin", "s0"]
    assert summary.rest_by_kind == [("single_source", 3), ("stale", 1)]
    assert (summary.rest, summary.total) == (4, 7)


def test_the_summary_shows_at_most_three_flags_of_one_kind():
    flags = [flag("unconfirmed", "warning", f"u{n}") for n in range(5)] + [
        flag("conflicting", "warning", "b200 / hbm_bandwidth")]
    summary = summarise_flags(flags, limit=10)
    assert [f.subject for f in summary.shown] == ["u0", "u1", "u2", "b200 / hbm_bandwidth"]
    assert summary.rest_by_kind == [("unconfirmed", 2)]


def test_no_flags_gives_an_empty_summary():
    summary = summarise_flags([])
    assert (summary.shown, summary.rest_by_kind, summary.rest, summary.total) == ([], [], 0, 0)


def test_change_counts_name_every_kind_even_when_zero():
    added = ObservationChange("added", "nvlink-6", "bw", "src", "TB/s", None, 3.6, D("2026-01-05"),
                              (1,))
    assert change_counts(Changes((added, added))) == {"added": 2, "changed": 0, "superseded": 0}
    assert change_counts(Changes()) == {"added": 0, "changed": 0, "superseded": 0}


def test_the_summary_counts_the_flags_a_bounded_context_left_out():
    kept = [flag("single_source", "info", f"s{n}") for n in range(3)] + [
        flag("conflicting", "warning", "b200 / hbm_bandwidth")]
    summary = summarise_flags(kept, totals={"single_source": 36_200, "conflicting": 1})
    assert summary.rest_by_kind == [("single_source", 36_197)]
    assert summary.total == 36_201


def test_a_kind_with_many_info_flags_left_out_still_prints_compactly():
    few = [flag("single_source", "info", f"s{n}") for n in range(3)]
    assert [compact for *_, compact in flags_by_kind(few)] == [False]
    assert [compact for *_, compact in flags_by_kind(few, {"single_source": 500})] == [True]


def test_a_bounded_changes_list_says_how_many_of_each_kind_it_leaves_out():
    added = ObservationChange("added", "tgpu-1", "tdp", "survey", "W", None, 700.0,
                              D("2026-10-01"), (7,))
    context = dataclasses.replace(
        full_context(), changes=Changes((added,) * 3),
        previous_cutoff_at=datetime(2026, 11, 15, 6, tzinfo=UTC),
        change_counts={"added": ChangeCount(5_000, 1_000, 5)})
    assert change_totals(context)["changed"] == ChangeCount(0, 0, 0)
    left = changes_left_out(context)
    assert [(x.kind, x.count, x.total.items) for x in left] == [("added", 4_997, 1_000)]
    assert ("recorded_at > TIMESTAMPTZ '2026-11-15 06:00:00.000000+00'"
            in changes_query(context))


def test_a_complete_changes_list_leaves_nothing_out():
    context = full_context()
    assert changes_left_out(context) == []
    assert change_totals(context)["added"].observations == change_counts(
        context.changes)["added"]


def test_validation_is_summarised_by_absolute_error_per_dataset():
    lines = validation_lines()
    mfu = dataclasses.replace(lines[0], dataset="Megatron-Core", quantity="MFU (%)", error=-2.0,
                              error_unit="points")
    [times, points] = summarise_validation([*lines, mfu])
    errors = [abs(line.error) for line in lines]
    assert (times.points, times.error_unit) == (len(lines), "%")
    assert times.mean_abs_error == sum(errors) / len(errors)
    assert times.max_abs_error == max(errors)
    assert (points.dataset, points.mean_abs_error, points.max_abs_error) == (
        "Megatron-Core", 2.0, 2.0)


def test_every_point_is_listed_once_under_its_set_quantity_and_source():
    lines = validation_lines()
    later = dataclasses.replace(lines[0], point="later run", source="a-later-source")
    mfu = dataclasses.replace(lines[1], quantity="MFU (%)", error_unit="points")
    sets = validation_sets([*lines, later, mfu])
    assert [s.lines for s in sets] == [tuple(lines), (later,), (mfu,)]
    for s in sets:
        assert {(v.dataset, v.quantity, v.error_unit, v.source, v.source_date)
                for v in s.lines} == {(s.dataset, s.quantity, s.error_unit, s.source,
                                       s.source_date)}
    assert [s.source for s in sets if s.lines == (later,)] == ["a-later-source"]
    assert [s.quantity for s in sets if s.lines == (mfu,)] == ["MFU (%)"]


def test_inputs_are_numbered_once_and_each_result_points_at_its_own():
    a = Cited(1.8, 1.8, "TB/s", "nvidia-nvlink-page", D("2024-03-18"), label="NVLink 5")
    b = Cited(400, 400, "Gb/s", "computerbase-quantum-2", D("2021-11-01"), label="NDR")
    index = number_inputs([("up", (a,)), ("out", (b, a)), ("none", ())])
    assert index.figures == [a, b]
    assert index.numbers == {"up": [1], "out": [1, 2], "none": []}


def test_the_scale_up_share_of_a_scenarios_c2c():
    scenario = scenarios()[0]
    assert scale_up_share(scenario) == scenario.c2c_scale_up / (
        scenario.c2c_scale_up + scenario.c2c_scale_out)
    idle = dataclasses.replace(scenario, c2c_scale_up=0.0, c2c_scale_out=0.0)
    assert scale_up_share(idle) is None


def test_spec_lines_group_by_section_in_the_order_given():
    lines = specs()
    sections = spec_sections(lines)
    assert list(sections) == list(dict.fromkeys(line.section for line in lines))
    assert sum(len(group) for group in sections.values()) == len(lines)


def test_the_appendix_groups_flags_by_kind_most_severe_first():
    flags = [flag("single_source", "info", "b"), flag("stale", "info", "a"),
             flag("single_source", "info", "a"), flag("density_threshold", "critical", "rack")]
    groups = flags_by_kind(flags)
    assert [kind for kind, _, _ in groups] == ["density_threshold", "single_source", "stale"]
    assert [f.subject for f in groups[1][1]] == ["a", "b"]


def test_a_long_info_only_kind_prints_as_subjects_but_a_warning_keeps_every_message():
    many = [flag("single_source", "info", f"item-{n:03}") for n in range(COMPACT_FLAG_GROUP + 1)]
    few = [flag("stale", "info", "a")]
    warned = [*[flag("unconfirmed", "info", f"u{n}") for n in range(COMPACT_FLAG_GROUP)],
              flag("unconfirmed", "warning", "w")]
    compact = {kind: shown for kind, _, shown in flags_by_kind([*many, *few, *warned])}
    assert compact == {"single_source": True, "stale": False, "unconfirmed": False}


def test_the_summary_prints_flags_of_one_kind_and_severity_as_one_finding():
    racks = [flag("density_threshold", "critical", f"rack-{n} / rack_it_power") for n in (1, 2, 3)]
    summary = summarise_flags([*racks, flag("conflicting", "warning", "nic / port_rate")])
    [density, conflict] = summary.groups
    assert (density.kind, density.severity, len(density.flags)) == (
        "density_threshold", "critical", 3)
    assert density.subjects == ("rack-1 / rack_it_power, rack-2 / rack_it_power, "
                                "rack-3 / rack_it_power")
    assert density.finding.endswith("(and 2 more like it: see the subjects)")
    assert conflict.finding == "nic / port_rate message"


def test_crossings_read_as_one_finding_per_threshold():
    from reports.views import crossing_groups
    from tests.support.contexts import density_trend

    trend = density_trend()
    sentences = crossing_groups(trend)
    assert len(sentences) == len({(c.threshold, c.position) for c in trend.crossings})
    for crossing in trend.crossings:
        assert any(crossing.point.label in s for s in sentences)


def test_a_long_list_of_flags_is_counted_by_metric_most_flagged_first():
    from models.trends.types import Flag
    from reports.views import subjects_by_metric

    flags = [Flag("single_source", "info", f"{item} / {metric}", "one source", (n,),
                  item=item, metric=metric)
             for n, (item, metric) in enumerate([("b200", "tdp"), ("h100", "tdp"),
                                                 ("h100", "tdp"), ("b200", "price")])]
    groups = subjects_by_metric(flags)
    assert [(g.metric, g.count, g.items) for g in groups] == [
        ("tdp", 3, ("b200", "h100")), ("price", 1, ("b200",))]
