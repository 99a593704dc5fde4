"""Text the sources write is stored whole on both dialects: PostgreSQL takes the long titles,
publishers, URLs, item keys and names, units and value text that SQLite takes, and a rejected
row's text with a NUL in it is kept (as `\\x00`) instead of stopping the ingest."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from db.engine import Session
from db.schema import Item, MeasurementRun, Observation, RejectedRow, Source

TITLE = "NVIDIA NVLink and NVLink Switch, " + "a very long title " * 40  # > 500
PUBLISHER = "NVIDIA Corporation, " + "Data Center Networking Business Unit " * 8  # > 200
URL = "https://www.nvidia.com/en-us/data-center/nvlink/?" + "q=1&" * 300  # > 1000
ITEM_KEY = "nvlink-5-" + "x" * 250  # > 200, within the 300 a key may have
ITEM_NAME = "NVLink 5.0 " + "fifth generation " * 20  # > 300
VENDOR = "NVIDIA " * 20  # > 100
UNIT = "TB/s" + " per GPU, both directions counted" * 3  # > 50
VALUE = "1." + "8" * 120  # > 100 characters as written

LONG_PACK = f"""
source:
  key: nvidia-nvlink-page
  title: "{TITLE}"
  publisher: "{PUBLISHER}"
  url: "{URL}"
  kind: vendor_datasheet
  published_on: 2024-03-18
items:
  - {{key: {ITEM_KEY}, name: "{ITEM_NAME}", kind: scaleup_fabric, vendor: "{VENDOR}",
     family: NVLink}}
observations:
  - {{item: {ITEM_KEY}, metric: scaleup_bw_per_gpu_bidir, value: "{VALUE}", unit: TB/s,
     as_of: 2024-03-18, status: C, quote: "{'a quote ' * 200}"}}
  - {{item: {ITEM_KEY}, metric: scaleup_bw_per_gpu_bidir, value: 1.8, unit: "{UNIT}",
     as_of: 2024-03-18, status: C}}
"""


def test_long_source_text_is_stored_whole_on_both_dialects(ledger, ingest, write_pack):
    report = ingest(write_pack("long.yaml", LONG_PACK))

    [file] = report.files
    assert (file.outcome, file.read, file.accepted, file.rejected) == ("ingested", 2, 1, 1)
    [error] = file.errors
    assert error.field == "unit" and UNIT[:60] in error.reason  # an unknown unit, not a crash
    with Session(ledger) as session:
        source = session.scalars(select(Source)).one()
        item = session.scalars(select(Item).where(Item.key == ITEM_KEY)).one()
        observation = session.scalars(select(Observation)).one()
        rejected = session.scalars(select(RejectedRow)).one()
    assert (source.title, source.publisher, source.url) == (TITLE.strip(), PUBLISHER.strip(), URL)
    assert (item.name, item.vendor) == (ITEM_NAME.strip(), VENDOR.strip())
    assert observation.value_written == VALUE and len(observation.quote) > 1000
    assert UNIT[:60] in rejected.reason


NCCL_WITH_NUL = (
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20\n"
    "#  Rank  0 Group  0 Pid  1 on node-1 device  0 [0x18] NVIDIA H100\x00 80GB HBM3\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong"
    "     time   algbw   busbw #wrong\n"
    "           8             2     float     sum      -1    10.00    0.50    1.00      0"
    "    10.00    0.50    1.00      0\n"
    "          1\x006             4     float     sum      -1    10.00    0.50    1.00      0"
    "    10.00    0.50    1.00      0\n"
    "          16             4     float     sum      -1    10.00    0.50    1.00      0"
    "    10.00    0.50    1.00      0\n"
)


def test_a_nul_in_adapter_text_is_kept_escaped_not_a_crash(ledger, ingest, nvlink_pack,
                                                            tmp_path):
    ingest(nvlink_pack)  # the item the run measures
    path = tmp_path / "all_reduce_perf.log"
    path.write_bytes(NCCL_WITH_NUL.encode())

    report = ingest(path, item="nvlink-5", as_of=date(2026, 1, 5))

    [file] = report.files
    assert (file.outcome, file.rejected, file.read) == ("ingested", 1, 4)
    with Session(ledger) as session:
        rejected = session.scalars(select(RejectedRow)).one()
        run = session.scalars(select(MeasurementRun)).one()
        quote = session.scalars(select(Observation.quote).where(Observation.line == 4)).one()
    assert rejected.line == 5 and rejected.field == "size"
    assert "1\\x006" in rejected.raw_text and "\x00" not in rejected.raw_text
    assert run.device == quote.split("(")[1].split(")")[0] == "NVIDIA H100\\x00 80GB HBM3"
