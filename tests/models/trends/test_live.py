"""The view a dataset version sees: live at the cut-off, valid on the day, one value per
(item, metric) by the resolution rule."""

from datetime import UTC, date, datetime

import pandas as pd

from db import queries
from models.trends import live, resolved_points, valid
from tests.models.trends.frames import COLUMNS, CUTOFF, ON, RECORDED, frame, obs_row

LATER = datetime(2026, 3, 1, tzinfo=UTC)


def ids(obs):
    return sorted(obs["observation_id"])


def test_frames_have_the_columns_of_the_ledger_query():
    assert [column.key for column in queries._COLUMNS] == COLUMNS


def test_a_value_superseded_before_the_cutoff_is_not_live_and_its_successor_is():
    obs = frame([obs_row(value=1800, superseded_at=LATER),
                 obs_row(value=1750, recorded_at=LATER)])
    assert ids(live(obs, CUTOFF)) == [2]
    assert ids(live(obs, datetime(2026, 2, 1, tzinfo=UTC))) == [1]


def test_a_value_recorded_after_the_cutoff_is_invisible():
    obs = frame([obs_row(recorded_at=datetime(2026, 6, 2, tzinfo=UTC))])
    assert live(obs, CUTOFF).empty
    assert resolved_points(obs, "scaleup_bw_per_gpu_bidir", on=ON, cutoff=CUTOFF) == []


def test_supersession_exactly_at_the_cutoff_means_no_longer_live():
    obs = frame([obs_row(superseded_at=CUTOFF)])
    assert live(obs, CUTOFF).empty


def test_valid_on_a_day_respects_as_of_and_valid_to():
    obs = frame([obs_row(as_of=date(2024, 1, 1), valid_to=date(2025, 1, 1)),
                 obs_row(as_of=date(2025, 1, 1)),
                 obs_row(as_of=date(2027, 1, 1))])
    assert ids(valid(obs, date(2024, 6, 1))) == [1]
    assert ids(valid(obs, date(2025, 1, 1))) == [2]


def test_dates_as_timestamps_or_date_objects_give_the_same_view():
    rows = [obs_row(as_of=date(2024, 1, 1), valid_to=date(2025, 1, 1), superseded_at=LATER),
            obs_row(as_of=date(2025, 1, 1), recorded_at=LATER)]
    plain = frame(rows)
    stamped = plain.assign(as_of=pd.to_datetime(plain["as_of"]),
                           recorded_at=pd.to_datetime(plain["recorded_at"], utc=True))
    for day, moment in [(date(2024, 6, 1), RECORDED), (ON, CUTOFF)]:
        assert ids(valid(live(plain, moment), day)) == ids(valid(live(stamped, moment), day))


def test_a_naive_cutoff_is_read_as_utc():
    obs = frame([obs_row()])
    assert ids(live(obs, datetime(2026, 1, 1))) == [1]


def test_resolved_points_keep_the_winner_and_cite_the_alternatives():
    obs = frame([
        obs_row(item="gb200-nvl72", item_name="GB200 NVL72", item_kind="rack",
                metric="rack_it_power", unit="kW", value=120, source="press",
                source_kind="secondary_press", status="S"),
        obs_row(item="gb200-nvl72", item_name="GB200 NVL72", item_kind="rack",
                metric="rack_it_power", unit="kW", value=132, source="sheet",
                source_kind="vendor_datasheet", as_of=date(2024, 1, 1), as_of_precision="year"),
    ])
    [point] = resolved_points(obs, "rack_it_power", on=ON, cutoff=CUTOFF)
    assert (point.value, point.source, point.status) == (132, "sheet", "C")
    assert point.observation_ids == (2, 1)
    assert (point.as_of, point.as_of_precision) == (date(2024, 1, 1), "year")
    assert point.label == "GB200 NVL72" and point.unit == "kW"


def test_resolved_points_filter_item_kinds_and_sort_by_date():
    obs = frame([obs_row(item="b", as_of=date(2022, 1, 1)),
                 obs_row(item="a", as_of=date(2023, 1, 1)),
                 obs_row(item="hgx", item_kind="system", as_of=date(2020, 1, 1))])
    points = resolved_points(obs, "scaleup_bw_per_gpu_bidir", on=ON, cutoff=CUTOFF,
                             kinds={"scaleup_fabric"})
    assert [p.item for p in points] == ["b", "a"]


def test_an_empty_history_resolves_to_nothing():
    assert resolved_points(frame([]), "rack_it_power", on=ON, cutoff=CUTOFF) == []
