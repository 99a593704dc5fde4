"""Bulk validation gives what row-by-row validation gives: the same clean observations and the
same errors, for plain price-list rows and for every way a row can leave the plain shape."""

from datetime import date

import pytest

from models.bulk_rows import CommonFields, plain_row, validate_rows
from models.observations import COLUMN_FIELD, MetricDef

TODAY = date(2026, 11, 23)
METRICS = {"gpu_hour_price": MetricDef("gpu_hour_price", "USD/hour", "per_gpu", "lower",
                                       "price per GPU-hour", None, 0.01, 1000)}
ITEMS = {"azure-nd96isr-h100-v5-eastus-on-demand", "azure-nd96isr-h100-v5-westus-spot"}
SOURCES = {"azure-retail-prices-2026-11-01"}
PLAIN = {"source": "azure-retail-prices-2026-11-01",
         "item": "azure-nd96isr-h100-v5-eastus-on-demand", "metric": "gpu_hour_price",
         "value": 12.29, "unit": "USD/hour", "as_of": "2026-11-01", "status": "C",
         "value_kind": "reported", "quote": "ND96isr H100 v5 eastus on-demand: 98.32 USD",
         "offer": {"provider": "azure", "region": "eastus", "term": "on_demand",
                   "instance_type": "Standard_ND96isr_H100_v5", "gpu": "h100-sxm5",
                   "gpus_per_instance": 8, "price_written": "98.32", "currency": "USD",
                   "unit_written": "1 Hour"},
         COLUMN_FIELD: "Items[0].retailPrice"}


def _offer(**change):
    return {**PLAIN, "offer": {**PLAIN["offer"], **change}}


