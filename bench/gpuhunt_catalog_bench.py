"""gpuhunt catalog benchmark: every provider's catalog read and ingested, in gpuhunt's
published layout (catalog.zip holding <provider>.csv, written by gpuhunt's own writer).

No gpuhunt catalog file is in the shared data, so the catalogs are built from the real
SkyPilot-format catalogs there (anycloud, 2026-04-28: Azure 55,677 lines, GCP 31,003,
Lambda 290, Vast 65), every line one gpuhunt item, GPU or not, as gpuhunt lists every
instance. Target (issue 40): all providers' catalogs in <= 10 s. Reports only.

    python -m bench.gpuhunt_catalog_bench [--shared DATA]   # the shared data folder
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import tempfile
import time
import zipfile
from datetime import UTC, date, datetime
from pathlib import Path

from gpuhunt import CatalogItem
from gpuhunt._internal.models import AcceleratorVendor
from gpuhunt._internal.storage import dump

from db.engine import make_engine, upgrade
from pipelines.inputs.adapters import gpuhunt_catalog
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs.ingest import ingest_paths

ROOT = Path(__file__).resolve().parent.parent
FILES = {"azure": "azure-vms-2026-04-28.csv.gz", "gcp": "gcp-vms-2026-04-28.csv.gz",
         "lambdalabs": "lambda-vms-2026-04-28.csv", "vastai": "vast-vms-2026-04-29.csv"}


def items_of(path: Path, provider: str) -> list[CatalogItem]:
    data = path.read_bytes()
    text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode()
    items = []
    for row in csv.DictReader(io.StringIO(text)):
        name = (row.get("InstanceType") or "").strip()
        if not name:
            continue   # GCP's accelerator-only lines are no instance of their own
        count = int(float(row.get("AcceleratorCount") or 0))
        memory = None
        if "SizeInMiB" in (row.get("GpuInfo") or ""):
            memory = int(row["GpuInfo"].split("'SizeInMiB': ")[1].split("}")[0]) / 1024
        for spot, price in ((False, row.get("Price")), (True, row.get("SpotPrice"))):
            try:
                value = float(price or "")
            except ValueError:
                continue
            items.append(CatalogItem(
                provider=provider, instance_name=name, location=row.get("Region") or "",
                price=value, cpu=int(float(row.get("vCPUs") or 0)),
                memory=float(row.get("MemoryGiB") or 0), gpu_count=count,
                gpu_name=(row.get("AcceleratorName") or None) if count else None,
                gpu_memory=memory, spot=spot, disk_size=None,
                gpu_vendor=AcceleratorVendor.NVIDIA if count else None, flags=[]))
    return items


def catalog_zip(items: list[CatalogItem], provider: str, folder: Path) -> Path:
    csv_path = folder / f"{provider}.csv"
    dump(items, str(csv_path))
    out = folder / f"gpuhunt-{provider}-2026-04-28.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(csv_path, csv_path.name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    folder = args.shared / "market" / "skypilot-anycloud"
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        zips, counts = [], {}
        for provider, name in FILES.items():
            items = items_of(folder / name, provider)
            counts[provider] = len(items)
            zips.append(catalog_zip(items, provider, tmp_path))
        rows = sum(counts.values())
        started, cpu = time.perf_counter(), time.process_time()
        for path, count in zip(zips, counts.values(), strict=True):
            parsed = gpuhunt_catalog.parse(path.name, path.read_bytes(), AdapterOptions())
            print(f"{path.name}: {count:,} items: {len(parsed.pack.rows):,} offers, "
                  f"{len(parsed.rejected):,} rejected, {parsed.skipped_lines:,} skipped")
        parse_s = time.perf_counter() - started
        url = f"sqlite:///{tmp}/ledger.sqlite"
        upgrade(url)
        engine = make_engine(url)
        started = time.perf_counter()
        report = ingest_paths(engine, zips, metrics=load_metrics(ROOT / "data" / "catalog.yaml"),
                              today=date(2026, 11, 30), now=lambda: datetime.now(UTC),
                              code_version="bench")
        ingest_s, cpu = time.perf_counter() - started, time.process_time() - cpu
        engine.dispose()
    print(f"{len(zips)} catalogs, {rows:,} items: read {parse_s:.2f} s; ingested "
          f"({report.total('accepted'):,} accepted) in {ingest_s:.2f} s wall, CPU of both "
          f"{cpu:.2f} s; target <= 10 s: {'met' if ingest_s <= 10 else 'MISSED'}")


if __name__ == "__main__":
    main()
