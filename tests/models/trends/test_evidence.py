"""Evidence flags: each fires when it should and stays quiet otherwise."""

from datetime import UTC, date, datetime

import pytest

from models.trends import evidence_flags, undated_claims
from tests.models.trends.frames import CUTOFF, ON, frame, obs_row

ON_DAY = date(2026, 1, 1)


def flags(rows, **kwargs):
    options = {"on": ON, "cutoff": CUTOFF, **kwargs}
    return evidence_flags(frame(rows), **options)


def kinds(rows, **kwargs):
    return sorted((f.kind, f.subject) for f in flags(rows, **kwargs))


def of_kind(rows, kind, **kwargs):
    return [f for f in flags(rows, **kwargs) if f.kind == kind]


def power(value, source, **overrides):
    fields = {"item": "gb200-nvl72", "item_kind": "rack", "metric": "rack_it_power",
              "unit": "kW", "value": value, "source": source, "as_of": date(2025, 1, 1)}
    return obs_row(**{**fields, **overrides})


def test_a_value_from_one_source_is_flagged_with_that_source():
    [flag] = of_kind([power(132, "sheet", as_of_precision="year")], "single_source")
    assert flag.subject == "gb200-nvl72 / rack_it_power"
    assert (flag.item, flag.metric, flag.severity) == ("gb200-nvl72", "rack_it_power", "info")
    assert "132 kW rests on one source, sheet (vendor_datasheet, 2025)" in flag.message
    assert flag.observation_ids == (1,)


def test_a_source_repeating_itself_is_still_one_source():
    rows = [power(132, "sheet", as_of=date(2024, 1, 1)), power(132, "sheet")]
    assert len(of_kind(rows, "single_source")) == 1


def test_two_sources_are_not_single_source():
    assert of_kind([power(132, "sheet"), power(132, "press")], "single_source") == []


def test_only_unconfirmed_sources_warn_and_one_confirmed_source_clears_it():
    rows = [power(132, "a", status="U"), power(130, "b", status="U")]
    [flag] = of_kind(rows, "unconfirmed")
    assert flag.severity == "warning"
    assert "132 kW from a (2025-01-01); 130 kW from b (2025-01-01)" in flag.message
    assert flag.observation_ids == (1, 2)
    assert of_kind([*rows, power(132, "c", status="C")], "unconfirmed") == []


def price(value, source, **overrides):
    fields = {"item": "dgx-b200", "item_kind": "system", "metric": "system_price",
              "unit": "USD", "value": value, "source": source, "as_of": date(2025, 1, 1)}
    return obs_row(**{**fields, **overrides})


@pytest.mark.parametrize(("as_of", "stale"), [
    (date(2024, 1, 1), False),     # exactly 731 days before 2026-01-01
    (date(2023, 12, 31), True),
])
def test_stale_is_strictly_older_than_the_configured_age(as_of, stale):
    # 2026-01-01 minus 731 days is 2024-01-01: a figure dated that day is not yet stale
    found = of_kind([price(379000, "quote", as_of=as_of)], "stale", on=ON_DAY,
                    stale_after_days=731)
    assert bool(found) is stale
    if stale:
        assert "no observation newer than 2024-01-01 (731 days before 2026-01-01)" in \
            found[0].message
        assert "379,000 USD from quote (2023-12-31)" in found[0].message


def test_an_old_series_with_a_recent_figure_is_not_stale():
    rows = [price(515000, "quote", as_of=date(2020, 1, 1)), price(379000, "quote")]
    assert of_kind(rows, "stale", stale_after_days=730) == []


def test_a_datasheet_constant_never_goes_stale():
    # A rack's power or a GPU's HBM capacity does not move with time; a price does.
    old = date(2019, 1, 1)
    assert of_kind([power(132, "sheet", as_of=old)], "stale", stale_after_days=730) == []
    assert of_kind([price(379000, "quote", as_of=old)], "stale", stale_after_days=730)


def test_conflicting_sources_beyond_the_tolerance_warn():
    rows = [power(132, "sheet"), power(120, "press", source_kind="secondary_press")]
    [flag] = of_kind(rows, "conflicting")
    assert flag.severity == "warning"
    assert "132 kW from sheet (2025-01-01) is used" in flag.message
    assert "vendor_datasheet outranks secondary_press" in flag.message
    assert "against 120 kW from press (2025-01-01)" in flag.message
    assert flag.observation_ids == (1, 2)


@pytest.mark.parametrize(("other", "conflicting"), [
    (125.0, False),   # 75 x 1.25 == 125 x 0.75: exactly at the tolerance
    (126.0, True),
])
def test_conflict_edge_is_exactly_at_the_tolerance(other, conflicting):
    rows = [power(75, "sheet"), power(other, "press", source_kind="secondary_press")]
    assert bool(of_kind(rows, "conflicting", tolerance=0.25)) is conflicting


def test_agreeing_sources_do_not_conflict():
    rows = [power(132, "sheet"), power(132.5, "press", source_kind="secondary_press")]
    assert of_kind(rows, "conflicting") == []


def nvlink_claim(**overrides):
    fields = {"item": "nvlink-5", "metric": "scaleup_bw_per_gpu_bidir", "value": 1800,
              "source": "nvidia-nvlink-page", "source_kind": "vendor_datasheet"}
    return obs_row(**{**fields, **overrides})


def measurement(**overrides):
    return obs_row(item="nvlink-5", metric="busbw_measured", unit="GB/s", value=700,
                   value_kind="measured", source="nccl-run", source_kind="measurement",
                   **overrides)


