"""Every reader that creates items (source packs, YAML and CSV; Epoch's chip names): keys
NFC-normalised, and a key or name holding an invisible or bidirectional control character
refused as rejected rows, never a second item that prints as the first (SQLite and
PostgreSQL). Rows read add up: accepted + rejected + unchanged."""

from __future__ import annotations

from datetime import date

from sqlalchemy import select

from db.engine import Session
from db.schema import Item
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.adapters.registry import read_file
from pipelines.inputs.packs import MALFORMED, parse_pack
from tests.conftest import NVLINK_PACK

HIDDEN = NVLINK_PACK.replace("{key: gb200-nvl72,", "{key: \"gb200-nvl72\u200b\",").replace(
    "{item: gb200-nvl72,", "{item: \"gb200-nvl72\u200b\",")


def items(ledger) -> list[str]:
    with Session(ledger) as session:
        return sorted(session.scalars(select(Item.key)))


def test_a_zero_width_space_in_a_key_rejects_its_rows_and_creates_no_item(ledger, ingest,
                                                                          write_pack):
    ingest(write_pack("nvlink.yaml", NVLINK_PACK))
    report = ingest(write_pack("hidden.yaml", HIDDEN))
    [file] = report.files
    assert (file.read, file.accepted, file.unchanged, len(file.errors)) == (2, 0, 1, 1)
    [error] = file.errors
    assert (error.line, error.field) == (14, "row")
    assert "item key 'gb200-nvl72\\u200b' holds U+200B ZERO WIDTH SPACE" in error.reason
    assert items(ledger) == ["gb200-nvl72", "nvlink-5"]


def test_a_right_to_left_override_in_a_name_is_refused(ledger, ingest, write_pack):
    pack = NVLINK_PACK.replace('name: "GB200 NVL72"', 'name: "GB200 \u202e27LVN"')
    [file] = ingest(write_pack("rlo.yaml", pack)).files
    assert (file.read, file.accepted, len(file.errors)) == (2, 1, 1)
    assert "item name 'GB200 \\u202e27LVN' holds U+202E RIGHT-TO-LEFT OVERRIDE" in (
        file.errors[0].reason)
    assert items(ledger) == ["nvlink-5"]


def test_a_decomposed_key_is_the_composed_item(ledger, ingest, write_pack):
    composed = NVLINK_PACK.replace("gb200-nvl72", "gb200-nvl72-caf\u00e9")
    decomposed = NVLINK_PACK.replace("gb200-nvl72", "gb200-nvl72-cafe\u0301")
    ingest(write_pack("composed.yaml", composed))
    [file] = ingest(write_pack("decomposed.yaml", decomposed)).files
    assert (file.accepted, file.unchanged, file.errors) == (0, 2, [])
    assert items(ledger) == ["gb200-nvl72-caf\u00e9", "nvlink-5"]


def test_a_csv_pack_row_naming_a_hidden_key_is_a_rejected_row():
    csv = ("source,item,metric,value,unit,as_of,status\n"
           "vendor,h100\u2066-sxm5,tdp,700,W,2024-01-01,C\n"
           "vendor,h100-sxm5,tdp,700,W,2024-01-01,C\n")
    pack = parse_pack("tdp.csv", csv.encode())
    first, second = pack.rows
    assert "U+2066 LEFT-TO-RIGHT ISOLATE" in first.fields[MALFORMED]
    assert second.fields["item"] == "h100-sxm5"


def test_an_epoch_chip_named_with_a_hidden_character_makes_no_item():
    csv = ("Hardware name,Manufacturer,Type,Release date,TDP (W),Last modified\n"
           "NVIDIA\u200b Z100,NVIDIA,GPU,2025-01-01,700,2025-12-04 17:58:01+00:00\n"
           "NVIDIA Y100,NVIDIA,GPU,2025-01-01,700,2025-12-04 17:58:01+00:00\n")
    parsed = read_file("ml_hardware.csv", csv.encode(), AdapterOptions(as_of=date(2025, 12, 4)))
    assert [item.name for item in parsed.pack.items] == ["NVIDIA Y100"]
    refused, kept = parsed.pack.rows
    assert refused.line == 2 and "item name 'NVIDIA\\u200b Z100' holds U+200B" in (
        refused.fields[MALFORMED])
    assert (kept.line, kept.fields["item"]) == (3, "nvidia-y100")
