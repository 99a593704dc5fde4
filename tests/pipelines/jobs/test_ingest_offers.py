"""Market prices keep their terms as columns of the observation: provider, region, term, GPU,
GPUs a unit, instance type, currency and a quote's validity, on both clocks."""

from datetime import date

from sqlalchemy import select

from db.engine import Session
from db.schema import Observation
from tests.support.shared_data import fixture_path

PRICE_LIST = """
source:
  key: example-cloud-prices-2026-11
  title: Example cloud GPU price list
  kind: vendor_datasheet
  published_on: 2026-11-01
items:
  - {key: h100-sxm5, name: H100 SXM5, kind: gpu, vendor: NVIDIA, family: Hopper}
  - {key: acme-p5-us-east-on-demand, name: ACME p5 us-east on-demand, kind: cloud_offer}
observations:
  - {item: acme-p5-us-east-on-demand, metric: gpu_hour_price, value: 3.10, unit: USD/hour,
     as_of: 2026-11-01, status: C,
     offer: {provider: acme, region: us-east, term: on_demand, gpu: h100-sxm5, units: 8,
             instance_type: p5.48xlarge, currency: usd, price_written: "24.80"}}
"""


def offers(ledger):
    with Session(ledger) as session:
        return session.execute(select(
            Observation.value, Observation.offer_provider, Observation.offer_region,
            Observation.offer_term, Observation.offer_gpu, Observation.offer_units,
            Observation.offer_instance, Observation.offer_currency,
            Observation.superseded_at).order_by(Observation.id)).all()


def test_an_offer_lands_with_its_terms_as_columns(ledger, ingest, write_pack):
    report = ingest(write_pack("prices.yaml", PRICE_LIST))
    assert (report.total("accepted"), report.total("rejected")) == (1, 0)
    [row] = offers(ledger)
    assert tuple(row)[:8] == (3.10, "acme", "us-east", "on_demand", "h100-sxm5", 8,
                              "p5.48xlarge", "USD")


def test_the_same_price_on_another_term_supersedes_and_the_history_stays(
        ledger, ingest, write_pack, clock):
    ingest(write_pack("v1.yaml", PRICE_LIST))
    clock.tick(hours=1)
    report = ingest(write_pack("v2.yaml", PRICE_LIST.replace("term: on_demand",
                                                              "term: reserved_1y")))
    assert report.files[0].superseded == 1
    rows = offers(ledger)
    assert [(r.offer_term, r.superseded_at is None) for r in rows] == [
        ("on_demand", False), ("reserved_1y", True)]


def test_reingesting_an_unchanged_offer_is_unchanged(ledger, ingest, write_pack):
    ingest(write_pack("v1.yaml", PRICE_LIST))
    report = ingest(write_pack("copy.yaml", PRICE_LIST + "\n"))
    assert (report.total("accepted"), report.total("unchanged")) == (0, 1)


def test_a_bad_term_is_rejected_naming_the_offer_field(ledger, ingest, write_pack):
    report = ingest(write_pack("bad.yaml", PRICE_LIST.replace("term: on_demand",
                                                               "term: weekly")))
    [error] = report.files[0].errors
    assert error.field == "offer.term" and "weekly" in error.reason
    assert report.total("read") == report.total("rejected") == 1
    assert offers(ledger) == []


def skypilot_aws() -> bytes:
    """A SkyPilot AWS catalog sample (a shared copy: the project keeps none)."""
    return fixture_path("skypilot", "aws-vms.csv").read_bytes()


def test_a_catalog_in_its_documented_cloud_folder_is_read_by_its_folder(ledger, ingest,
                                                                         tmp_path):
    catalog = tmp_path / "aws" / "vms.csv"
    catalog.parent.mkdir()
    catalog.write_bytes(skypilot_aws())
    report = ingest(catalog, as_of=date(2026, 5, 13))
    [file] = report.files
    assert (file.outcome, file.format) == ("ingested", "skypilot-catalog")
    assert file.accepted > 0 and {row.offer_provider for row in offers(ledger)} == {"aws"}


def test_a_file_refused_for_its_name_is_read_again_once_named_right(ledger, ingest, tmp_path):
    # The same bytes, first where nothing says which cloud they price, then in its folder:
    # the refusal is not cached by the bytes.
    anonymous = tmp_path / "vms.csv"
    anonymous.write_bytes(skypilot_aws())
    [refused] = ingest(anonymous, as_of=date(2026, 5, 13)).files
    assert refused.outcome == "rejected_file" and "cannot tell the cloud" in \
        refused.errors[0].reason
    catalog = tmp_path / "aws" / "vms.csv"
    catalog.parent.mkdir()
    catalog.write_bytes(skypilot_aws())
    [read] = ingest(catalog, as_of=date(2026, 5, 13)).files
    assert read.outcome == "ingested" and read.accepted > 0
    [again] = ingest(catalog, as_of=date(2026, 5, 13)).files
    assert again.outcome == "unchanged_file"  # read once, it is not read again
