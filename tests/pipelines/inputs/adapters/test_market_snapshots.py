"""The market snapshots shipped in data/sources/market (real SkyPilot catalog versions, dated
by their commits; data/sources/market/README.md): every line is read, nothing is rejected,
each offer's price date is the date in its file's name, and a snapshot whose bytes equal an
earlier one's (GCP's GPU lines did not change between 2023-12-04 and 2023-12-11) still adds
the observations of its own date (issue 27, cases 5 and 9)."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import select

from db.engine import Session
from db.queries import offer_history
from db.schema import Item, Observation
from pipelines.inputs.adapters import skypilot_catalog
from pipelines.inputs.adapters.base import AdapterOptions, date_in_name
from pipelines.settings import PROJECT_ROOT

MARKET = PROJECT_ROOT / "data" / "sources" / "market"
SNAPSHOTS = sorted(MARKET.glob("*_vms_*.csv"))


def test_every_snapshot_names_its_cloud_and_its_commit_date_and_is_in_the_readme():
    readme = (MARKET / "README.md").read_text()
    assert len(SNAPSHOTS) >= 6
    for path in SNAPSHOTS:
        assert skypilot_catalog.provider_of(path.name) in {"aws", "gcp", "azure", "lambda"}
        assert date_in_name(path.name) is not None
        assert f"`{path.name}`" in readme


def test_each_snapshot_is_read_whole_and_dated_by_its_name():
    for path in SNAPSHOTS:
        parsed = skypilot_catalog.parse(path.name, path.read_bytes(), AdapterOptions())
        assert parsed.rejected == [], path.name
        lines = {row.line for row in parsed.pack.rows}
        assert len(lines) + parsed.skipped_lines == len(path.read_text().splitlines()) - 1
        assert {row.fields["as_of"] for row in parsed.pack.rows} == {str(date_in_name(path.name))}


def test_two_clouds_have_snapshots_a_week_apart():
    dates: dict[str, list[date]] = {}
    for path in SNAPSHOTS:
        dates.setdefault(skypilot_catalog.provider_of(path.name) or "", []).append(
            date_in_name(path.name) or date.min)
    weekly = [cloud for cloud, days in dates.items()
              if any((b - a).days == 7 for a in days for b in days)]
    assert sorted(weekly) == ["aws", "gcp"]


def test_the_same_bytes_under_a_later_date_add_observations_of_that_date(ingest, ledger,
                                                                          tmp_path: Path):
    first, second = MARKET / "gcp_vms_2023-12-04.csv", MARKET / "gcp_vms_2023-12-11.csv"
    assert first.read_bytes() == second.read_bytes()  # GCP's GPU lines did not change
    earlier = ingest(first).files[0]
    later = ingest(second).files[0]
    assert later.outcome == "ingested"
    assert later.accepted == earlier.accepted > 0
    # Given again under the same name, nothing changes.
    copy = tmp_path / second.name
    shutil.copyfile(second, copy)
    assert ingest(copy).files[0].outcome == "unchanged_file"
    with Session(ledger) as session:
        history = offer_history(session)
    days = history.groupby(history["as_of"].astype(str))["observation_id"].count()
    assert days.to_dict() == {"2023-12-04": earlier.accepted, "2023-12-11": earlier.accepted}


def test_a_price_lists_value_and_unit_written_are_the_files(ingest, ledger):
    ingest(MARKET / "aws_vms_2023-12-13.csv")
    with Session(ledger) as session:
        written = session.execute(
            select(Observation.value, Observation.value_written, Observation.unit_written)
            .join(Item, Observation.item_id == Item.id)
            .where(Item.key == "aws-p5-48xlarge-us-east-2-on-demand")).one()
    # The file's Price for the 8-GPU instance, per hour; the value is per GPU-hour.
    assert (written.value_written, written.unit_written) == ("98.32", "hour")
    assert written.value == pytest.approx(98.32 / 8)
