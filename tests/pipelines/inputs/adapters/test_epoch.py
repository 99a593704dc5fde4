"""The Epoch AI ml_hardware.csv adapter, on real snapshot rows (see the shared epoch README)."""

from __future__ import annotations

import csv
import io
from datetime import date
from pathlib import Path

import pytest

from pipelines.inputs.adapters import epoch
from pipelines.inputs.adapters.base import AdapterError, AdapterOptions, Parsed
from pipelines.inputs.adapters.registry import load_aliases
from pipelines.inputs.packs import PackRow, parse_pack
from pipelines.settings import PROJECT_ROOT
from tests.support.shared_data import fixture_path

# The Epoch files the tests read, by name (shared copies: the project keeps none).
DECEMBER = "ml_hardware_2025-12-16.csv"  # joshyou/clod: the 39 long header names
EARLIER = "ml_hardware_2025-12-10.csv"  # sr3-k/data: other order, `Memory size per board (Byte)`
SHORT = "formats_md_sample.csv"  # the short header names: `Memory bw (byte/s)` and others
DEFECTS = "defects.csv"  # constructed: bad cells, garbled records, an unknown column
FIGURE_COLUMNS = {name for field in epoch.FIGURES for name in epoch.COLUMN_NAMES[field]}
ALIASES = load_aliases((PROJECT_ROOT / "data" / "item_aliases.yaml").read_text("utf-8"))


def sample(name: str) -> Path:
    return fixture_path("epoch", name)


def read(name: str, as_of: date | None = None) -> Parsed:
    data = sample(name).read_bytes()
    return epoch.parse(name, data, AdapterOptions(aliases=ALIASES, as_of=as_of))


def figures(parsed: Parsed, item: str) -> dict[str, PackRow]:
    """The item's rows by metric."""
    return {row.fields["metric"]: row for row in parsed.pack.rows if row.fields["item"] == item}


def values(parsed: Parsed, item: str) -> dict[str, tuple[str, str]]:
    return {metric: (row.fields["value"], row.fields["unit"])
            for metric, row in figures(parsed, item).items()}


# --- detect ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [DECEMBER, EARLIER, SHORT, DEFECTS])
def test_detect_recognises_every_epoch_layout(name):
    assert epoch.detect("download.csv", sample(name).read_bytes()) == "epoch-ml-hardware"


@pytest.mark.parametrize("data", [
    b"source,source_title,source_kind,item,item_kind,metric,value,unit,as_of,status,quote\n"
    b"s,S,dataset,h100-sxm5,gpu,tdp,700,W,2022-03-22,C,\n",
    b"Hardware name,Notes\nNVIDIA B200,only one other Epoch column\n",
    b"Manufacturer,Type,TDP (W)\nNVIDIA,GPU,700.0\n",
    b"# nccl-tests version 2.17.6\n#  Rank  0 Group  0 Pid  1 on host device  0 [0x1b] H100\n",
    b"",
])
def test_detect_declines_other_files(data):
    assert epoch.detect("ml_hardware.csv", data) is None


# --- columns --------------------------------------------------------------------------------

def test_renamed_and_reordered_headers_give_the_same_figures():
    december, earlier, short = read(DECEMBER), read(EARLIER), read(SHORT)
    assert values(december, "h100-sxm5") == values(earlier, "h100-sxm5")
    assert values(short, "h100-sxm5").items() <= values(december, "h100-sxm5").items()
    assert figures(earlier, "h100-sxm5")["hbm_capacity"].column == "Memory size per board (Byte)"
    assert figures(december, "h100-sxm5")["hbm_capacity"].column == "Memory (bytes)"
    assert figures(short, "h100-sxm5")["hbm_bandwidth"].column == "Memory bw (byte/s)"