# Each departs from the plain row in one way the bulk path must not judge differently.
VARIANTS = {
    "plain": PLAIN,
    "spot item": {**PLAIN, "item": " azure-nd96isr-h100-v5-westus-spot "},
    "integer value": {**PLAIN, "value": 12},
    "value as text": {**PLAIN, "value": "12.29"},
    "range": {**PLAIN, "value": [11, 13]},
    "value is a bool": {**PLAIN, "value": True},
    "negative value": {**PLAIN, "value": -1.0},
    "below the minimum": {**PLAIN, "value": 0.001},
    "above the maximum": {**PLAIN, "value": 5000.0},
    "not finite": {**PLAIN, "value": float("nan")},
    "huge integer": {**PLAIN, "value": 10**400},
    "unknown item": {**PLAIN, "item": "azure-nowhere"},
    "blank item": {**PLAIN, "item": "  "},
    "unknown source": {**PLAIN, "source": "elsewhere"},
    "unknown metric": {**PLAIN, "metric": "gpu_hour_cost"},
    "wrong unit": {**PLAIN, "unit": "GB/s"},
    "other currency unit": {**PLAIN, "unit": "USD/day"},
    "missing unit": {**PLAIN, "unit": None},
    "future date": {**PLAIN, "as_of": "2027-01-01"},
    "month date": {**PLAIN, "as_of": "2026-11"},
    "date object": {**PLAIN, "as_of": date(2026, 11, 1)},
    "not a date": {**PLAIN, "as_of": "yesterday"},
    "bad status": {**PLAIN, "status": "X"},
    "no status": {**PLAIN, "status": None},
    "no value kind": {k: v for k, v in PLAIN.items() if k != "value_kind"},
    "bad value kind": {**PLAIN, "value_kind": "guess"},
    "NUL in quote": {**PLAIN, "quote": "98.32\x00"},
    "NUL in item": {**PLAIN, "item": "azure\x00"},
    "NUL in source": {**PLAIN, "source": "azure\x00"},
    "blank quote": {**PLAIN, "quote": "   "},
    "no quote": {k: v for k, v in PLAIN.items() if k != "quote"},
    "valid_to": {**PLAIN, "valid_to": "2026-12-01"},
    "extra field": {**PLAIN, "notes": "x"},
    "no offer": {k: v for k, v in PLAIN.items() if k != "offer"},
    "offer is text": {**PLAIN, "offer": "azure"},
    "offer is blank text": {**PLAIN, "offer": "  "},
    "unknown offer key": _offer(discount=3),
    "vendor, no provider": {**PLAIN, "offer": {**{k: v for k, v in PLAIN["offer"].items()
                                                  if k != "provider"}, "vendor": "azure"}},
    "blank provider": _offer(provider=" "),
    "padded term": _offer(term=" spot "),
    "bad term": _offer(term="weekly"),
    "units as text": _offer(gpus_per_instance="8"),
    "units as float": _offer(gpus_per_instance=8.0),
    "fractional units": _offer(gpus_per_instance=2.5),
    "zero units": _offer(gpus_per_instance=0),
    "blank units, then quantity": _offer(gpus_per_instance=" ", quantity=4),
    "lower-case currency": _offer(currency="usd"),
    "bad currency": _offer(currency="dollars"),
    "numeric region": _offer(region=5),
    "blank gpu": _offer(gpu=""),
    "valid_until": _offer(valid_until="2027-01-01"),
    "no price written": _offer(price_written=None),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_a_row_is_judged_the_same_in_bulk_and_alone(name):
    rows = [(12, VARIANTS[name])]
    kwargs = {"metrics": METRICS, "items": ITEMS, "sources": SOURCES, "today": TODAY}
    assert validate_rows(rows, bulk=True, **kwargs) == validate_rows(rows, bulk=False, **kwargs)


def test_plain_rows_are_judged_in_bulk_and_the_rest_left_to_the_validator():
    common = CommonFields(METRICS, SOURCES, TODAY)
    clean = plain_row(PLAIN, 3, ITEMS, common)
    assert clean is not None
    assert (clean.value, clean.value_written, clean.unit_written) == (12.29, "98.32", "1 Hour")
    assert clean.offer.units == 8 and clean.offer.term == "on_demand"
    assert plain_row(VARIANTS["value as text"], 3, ITEMS, common) is None
    assert plain_row(VARIANTS["unknown item"], 3, ITEMS, common) is None


def test_a_duplicate_fact_is_rejected_in_bulk_as_it_is_alone():
    rows = [(1, PLAIN), (2, {**PLAIN, "value": 13.0}), (3, VARIANTS["spot item"])]
    kwargs = {"metrics": METRICS, "items": ITEMS, "sources": SOURCES, "today": TODAY}
    bulk = validate_rows(rows, bulk=True, **kwargs)
    assert bulk == validate_rows(rows, bulk=False, **kwargs)
    assert [o.line for o in bulk[0]] == [1, 3]
    assert [(e.line, e.field) for e in bulk[1]] == [(2, "item")]


def test_rows_judged_together_are_judged_as_each_alone():
    """What the bulk path remembers from one row (the shared fields, an offer's terms) never
    decides another that only looks equal: 8, 8.0 and True GPUs are three verdicts."""
    kwargs = {"metrics": METRICS, "items": ITEMS, "sources": SOURCES, "today": TODAY}
    spot = "azure-nd96isr-h100-v5-westus-spot"
    for name, row in {**VARIANTS, "8.0 GPUs": _offer(gpus_per_instance=8.0),
                      "True GPUs": _offer(gpus_per_instance=True),
                      "[8] GPUs": _offer(gpus_per_instance=[8])}.items():
        # After a plain row of the same terms, as a second fact (not a duplicate).
        rows = [(1, PLAIN), (2, {**row, "item": spot} if row.get("item") in ITEMS else row)]
        bulk = validate_rows(rows, bulk=True, **kwargs)
        assert bulk == validate_rows(rows, bulk=False, **kwargs), name
    all_at_once = list(enumerate(VARIANTS.values()))
    assert validate_rows(all_at_once, bulk=True, **kwargs) == validate_rows(
        all_at_once, bulk=False, **kwargs)
