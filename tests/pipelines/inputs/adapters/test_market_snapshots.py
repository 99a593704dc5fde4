"""The 2023 market history shipped in data/sources/market_2023.yaml: the project's own
transcription of six SkyPilot catalog `vms.csv` versions (its header says where each comes
from and what was read of it). Each source is one version, dated by its commit; its rows are
what the SkyPilot reader gives of that version, row for row (checked against the catalog
files themselves, kept in the shared data folder); the pack ingests clean, each offer dated
by its version; and a version whose bytes equal an earlier one's (GCP's GPU lines did not
change between 2023-12-04 and 2023-12-11) still adds the observations of its own date
(issue 27, cases 5 and 9)."""

from __future__ import annotations

import re
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml
from sqlalchemy import select

from db.engine import Session
from db.queries import offer_history
from db.schema import Item, Observation
from pipelines.inputs.adapters import skypilot_catalog
from pipelines.inputs.adapters.base import AdapterOptions, date_in_name
from pipelines.settings import PROJECT_ROOT
from tests.support.shared_data import shared_path

PACK = PROJECT_ROOT / "data" / "sources" / "market_2023.yaml"
# The catalog versions the pack transcribes, as the shared data folder keeps them (the lines
# of the GPU instances the ledger tracks, as the pack's header says).
VERSIONS = ("aws_vms_2023-12-06.csv", "aws_vms_2023-12-13.csv", "azure_vms_2023-12-08.csv",
            "gcp_vms_2023-12-04.csv", "gcp_vms_2023-12-11.csv", "lambda_vms_2023-06-15.csv")
_AT_COMMIT = re.compile(r"https://github\.com/skypilot-org/skypilot-catalog/blob/([0-9a-f]{40})/"
                        r"(catalogs/v\d+/([a-z]+)/vms\.csv)")


def catalog(name: str) -> Path:
    return shared_path("fixtures", "data", "sources", "market", name)


def entries() -> list[dict]:
    return yaml.safe_load(PACK.read_text())["sources"]


def test_each_source_is_one_catalog_version_dated_by_its_commit():
    found = entries()
    assert len(found) == len(VERSIONS)
    for entry in found:
        source = entry["source"]
        commit, path, cloud = _AT_COMMIT.fullmatch(source["url"]).groups()
        assert (source["kind"], source["publisher"]) == ("dataset", "SkyPilot")
        assert "SkyPilot catalog" in source["title"]
        assert commit in source["title"] and path in source["title"]
        day = source["published_on"]
        assert day.isoformat() in source["title"]
        assert source["key"] == f"skypilot-catalog-{cloud}-{day.isoformat()}-{commit[:7]}"
        rows = entry["observations"]
        assert rows and {row["as_of"] for row in rows} == {day}
        assert {row["offer"]["provider"] for row in rows} == {cloud}


def test_two_clouds_have_versions_a_week_apart():
    dates: dict[str, list[date]] = {}
    for entry in entries():
        cloud = _AT_COMMIT.fullmatch(entry["source"]["url"]).group(3)
        dates.setdefault(cloud, []).append(entry["source"]["published_on"])
    weekly = [cloud for cloud, days in dates.items()
              if any((b - a).days == 7 for a in days for b in days)]
    assert sorted(weekly) == ["aws", "gcp"]


def test_an_item_another_pack_declares_too_is_declared_as_it_is_there():
    """A pack's declaration renames an item (the reader's never did): an offer item another
    shipped pack declares must be declared alike here, so that the order the packs are
    ingested in never changes its name."""
    mine = {item["key"]: item for item in yaml.safe_load(PACK.read_text())["items"]}
    for other in sorted(PACK.parent.glob("*.yaml")):
        if other == PACK:
            continue
        for item in (yaml.safe_load(other.read_text()) or {}).get("items") or []:
            if item["key"] in mine:
                assert mine[item["key"]] == item, other.name


@pytest.mark.parametrize("name", VERSIONS)
def test_the_pack_is_what_the_reader_gives_of_each_version(name):
    """Every row the reader gives of the catalog version, in its order, with the same item,
    offer, value, unit, date and quote; the reader reads every line and rejects none."""
    path = catalog(name)
    parsed = skypilot_catalog.parse(path.name, path.read_bytes(), AdapterOptions())
    assert parsed.rejected == []
    lines = {row.line for row in parsed.pack.rows}
    assert len(lines) + parsed.skipped_lines == len(path.read_text().splitlines()) - 1
    assert {row.fields["as_of"] for row in parsed.pack.rows} == {str(date_in_name(name))}
    [reader_source] = parsed.pack.sources
    [entry] = [e for e in entries() if e["source"]["key"].startswith(reader_source.key + "-")]
    assert entry["source"]["published_on"] == reader_source.published_on
    transcribed = entry["observations"]
    assert len(transcribed) == len(parsed.pack.rows)
    for row, mine in zip(parsed.pack.rows, transcribed, strict=True):
        given = dict(row.fields)
        terms = given.pop("offer")
        terms["units"] = terms.pop("gpus_per_instance")
        assert mine["offer"] == terms
        assert given.pop("value_kind") == "reported" and "value_kind" not in mine
        given.pop("source")
        assert {**mine, "as_of": mine["as_of"].isoformat(), "offer": None} == {
            **given, "offer": None}
        assert repr(mine["value"]) == repr(given["value"])


def test_the_pack_ingests_clean_each_offer_dated_by_its_version(ingest, ledger):
    report = ingest(PACK)
    [file] = report.files
    assert (file.rejected, file.accepted) == (0, file.read) and file.read > 0
    with Session(ledger) as session:
        history = offer_history(session)
    days = history.groupby(history["as_of"].astype(str))["observation_id"].count()
    per_version = {entry["source"]["published_on"].isoformat(): len(entry["observations"])
                   for entry in entries()}
    assert days.to_dict() == per_version
    # GCP's GPU lines did not change between its two versions: the same offers, at both dates.
    gcp = history[history["offer_provider"] == "gcp"]
    by_day = {day: sorted(zip(group["item"], group["value"], strict=True))
              for day, group in gcp.groupby(gcp["as_of"].astype(str))}
    assert by_day["2023-12-04"] == by_day["2023-12-11"] != []


def test_the_same_bytes_under_a_later_date_add_observations_of_that_date(ingest, ledger,
                                                                          tmp_path: Path):
    first, second = catalog("gcp_vms_2023-12-04.csv"), catalog("gcp_vms_2023-12-11.csv")
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


@pytest.mark.parametrize("shipped", [False, True], ids=["catalog", "pack"])
def test_a_price_lists_value_and_unit_written_are_the_files(ingest, ledger, shipped):
    """The catalog's Price for the 8-GPU instance, per hour, is the value written, read from
    the catalog file or from the pack's transcription of it; the value is per GPU-hour."""
    ingest(PACK if shipped else catalog("aws_vms_2023-12-13.csv"))
    with Session(ledger) as session:
        written = session.execute(
            select(Observation.value, Observation.value_written, Observation.unit_written)
            .join(Item, Observation.item_id == Item.id)
            .where(Item.key == "aws-p5-48xlarge-us-east-2-on-demand",
                   Observation.as_of == date(2023, 12, 13))).one()
    assert (written.value_written, written.unit_written) == ("98.32", "hour")
    assert written.value == pytest.approx(98.32 / 8)