def test_each_column_becomes_its_metric_in_the_unit_epoch_writes():
    assert values(read(DECEMBER), "h100-sxm5") == {
        "gpu_price": ("33600.0", "USD"),
        "peak_dense_bf16": ("989400000000000.0", "FLOP/s"),
        "hbm_capacity": ("80000000000.0", "byte"),
        "hbm_bandwidth": ("3350000000000.0", "byte/s"),
        "scaleup_bw_per_gpu_bidir": ("900000000000.0", "byte/s"),  # NVLink, both directions
        "scaleout_bw_per_gpu": ("400000000000.0", "bit/s"),  # the NIC, in bits
        "tdp": ("700.0", "W"),
        "peak_fp64": ("33450000000000.0", "FLOP/s"),
        "peak_fp32": ("66910000000000.0", "FLOP/s"),
        "peak_tf32": ("494700000000000.0", "FLOP/s"),
        "peak_fp16": ("133800000000000.0", "FLOP/s"),
        "peak_int8": ("1979000000000000.0", "OP/s"),
    }


def test_values_are_kept_as_written_in_scientific_notation():
    gb300 = values(read(DECEMBER), "gb300")
    assert gb300["peak_dense_fp4"] == ("1.5e+16", "FLOP/s")
    assert gb300["peak_int4"] == ("1.5e+16", "OP/s")


def test_derived_and_descriptive_columns_are_not_figures():
    """`inf` in Price-performance, "SMIC,TSMC" in Foundry, ML models lists: read, not ledgered."""
    earlier = read(EARLIER)
    assert earlier.rejected == []
    assert not any(row.column in ("Price-performance", "Energy efficiency", "Foundry",
                                  "ML models", "Max performance") for row in earlier.pack.rows)


def test_unknown_columns_are_noted_and_ignored():
    assert "unknown column 'Confidence' ignored" in read(DEFECTS).notes
    assert not any("unknown column" in note for note in read(DECEMBER).notes)


def test_a_header_without_hardware_name_is_not_an_epoch_file():
    with pytest.raises(AdapterError) as raised:
        epoch.parse("x.csv", b"Manufacturer,TDP (W)\nNVIDIA,700.0\n", AdapterOptions())
    assert raised.value.line == 1
    assert "Hardware name" in raised.value.reason


def test_a_file_that_is_not_utf8_is_rejected_whole_with_its_line():
    data = b"Hardware name,Manufacturer,TDP (W),Last modified\nCaf\xe9 chip,X,100.0,\n"
    with pytest.raises(AdapterError) as raised:
        epoch.parse("x.csv", data, AdapterOptions())
    assert raised.value.line == 2


# --- dates ----------------------------------------------------------------------------------

def test_the_snapshot_date_is_the_newest_last_modified():
    source, = read(DECEMBER).pack.sources
    assert source.key == "epoch-ml-hardware-csv"
    assert source.kind == "dataset"
    assert source.publisher == "Epoch AI"
    assert source.published_on == date(2025, 12, 16)  # Google TPU v7 Ironwood, 02:08:48
    assert source.title == ("Epoch AI, 'Data on Machine Learning Hardware' "
                            "(ml_hardware.csv, snapshot 2025-12-16)")


def test_as_of_given_by_the_user_is_the_snapshot_date():
    source, = read(DECEMBER, as_of=date(2025, 12, 20)).pack.sources
    assert source.published_on == date(2025, 12, 20)
    assert "snapshot 2025-12-20" in source.title


def test_a_file_without_last_modified_needs_as_of():
    data = b"Hardware name,Manufacturer,Type,TDP (W)\nNVIDIA B200,NVIDIA,GPU,1000.0\n"
    with pytest.raises(AdapterError, match="give --as-of"):
        epoch.parse("x.csv", data, AdapterOptions())
    parsed = epoch.parse("x.csv", data, AdapterOptions(as_of=date(2026, 1, 5)))
    assert parsed.pack.rows[0].fields["as_of"] == "2026-01-05"


def test_figures_are_dated_by_release_date_then_last_modified_then_snapshot():
    december = read(DECEMBER)
    assert {r.fields["as_of"] for r in figures(december, "h100-sxm5").values()} == {"2022-09-20"}
    # Ascend 910B Pro has no Release date: its Last modified day.
    pro = figures(december, "huawei-ascend-910b-pro")
    assert {r.fields["as_of"] for r in pro.values()} == {"2025-07-21"}
    # Ascend 950DT (defects.csv) has neither: the snapshot date.
    assert {r.fields["as_of"] for r in figures(read(DEFECTS), "huawei-ascend-950dt").values()} \
        == {"2025-12-04"}
    given = read(DEFECTS, as_of=date(2026, 1, 5))
    assert {r.fields["as_of"] for r in figures(given, "huawei-ascend-950dt").values()} \
        == {"2026-01-05"}
    assert {r.fields["as_of"] for r in figures(given, "b200").values()} == {"2024-11-15"}


