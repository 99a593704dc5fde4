"""Scale-up and scale-out bandwidth per GPU, their ratio like for like, switch capacity."""

from datetime import date

import pytest

from models.trends import interconnect_flags, interconnect_trend, switch_family
from tests.models.trends.frames import CUTOFF, ON, frame, obs_row


def nvlink(n: int, gb_s: float, as_of: date, **overrides):
    return obs_row(item=f"nvlink-{n}", item_name=f"NVLink {n}", value=gb_s, as_of=as_of,
                   source=f"nvlink-{n}-page", **overrides)


def fabric(item: str, gb_s: float, as_of: date, metric: str = "port_rate"):
    return obs_row(item=item, item_name=item.upper(), item_kind="scaleout_fabric",
                   item_family="InfiniBand", metric=metric, unit="Gb/s", value=gb_s,
                   as_of=as_of, source=f"{item}-page")


def switch(item: str, name: str, family: str | None, tb_s: float, as_of: date,
           metric: str = "switch_capacity_unidir", kind: str = "scaleout_switch"):
    return obs_row(item=item, item_name=name, item_kind=kind, item_family=family,
                   metric=metric, unit="Tb/s", value=tb_s, as_of=as_of, source=f"{item}-page")


def trend(rows, **kwargs):
    return interconnect_trend(frame(rows), on=ON, cutoff=CUTOFF, **kwargs)


def test_ratio_compares_one_direction_in_bits():
    result = trend([nvlink(5, 1800, date(2024, 3, 18)), fabric("ib-xdr", 800, date(2024, 3, 18))])
    [ratio] = result.ratios
    assert ratio.ratio == pytest.approx(9.0)  # 1,800 GB/s / 2 x 8 = 7,200 Gb/s vs 800 Gb/s
    assert ratio.formula == ("NVLink 5 1,800 GB/s both directions / 2 x 8 = 7,200 Gb/s per "
                             "direction vs IB-XDR 800 Gb/s per GPU: 7,200 / 800 = 9.0x")


def test_each_generation_meets_the_newest_scale_out_dated_on_or_before_it():
    result = trend([nvlink(3, 600, date(2020, 5, 14)), nvlink(4, 900, date(2022, 3, 22)),
                    fabric("ib-hdr", 200, date(2016, 11, 10)),
                    fabric("ib-ndr", 400, date(2021, 11, 1)),
                    fabric("ib-xdr", 800, date(2024, 3, 18))])
    assert [(r.scale_up.item, r.scale_out.item, r.ratio) for r in result.ratios] == [
        ("nvlink-3", "ib-hdr", 12.0), ("nvlink-4", "ib-ndr", 9.0)]


def test_a_scale_up_generation_older_than_any_scale_out_has_no_ratio():
    result = trend([nvlink(1, 160, date(2016, 4, 5)), fabric("ib-ndr", 400, date(2021, 11, 1))])
    assert result.ratios == ()


def test_scale_out_per_gpu_is_port_rate_times_nics_unless_sourced_per_gpu():
    rows = [fabric("ib-ndr", 400, date(2021, 11, 1)), fabric("ib-xdr", 800, date(2024, 3, 18)),
            fabric("ib-xdr", 1000, date(2024, 3, 18), metric="scaleout_bw_per_gpu")]
    result = trend(rows, nics_per_gpu=2)
    assert [(p.item, p.metric, p.value) for p in result.scale_out.points] == [
        ("ib-ndr", "port_rate", 800), ("ib-xdr", "scaleout_bw_per_gpu", 1000)]
    assert "port_rate x 2 NIC(s) per GPU" in result.scale_out.formula


def test_scale_up_series_takes_only_scaleup_fabrics_and_fits_doubling():
    rows = [nvlink(n, 160 * 2 ** n, date(2016 + 2 * n, 1, 1)) for n in range(4)]
    rows.append(obs_row(item="hgx-a100", item_kind="system", value=600))
    result = trend(rows)
    assert [p.item for p in result.scale_up.points] == ["nvlink-0", "nvlink-1", "nvlink-2",
                                                        "nvlink-3"]
    assert result.scale_up.fit.doubling_years == pytest.approx(2.0, rel=1e-2)


def test_scale_up_and_scale_out_series_share_one_unit_one_direction():
    result = trend([nvlink(5, 1800, date(2024, 3, 18)), fabric("ib-xdr", 800, date(2024, 3, 18))])
    [up], [out] = result.scale_up.points, result.scale_out.points
    assert result.scale_up.unit == result.scale_out.unit == "Gb/s"
    assert (up.value, up.low, up.high, up.unit) == (7200, 7200, 7200, "Gb/s")
    assert result.scale_up.formula == "scaleup_bw_per_gpu_bidir (GB/s, both directions) / 2 x 8"
    assert out.value == 800
    # the ratio keeps the sourced figure and shows the conversion
    assert result.ratios[0].scale_up.value == 1800 and result.ratios[0].scale_up.unit == "GB/s"


@pytest.mark.parametrize(("item", "name", "family", "expected"), [
    ("nvidia-quantum-2", "NVIDIA Quantum-2 (NDR)", "InfiniBand", "InfiniBand"),
    ("nvidia-qm9700", "NVIDIA QM9700", None, "InfiniBand"),
    ("mellanox-switch-ib", "Mellanox Switch-IB (EDR)", None, "InfiniBand"),
    ("broadcom-tomahawk-5", "Broadcom Tomahawk 5", "Tomahawk", "Ethernet"),
    ("nvidia-sn5600", "NVIDIA SN5600", None, "Ethernet"),
    ("nvidia-spectrum-4", "NVIDIA Spectrum-4 ASIC", "Spectrum", "Ethernet"),
    ("acme-x1", "Acme X1", "Acme", "Acme"),
    ("acme-x2", "Acme X2", None, "Other"),
])
def test_switch_family_from_family_name_or_key(item, name, family, expected):
    assert switch_family(item, name, family) == expected


