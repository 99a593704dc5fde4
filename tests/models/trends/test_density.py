"""Rack and system power against cooling thresholds, and the flags a reader sees."""

from datetime import date

import pytest

from models.trends import density_flags, density_trend
from tests.models.trends.frames import CUTOFF, ON, frame, obs_row, rack, threshold

AIR = [threshold("air-cooling", 20, 40, "guide"), threshold("air-cooling", 30, 30, "newsletter")]
RDHX = threshold("rear-door-heat-exchanger", 40, 60, "newsletter")


def system(item: str, kw: float, as_of: date):
    return obs_row(item=item, item_name=item.upper(), item_kind="system", metric="system_power",
                   unit="kW", value=kw, as_of=as_of, source=f"{item}-sheet")


def trend(rows):
    return density_trend(frame(rows), on=ON, cutoff=CUTOFF)


def test_series_hold_racks_and_systems_by_date_with_their_own_fits():
    result = trend([rack("gb300", 142, date(2025, 3, 18)), rack("gb200", 132, date(2024, 1, 1)),
                    system("dgx-1", 3.2, date(2016, 1, 1)), system("dgx-b200", 14.3,
                                                                   date(2024, 1, 1))])
    racks, systems = result.series
    assert [p.item for p in racks.points] == ["gb200", "gb300"]
    assert {p.group for p in racks.points} == {"rack"}
    assert [p.value for p in systems.points] == [3.2, 14.3]
    assert systems.fit.n == 2 and result.fit.n == 4


def test_a_threshold_resting_on_two_sources_cites_both():
    result = trend([*AIR, RDHX])
    air, rdhx = result.thresholds
    assert air.key == "air-cooling" and sorted(air.observation_ids) == [1, 2]
    assert rdhx.key == "rear-door-heat-exchanger"
    assert (rdhx.low, rdhx.high, rdhx.unit, rdhx.as_of_precision) == (40, 60, "kW", "year")


@pytest.mark.parametrize(("low", "high", "positions"), [
    (132, 132, {"air-cooling": "above", "rear-door-heat-exchanger": "above"}),
    (50, 50, {"air-cooling": "above", "rear-door-heat-exchanger": "within"}),
    (35, 45, {"air-cooling": "within", "rear-door-heat-exchanger": "within"}),
    (12, 12, {}),
])
def test_crossings_say_above_or_within_each_band(low, high, positions):
    result = trend([threshold("air-cooling", 20, 40, "guide"), RDHX,
                    rack("r", (low + high) / 2, date(2025, 1, 1), low=low, high=high)])
    assert {c.threshold: c.position for c in result.crossings} == positions


def test_systems_never_cross_a_per_rack_threshold():
    result = trend([*AIR, system("big-server", 45, date(2024, 1, 1))])
    assert result.crossings == ()


def test_a_rack_above_every_threshold_is_critical_and_the_message_cites_everything():
    result = trend([*AIR, RDHX, rack("gb200", 132, date(2024, 1, 1), as_of_precision="year")])
    [flag] = [f for f in density_flags(result, on=ON) if f.kind == "density_threshold"]
    assert flag.severity == "critical"
    assert flag.subject == "gb200 / rack_it_power"
    assert "132 kW (gb200-sheet, 2024)" in flag.message
    assert "40–60 kW (newsletter, 2025)" in flag.message
    assert "liquid cooling" in flag.message
    assert set(flag.observation_ids) == {1, 2, 3, 4}


def test_a_rack_above_air_but_within_the_rear_door_band_is_a_warning():
    result = trend([threshold("air-cooling", 20, 40, "guide"), RDHX,
                    rack("r", 50, date(2025, 1, 1))])
    [flag] = [f for f in density_flags(result, on=ON) if f.kind == "density_threshold"]
    assert flag.severity == "warning"
    assert "not above Rear door heat exchanger 40–60 kW" in flag.message


def test_a_rack_within_the_air_band_raises_no_threshold_flag():
    result = trend([threshold("air-cooling", 20, 40, "guide"), rack("r", 35, date(2025, 1, 1))])
    assert [f for f in density_flags(result, on=ON) if f.kind == "density_threshold"] == []


def test_the_growth_flag_gives_rate_doubling_time_points_and_span():
    rows = [system("s1", 4, date(2016, 1, 1)), system("s2", 8, date(2018, 1, 1)),
            rack("r1", 16, date(2020, 1, 1))]
    [flag] = [f for f in density_flags(trend(rows), on=ON) if f.kind == "density_growth"]
    assert flag.severity == "info"
    assert "+41 %/yr, doubling every 2.0 years" in flag.message
    assert "3 points from 2016 to 2020" in flag.message
    assert "4 kW (s1-sheet, 2016-01-01)" in flag.message and "16 kW" in flag.message
    assert sorted(flag.observation_ids) == [1, 2, 3]


def test_no_points_no_flags():
    assert density_flags(trend([*AIR]), on=ON) == []