def test_a_later_snapshot_restates_a_changed_figure_under_the_same_as_of():
    """Same (item, metric, as_of) in both snapshots: the later one supersedes, not adds."""
    earlier, december = read(EARLIER), read(DECEMBER)
    before = figures(earlier, "google-tpu-v4")["tdp"]
    after = figures(december, "google-tpu-v4")["tdp"]
    assert (before.fields["value"], after.fields["value"]) == ("170.0", "340.0")
    assert before.fields["as_of"] == after.fields["as_of"] == "2021-05-20"
    before = figures(earlier, "huawei-ascend-910c")["peak_fp16"]
    after = figures(december, "huawei-ascend-910c")["peak_fp16"]
    assert (before.fields["value"], after.fields["value"]) == ("752000000000000.0",
                                                               "800000000000000.0")
    assert before.fields["as_of"] == after.fields["as_of"] == "2024-10-15"


# --- provenance -----------------------------------------------------------------------------

def test_tpu_v4_tdp_derived_in_notes_is_an_estimate_but_its_flops_are_not():
    tpu = figures(read(DECEMBER), "google-tpu-v4")
    assert (tpu["tdp"].fields["value_kind"], tpu["tdp"].fields["status"]) == ("estimate", "S")
    bf16 = tpu["peak_dense_bf16"].fields
    assert (bf16["value_kind"], bf16["status"]) == ("reported", "C")
    # The earlier snapshot's 170 W came without the derivation.
    assert figures(read(EARLIER), "google-tpu-v4")["tdp"].fields["value_kind"] == "reported"


def test_a_price_with_no_official_msrp_is_an_estimate():
    december = read(DECEMBER)
    h100 = figures(december, "h100-sxm5")["gpu_price"].fields
    assert (h100["value_kind"], h100["status"]) == ("estimate", "S")
    assert h100["quote"].startswith("No official MSRP. Industry analyst in May 2023 reports")
    # 120,000 yuan converted to USD is not a list price either.
    assert figures(december, "huawei-ascend-910b")["gpu_price"].fields["value_kind"] == "estimate"
    # A price Epoch cites without comment is reported, but secondary (S) like every price.
    mi300x = figures(december, "amd-mi300x")["gpu_price"].fields
    assert (mi300x["value_kind"], mi300x["status"]) == ("reported", "S")


def test_status_is_c_only_for_rows_with_a_datasheet_link():
    assert figures(read(DECEMBER), "b200")["tdp"].fields["status"] == "C"
    assert figures(read(SHORT), "b200")["tdp"].fields["status"] == "S"  # no link column


def test_the_quote_is_the_notes_and_the_first_datasheet_url_never_last_modified():
    december = read(DECEMBER)
    assert figures(december, "h100-sxm5")["tdp"].fields["quote"] == (
        "Listed performance figures are without sparsity. "
        "Datasheet: https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet")
    assert figures(december, "b200")["tdp"].fields["quote"].endswith(
        "Datasheet: https://www.primeline-solutions.com/media/categories/server/nach-gpu/"
        "nvidia-hgx-h200/nvidia-blackwell-b200-datasheet.pdf")
    tpu_quote = figures(december, "google-tpu-v4")["tdp"].fields["quote"]
    assert len(tpu_quote) == epoch.QUOTE_LIMIT and tpu_quote.endswith("…")
    assert "= ~342 W" in tpu_quote
    assert not any("2025-12-12" in str(row.fields["quote"]) for row in december.pack.rows)