def test_a_vendor_bandwidth_claim_without_a_measurement_is_flagged():
    [flag] = of_kind([nvlink_claim()], "claim_without_measurement")
    assert flag.severity == "info"
    assert "nvidia-nvlink-page (vendor_datasheet, 2024-03-18) claims 1,800 GB/s" in flag.message
    assert flag.observation_ids == (1,)


def test_a_live_measurement_answers_the_claim():
    assert of_kind([nvlink_claim(), measurement()], "claim_without_measurement") == []


def test_a_measurement_recorded_after_the_cutoff_does_not_answer_it():
    later = measurement(recorded_at=datetime(2026, 7, 1, tzinfo=UTC))
    assert len(of_kind([nvlink_claim(), later], "claim_without_measurement")) == 1


def test_claims_from_press_or_on_other_metrics_are_not_vendor_bandwidth_claims():
    rows = [nvlink_claim(source_kind="secondary_press"), power(132, "sheet")]
    assert of_kind(rows, "claim_without_measurement") == []


def test_metrics_restrict_the_pairs_but_measurements_still_count():
    rows = [nvlink_claim(), measurement(), power(132, "sheet")]
    found = kinds(rows, metrics={"scaleup_bw_per_gpu_bidir"})
    assert found == [("single_source", "nvlink-5 / scaleup_bw_per_gpu_bidir")]


def test_values_not_live_or_not_yet_valid_raise_nothing():
    rows = [power(132, "sheet", superseded_at=datetime(2026, 2, 1, tzinfo=UTC)),
            power(140, "sheet", as_of=date(2027, 1, 1))]
    assert flags(rows) == []


def test_undated_claims_flag_only_missing_dates():
    found = undated_claims([("gb200-nvl72 rack IT power", date(2024, 1, 1), "year"),
                            ("NVLink 6 bandwidth", None, "day"),
                            ("NVLink 6 bandwidth", None, "day")])
    [flag] = found
    assert (flag.kind, flag.severity, flag.subject) == ("undated", "critical",
                                                       "NVLink 6 bandwidth")
    assert undated_claims([]) == []


def test_a_figure_whose_source_gives_no_date_raises_no_undated_flag():
    """It prints as "undated" beside its source: only a figure that lost its date is a flag."""
    found = undated_claims([("gb200-nvl72 rack IT power", date(2024, 1, 1), "none"),
                            ("NVLink 6 bandwidth", None, "day")])
    assert [(f.subject, f.severity) for f in found] == [("NVLink 6 bandwidth", "critical")]


def test_an_undated_price_has_no_known_age_and_never_makes_its_pair_current():
    """A price whose source gives no date is stale beside an old dated one (its valid time
    starting recently says nothing of its age), and alone it says its age is unknown."""
    old = price(379000, "quote", as_of=date(2020, 1, 1))
    undated = price(515000, "press", as_of=date(2025, 12, 1), as_of_precision="none")
    [flag] = of_kind([old, undated], "stale", on=ON_DAY, stale_after_days=730)
    assert "newest: 379,000 USD from quote (2020-01-01)" in flag.message
    [alone] = of_kind([undated], "stale", on=ON_DAY, stale_after_days=730)
    assert "no dated observation" in alone.message and "(undated)" in alone.message


def test_a_price_goes_stale_at_the_markets_age_limit_and_other_moving_figures_at_theirs():
    """One rule per kind: a price or cost ages as the market does (price_stale_after_days,
    the market's 120 days), an availability by stale_after_days, a datasheet constant never."""
    year_old = date(2025, 1, 1)    # 365 days before ON_DAY
    rules = {"on": ON_DAY, "stale_after_days": 730, "price_stale_after_days": 120}
    assert of_kind([price(379000, "quote", as_of=year_old)], "stale", **rules)
    availability = price(0.99, "sla", metric="availability", unit="fraction", as_of=year_old)
    assert of_kind([availability], "stale", **rules) == []
    assert of_kind([power(132, "sheet", as_of=date(2019, 1, 1))], "stale", **rules) == []


def test_market_offers_raise_no_evidence_flag_of_their_own():
    """An offer is one provider's price on one date: one source, and a price moving over time,
    by nature. Its staleness is the market's, one flag per offer group (models.market.stale)."""
    offer = {"item": "aws-p4d-on-demand", "item_kind": "offer", "metric": "gpu_hour_price",
             "unit": "USD/hour", "offer_provider": "aws", "offer_term": "on_demand",
             "offer_gpu": "a100-sxm4-40gb"}
    rows = [obs_row(**offer, value=4.1, source="catalog-2021", as_of=date(2021, 1, 1)),
            obs_row(**offer, value=2.7, source="catalog-2026", as_of=date(2025, 11, 9))]
    assert flags(rows, on=ON_DAY, price_stale_after_days=120) == []


def test_with_readers_only_read_figures_are_single_source_or_stale_and_flags_name_them():
    read = price(379000, "quote", as_of=date(2020, 1, 1))
    unread = price(15000, "press", item="a100-sxm4-40gb", metric="gpu_price",
                   as_of=date(2020, 1, 1))
    readers = {("dgx-b200", "system_price"): ("tco-a", "tco-b", "tco-c", "tco-d")}
    found = flags([read, unread], on=ON_DAY, read_by=readers)
    assert {(f.kind, f.item) for f in found} == {("single_source", "dgx-b200"),
                                                 ("stale", "dgx-b200")}
    assert all(f.message.endswith("Read by tco-a, tco-b, tco-c and 1 more.") for f in found)
    # Without readers (no stored result to ask), every pair is flagged and none is named.
    everything = flags([read, unread], on=ON_DAY)
    assert {f.item for f in everything} == {"dgx-b200", "a100-sxm4-40gb"}
    assert not any("Read by" in f.message for f in everything)
