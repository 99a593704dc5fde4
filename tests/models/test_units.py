import pytest

from models.units import UnitError, conversion_factor, si_factor


@pytest.mark.parametrize(("written", "canonical", "counts", "factor"), [
    ("TB/s", "GB/s", "bytes", 1000),
    ("GB/s", "GB/s", "bytes", 1),
    ("Tb/s", "Gb/s", "bits", 1000),
    ("Gbps", "Gb/s", "bits", 1),
    ("GiB", "GB", "bytes", 1.073741824),
    ("PFLOP/s", "TFLOP/s", None, 1000),
    ("W", "kW", None, 0.001),
    ("USD/kW/month", "USD/kW/month", None, 1),
    ("cents/kWh", "USD/kWh", None, None),
    ("", "dimensionless", None, 1),
])
def test_conversion_factor_between_compatible_units(written, canonical, counts, factor):
    if factor is None:
        with pytest.raises(UnitError, match="unknown unit 'cents/kWh'"):
            conversion_factor(written, canonical, counts)
    else:
        assert conversion_factor(written, canonical, counts) == pytest.approx(factor)


@pytest.mark.parametrize(("written", "canonical", "counts", "message"), [
    ("Gb/s", "GB/s", "bytes", "counts bits but the metric is defined in bytes"),
    ("GB/s", "Gb/s", "bits", "counts bytes but the metric is defined in bits"),
    ("kW", "GB/s", "bytes", "is not a data unit"),
    ("GB", "count", None, "is a data unit"),
    ("kg", "kW", None, "does not fit the metric's unit 'kW'"),
    ("furlongz", "W", None, "unknown unit 'furlongz'"),
])
def test_conversion_factor_refuses_to_guess(written, canonical, counts, message):
    with pytest.raises(UnitError, match=message):
        conversion_factor(written, canonical, counts)


@pytest.mark.parametrize("written", [")", "(", "1/0", "9^9^9", "m**999", "kW**kW**kW", "x" * 65])
def test_a_hostile_unit_is_an_unknown_unit_quickly(written):
    with pytest.raises(UnitError, match="unknown unit"):
        conversion_factor(written, "W", None)


@pytest.mark.parametrize(("unit", "si_unit", "factor"), [
    ("TFLOP/s", "FLOP/s", 1e12), ("GB", "B", 1e9), ("GiB", "B", 2**30), ("TB/s", "B/s", 1e12),
    ("Gb/s", "B/s", 1e9 / 8), ("us", "s", 1e-6),
])
def test_a_model_gets_its_figures_in_si_from_pint(unit, si_unit, factor):
    assert si_factor(unit, si_unit) == factor