@pytest.mark.parametrize(("notes", "families"), [
    ("So the TPUv4’s TDP is (275 TFLOP/s  / 46 TFLOP/s) * 280 W / 4.9x efficiency = ~342 W.",
     {"power"}),
    ("Google does not officially state TPUv7's TDP.", {"power"}),
    ("No official TDP, SemiAnalysis estimates 300W TDP https://newsletter.semianalysis.com/p/x",
     {"power"}),
    ("Most reports, e.g. Trendforce indicate 800 TFLOP/s in FP16. SemiAnalysis claims 780 "
     "TFLOP/s.", set()),
    ("Listed performance figures are without sparsity.", set()),
    ("Note that this may be a slightly approximate figure due to rounding on Google's part.",
     set()),
])
def test_estimated_families_reads_epochs_notes(notes, families):
    assert epoch.estimated_families(notes) == families


@pytest.mark.parametrize(("price_source", "estimate"), [
    ("No official MSRP. \n\nIndustry analyst in May 2023 reports DGX servers ...", True),
    ("https://www.trendforce.com/news/x/\n120,000 yuan = 16800 USD at mid-2023 rate of 0.14 "
     "yuan per dollar.", True),
    ("https://www.tomshardware.com/tech-industry/amds-chips-cost-dollar10-to-dollar15k-apiece",
     False),  # words inside a URL are not Epoch's prose
])
def test_price_is_estimate_reads_the_source_for_the_price(price_source, estimate):
    assert epoch.price_is_estimate(price_source) is estimate


# --- records and lines ----------------------------------------------------------------------

def test_multi_line_records_keep_the_line_they_start_on():
    december = read(DECEMBER)
    first_line = {item.key: min(r.line for r in figures(december, item.key).values())
                  for item in december.pack.items}
    assert first_line == {
        "google-tpu-v7-ironwood": 2, "gb300": 10, "b200": 14, "huawei-ascend-910c": 16,
        "intel-habana-gaudi3": 19, "amd-mi300x": 22, "hgx-h20": 24, "nvidia-l2-pcle": 27,
        "h100-sxm5": 28, "huawei-ascend-910b": 39, "google-tpu-v4": 50, "a100-sxm4-40gb": 60,
        "huawei-ascend-910b-pro": 61}
    physical = sample(DECEMBER).read_text("utf-8").split("\n")
    for item in december.pack.items:
        assert physical[first_line[item.key] - 1].startswith(item.name + ",")
    h100 = figures(december, "h100-sxm5")["tdp"]
    assert h100.raw_text.startswith("NVIDIA H100 SXM5 80GB,NVIDIA,GPU,")
    assert h100.raw_text.endswith(",1.5832e+16,58898809523.809525,1979000000000000.0")
    assert h100.raw_text.count("\n") == 38 - 28  # lines 28-38


def test_every_figure_cell_is_a_row_or_a_rejection():
    """An independent count: the non-empty cells of the mapped columns, record by record."""
    for name in (DECEMBER, EARLIER, SHORT):
        parsed = read(name)
        text = sample(name).read_text("utf-8")
        mapped = [c for c in next(csv.reader(io.StringIO(text))) if c in FIGURE_COLUMNS]
        cells = sum(1 for record in csv.DictReader(io.StringIO(text, newline=""))
                    for column in mapped if record[column].strip())
        assert len(parsed.pack.rows) == cells, name
        assert parsed.read == cells and parsed.rejected == []
    assert len(read(DECEMBER).pack.rows) == 107


def test_bad_records_and_cells_are_rejected_with_their_line_and_column():
    parsed = read(DEFECTS)
    assert [(r.line, r.field, r.reason) for r in parsed.rejected] == [
        (3, "TDP (W)", "'~400' is not a number (expected a plain number of W, "
                       "e.g. 700.0 or 1.5e+16)"),
        (4, "row", "expected 14 fields as in the header, got 5 (the record spans lines 4-5: "
                   "check for a stray or unclosed quote)"),
        (6, "row", "expected 14 fields as in the header, got 13"),
        (7, "TDP (W)", "'n/a' is not a number (expected a plain number of W, "
                       "e.g. 700.0 or 1.5e+16)"),
        (8, "FP8 (FLOP/s)", "'inf' is not a finite number (Epoch writes inf only in its "
                            "derived columns)"),
        (11, "Hardware name", "Hardware name is blank: the record's figures cannot be tied to "
                              "a chip"),
        (12, "Release date", "Release date 'Q4 2024' is not a date (expected YYYY-MM-DD)"),
    ]
    assert parsed.rejected[1].raw_text == '"NVIDIA H100 SXM5\n80GB",NVIDIA,GPU,2022-09-20,33600.0'
    assert (len(parsed.pack.rows), len(parsed.rejected), parsed.read) == (21, 7, 28)
    assert parsed.skipped_lines == 1  # the blank line 10