def test_switch_capacity_splits_infiniband_and_ethernet_and_halves_bidirectional_quotes():
    rows = [switch("quantum-2", "NVIDIA Quantum-2", "InfiniBand", 51.2, date(2021, 11, 1),
                   metric="switch_capacity"),
            switch("quantum-x800", "NVIDIA Quantum-X800", "InfiniBand", 115.2,
                   date(2024, 3, 18)),
            switch("th5", "Broadcom Tomahawk 5", "Tomahawk", 51.2, date(2022, 8, 16),
                   kind="switch_silicon"),
            switch("th6", "Broadcom Tomahawk 6", "Tomahawk", 102.4, date(2025, 6, 3),
                   kind="switch_silicon"),
            # quoted both ways: the one-direction figure is kept, not halved
            switch("th6", "Broadcom Tomahawk 6", "Tomahawk", 204.8, date(2025, 6, 3),
                   metric="switch_capacity", kind="switch_silicon")]
    ethernet, infiniband = trend(rows).switch_capacity
    assert ethernet.key == "switch_capacity_ethernet"
    assert [(p.item, p.value) for p in ethernet.points] == [("th5", 51.2), ("th6", 102.4)]
    assert [(p.item, p.metric, p.value) for p in infiniband.points] == [
        ("quantum-2", "switch_capacity", 25.6), ("quantum-x800", "switch_capacity_unidir", 115.2)]
    assert "/ 2" in infiniband.formula and infiniband.unit == "Tb/s"
    assert ethernet.fit.doubling_years == pytest.approx(2.8, abs=0.1)


def test_scale_up_switch_capacity_stays_in_its_own_unit():
    rows = [obs_row(item="nvswitch-3", item_name="NVSwitch 3", item_kind="scaleup_switch",
                    metric="switch_capacity_bidir_bytes", unit="TB/s", value=3.2,
                    as_of=date(2022, 3, 22)),
            obs_row(item="nvswitch-4", item_name="NVSwitch 4", item_kind="scaleup_switch",
                    metric="switch_capacity_bidir_bytes", unit="TB/s", value=7.2,
                    as_of=date(2024, 3, 18))]
    [series] = trend(rows).switch_capacity
    assert (series.key, series.unit) == ("switch_capacity_scale_up", "TB/s")
    assert [p.value for p in series.points] == [3.2, 7.2]


def test_latency_points_where_sourced():
    rows = [obs_row(item="qm9700", item_kind="scaleout_switch", metric="switch_latency",
                    unit="ns", value=130, source="datasheet")]
    [latency] = trend(rows).latency
    assert (latency.item, latency.value, latency.unit) == ("qm9700", 130, "ns")


def generations(*pairs):
    rows = []
    for n, (up, out, year) in enumerate(pairs, start=1):
        rows += [nvlink(n, up, date(year, 1, 1)), fabric(f"nic-{n}", out, date(year, 1, 1))]
    return trend(rows)


def test_ratio_flag_warns_when_the_newest_generation_widens_the_gap():
    flags = interconnect_flags(generations((900, 400, 2022), (3600, 800, 2026)))
    [flag] = [f for f in flags if f.kind == "bandwidth_ratio"]
    assert flag.severity == "warning"
    assert flag.subject == "nvlink-2 vs nic-2"
    assert "14,400 / 800 = 18.0x" in flag.message and "grew from 9.0x" in flag.message
    assert set(flag.observation_ids) == {1, 2, 3, 4}


def test_ratio_flag_is_information_when_the_gap_holds():
    flags = interconnect_flags(generations((900, 400, 2022), (1800, 800, 2024)))
    [flag] = [f for f in flags if f.kind == "bandwidth_ratio"]
    assert flag.severity == "info" and "did not grow" in flag.message


def test_trend_flags_give_doubling_time_with_first_and_last_points():
    flags = interconnect_flags(generations((900, 400, 2022), (1800, 800, 2024)))
    by_subject = {f.subject: f for f in flags if f.kind == "interconnect_trend"}
    up = by_subject["Scale-up bandwidth per GPU (one direction)"]
    assert "doubling every 2.0 years" in up.message
    assert "3,600 Gb/s (nvlink-1-page, 2022-01-01)" in up.message
    assert "7,200 Gb/s (nvlink-2-page, 2024-01-01)" in up.message
    assert "(GB/s, both directions) / 2 x 8" in up.message
    assert "Scale-out bandwidth per GPU (one direction)" in by_subject


def test_switch_capacity_flag_per_series_with_a_fit():
    rows = [switch("th4", "Tomahawk 4", "Tomahawk", 25.6, date(2019, 12, 1)),
            switch("th5", "Tomahawk 5", "Tomahawk", 51.2, date(2022, 8, 16))]
    [flag] = [f for f in interconnect_flags(trend(rows)) if f.kind == "switch_capacity"]
    assert flag.subject == "Ethernet switch capacity (one direction)"
    assert "25.6 Tb/s" in flag.message and "51.2 Tb/s" in flag.message


def test_nothing_in_the_ledger_gives_empty_series_and_no_flags():
    result = trend([])
    assert result.scale_up.points == () and result.ratios == () and result.switch_capacity == ()
    assert interconnect_flags(result) == []
