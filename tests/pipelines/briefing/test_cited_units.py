"""A figure the model used, as the briefing cites it: a plain number prints without a unit."""

from pipelines.briefing.results import cited


def test_a_plain_number_has_no_unit_and_a_quantity_keeps_its_own():
    assert cited({"name": "availability", "value": 1.0, "unit": "1", "origin": "default"}
                  ).unit == ""
    assert cited({"name": "pue", "value": 1.2, "unit": "USD/kWh", "origin": "ledger"}
                  ).unit == "USD/kWh"
