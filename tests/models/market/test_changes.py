"""Week-over-week and 90-day changes of the index median, and the term spreads."""

from datetime import date
from itertools import count

import pandas as pd
import pytest

from models.market import (
    OFFER_COLUMNS,
    index_changes,
    price_index,
    reference_versions,
    term_spreads,
)

_IDS = count(1)


def offer(version, version_date, price, *, term="on_demand", gpu="h100-sxm5",
          provider="lambda"):
    return {"dataset_version": version, "version_date": version_date, "provider": provider,
            "region": "us-east", "term": term, "gpu": gpu, "gpus_per_instance": 8,
            "usd_per_gpu_hour": price, "as_of": version_date,
            "source": f"{provider}-prices", "observation_id": next(_IDS)}


def index_of(*rows):
    return price_index(pd.DataFrame(list(rows), columns=list(OFFER_COLUMNS)))


def changes_by_version(changes, gpu="h100-sxm5", term="on_demand"):
    rows = changes[(changes["gpu"] == gpu) & (changes["term"] == term)]
    return {r["dataset_version"]: r for r in rows.to_dict("records")}


# Versions 1-4: the week-over-week reference of version 4 (Jan 12) is version 2, exactly
# seven days before; version 3 (Jan 8) is only four days before, too recent.
WEEKS = [offer(1, date(2026, 1, 1), 4.0), offer(2, date(2026, 1, 5), 3.2),
         offer(3, date(2026, 1, 8), 3.0), offer(4, date(2026, 1, 12), 2.4)]


def test_week_over_week_compares_with_the_latest_version_at_least_seven_days_older():
    changes = changes_by_version(index_changes(index_of(*WEEKS)))
    assert {v: (r["wow_version"], r["wow_median"]) for v, r in changes.items()
            if not pd.isna(r["wow_version"])} == {3: (1, 4.0), 4: (2, 3.2)}
    assert changes[4]["wow_change"] == pytest.approx(2.4 / 3.2 - 1)    # -25 %
    assert changes[4]["wow_date"] == pd.Timestamp(2026, 1, 5)
    assert changes[3]["wow_change"] == pytest.approx(-0.25)


def test_no_version_old_enough_gives_no_change():
    changes = changes_by_version(index_changes(index_of(*WEEKS)))
    for version in (1, 2):
        assert pd.isna(changes[version]["wow_version"])
        assert pd.isna(changes[version]["wow_change"])
    assert all(pd.isna(r["d90_change"]) for r in changes.values())   # 11 days of data


def test_ninety_days_back_and_two_versions_on_one_date():
    rows = [offer(1, date(2026, 1, 1), 4.0), offer(2, date(2026, 1, 2), 3.6),
            offer(3, date(2026, 1, 2), 3.5), offer(4, date(2026, 4, 2), 2.8)]
    changes = changes_by_version(index_changes(index_of(*rows)))
    # April 2 - 90 days = January 2: of versions 2 and 3 recorded that day, the later one
    assert (changes[4]["d90_version"], changes[4]["d90_median"]) == (3, 3.5)
    assert changes[4]["d90_change"] == pytest.approx(-0.2)
    assert changes[4]["wow_version"] == 3


def test_a_reference_version_without_the_gpu_gives_no_change_rather_than_an_older_one():
    rows = [offer(1, date(2026, 1, 1), 4.0, gpu="b200"), offer(1, date(2026, 1, 1), 2.0),
            offer(2, date(2026, 1, 8), 2.1),                 # no b200 offer this week
            offer(3, date(2026, 1, 15), 3.0, gpu="b200"), offer(3, date(2026, 1, 15), 2.2)]
    changes = index_changes(index_of(*rows))
    b200 = changes_by_version(changes, gpu="b200")[3]
    assert b200["wow_version"] == 2 and pd.isna(b200["wow_change"])
    assert changes_by_version(changes)[3]["wow_change"] == pytest.approx(2.2 / 2.1 - 1)


def test_reference_versions_per_version():
    refs = reference_versions(index_of(*WEEKS), 7)
    assert refs["dataset_version"].tolist() == [1, 2, 3, 4]
    assert refs["ref_version"].tolist() == [pd.NA, pd.NA, 1, 2]


def test_spreads_are_discounts_against_on_demand_and_missing_when_a_side_is():
    day, later = date(2026, 1, 1), date(2026, 1, 8)
    spreads = term_spreads(index_of(
        offer(1, day, 4.0), offer(1, day, 1.0, term="spot"),
        offer(1, day, 3.0, term="reserved_1y"),
        offer(2, later, 2.0, term="spot")))            # no on-demand offer at version 2
    first, second = spreads.to_dict("records")
    assert (first["on_demand"], first["spot"]) == (4.0, 1.0)
    assert first["spot_discount"] == 0.75
    assert first["reserved_1y_discount"] == 0.25
    assert pd.isna(first["reserved_3y_discount"])       # no 3-year reserved offer
    assert pd.isna(second["spot_discount"]) and second["spot"] == 2.0
    assert list(spreads.columns) == [
        "dataset_version", "version_date", "gpu", "on_demand", "spot", "reserved_1y",
        "reserved_3y", "spot_discount", "reserved_1y_discount", "reserved_3y_discount"]


def test_a_term_dearer_than_on_demand_has_a_negative_discount():
    day = date(2026, 1, 1)
    # A 1-year reservation priced above on-demand (spot never is: the index leaves out a
    # spot price at or above on-demand as not spot).
    spreads = term_spreads(index_of(offer(1, day, 2.0), offer(1, day, 2.5, term="reserved_1y")))
    assert spreads.loc[0, "reserved_1y_discount"] == pytest.approx(-0.25)


def test_empty_index_gives_empty_changes_and_spreads():
    index = index_of()
    assert index_changes(index).empty
    assert term_spreads(index).empty