def test_a_rejected_cell_keeps_the_rest_of_its_record():
    a100 = figures(read(DEFECTS), "a100-sxm4-40gb")
    assert sorted(a100) == ["gpu_price", "hbm_bandwidth", "hbm_capacity", "peak_dense_bf16",
                            "scaleout_bw_per_gpu", "scaleup_bw_per_gpu_bidir"]


# --- items ----------------------------------------------------------------------------------

def test_items_take_the_alias_else_a_slug_of_the_name():
    december = read(DECEMBER)
    items = {item.key: item for item in december.pack.items}
    assert items["h100-sxm5"].name == "NVIDIA H100 SXM5 80GB"
    assert items["h100-sxm5"].released_on == date(2022, 9, 20)
    assert items["nvidia-l2-pcle"].name == "NVIDIA L2 PCle"  # Epoch's typo, kept as written
    assert (items["google-tpu-v4"].kind, items["google-tpu-v4"].vendor) == ("tpu", "Google")
    assert items["intel-habana-gaudi3"].kind == "accelerator"  # blank Type
    assert items["huawei-ascend-910b-pro"].released_on is None
    unaliased = epoch.parse(DECEMBER, sample(DECEMBER).read_bytes(), AdapterOptions())
    assert "nvidia-h100-sxm5-80gb" in {item.key for item in unaliased.pack.items}


def test_a_chip_named_twice_is_declared_once_and_noted():
    data = (b"Hardware name,Manufacturer,Type,TDP (W),Last modified\n"
            b"NVIDIA B200,NVIDIA,GPU,1000.0,2025-11-13 14:52:20+00:00\n"
            b"NVIDIA  B200,NVIDIA,GPU,1200.0,2025-11-14 10:00:00+00:00\n")
    parsed = epoch.parse("x.csv", data, AdapterOptions(aliases={"NVIDIA B200": "b200"}))
    assert [item.key for item in parsed.pack.items] == ["b200"]
    assert [row.fields["item"] for row in parsed.pack.rows] == ["b200", "b200"]
    assert "line 3: 'NVIDIA  B200' is item 'b200' again (first on line 2)" in parsed.notes[-1]


def test_the_alias_file_names_items_the_ledger_has():
    assert ALIASES["NVIDIA H100 SXM5 80GB"] == "h100-sxm5"
    assert ALIASES["Google TPU v4"] == "google-tpu-v4"
    ledger = {item.key for path in (PROJECT_ROOT / "data" / "sources").glob("*.yaml")
              for item in parse_pack(path.name, path.read_bytes()).items}
    assert set(ALIASES.values()) <= ledger
    assert len(set(ALIASES.values())) == len(ALIASES)  # one Epoch name per item


@pytest.mark.parametrize(("text", "message"), [
    ("epoch: [a, b]\n", "`epoch` must map"),
    ("epoch:\n  NVIDIA B200:\n", "has no item key"),
    ("epoch: {a: b\n", "malformed YAML"),
])
def test_a_broken_alias_file_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        load_aliases(text)


def test_a_record_the_csv_module_cannot_read_is_rejected_and_reading_goes_on():
    huge = "x" * 200_000  # over the csv module's field limit
    data = ("Hardware name,Manufacturer,TDP (W),Last modified\n"
            f"Chip X,Y,{huge},2025-11-13 14:52:20+00:00\n"
            "NVIDIA B100,NVIDIA,700.0,2025-11-13 14:52:21+00:00\n").encode()
    parsed = epoch.parse("x.csv", data, AdapterOptions())
    assert [(r.line, r.field) for r in parsed.rejected] == [(2, "row")]
    assert "field larger than field limit" in parsed.rejected[0].reason
    assert [(r.line, r.fields["item"]) for r in parsed.pack.rows] == [(3, "nvidia-b100")]
