"""AWS Price List EC2 offer file benchmark: a synthetic region file of real shape, streamed.

A real region's file (`.../AmazonEC2/current/us-east-1/index.json`) holds a few hundred
thousand products, nearly all of them not GPU instances, and their on-demand and reserved
terms, indented as AWS writes it. This builds one of `--products` products: instance types
cycled through every variant AWS lists (operating system x tenancy x pre-installed software x
capacity status), the GPU instance types of data/instances.yaml and a few untracked and unknown
ones among them, an on-demand term for every product and six reserved terms for each Linux
Shared one. It then parses it in a fresh process (so that the peak resident memory is the
parse's, not the generator's) and reports throughput and memory. Reports only: exit code 0.

    python bench/aws_offer_parse.py [--products 100000] [--repeat 3] [--keep FILE]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from pipelines.inputs.adapters import aws_offer
from pipelines.inputs.adapters.base import AdapterOptions

COMMA = ",\n"

GPU_TYPES = ("p4d.24xlarge", "p4de.24xlarge", "p5.4xlarge", "p5.48xlarge", "p5e.48xlarge",
             "p5en.48xlarge", "p6-b200.48xlarge", "p3.2xlarge", "p3.8xlarge", "p3.16xlarge",
             "g5.xlarge", "g5.48xlarge", "g6e.12xlarge", "p9.48xlarge")  # untracked, unknown
FAMILIES = ("m5", "m6i", "m7i", "c5", "c6i", "c7g", "r5", "r6i", "r7a", "t3", "i4i", "x2idn",
            "z1d", "m6a", "c6a", "r6g", "m7g", "c7i", "hpc7a", "u-6tb1")
SIZES = ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge",
         "24xlarge", "32xlarge", "48xlarge", "metal")
VARIANTS = [(os, tenancy, sw, cap)
            for os in ("Linux", "Windows", "RHEL", "SUSE", "Red Hat Enterprise Linux with HA",
                       "Ubuntu Pro")
            for tenancy in ("Shared", "Dedicated", "Host")
            for sw in ("NA", "SQL Web", "SQL Std", "SQL Ent")
            for cap in ("Used", "UnusedCapacityReservation", "AllocatedCapacityReservation")
            if not (cap != "Used" and tenancy == "Host")]
RESERVED = (("4NA7Y494T4", "1yr", "standard", "No Upfront"),
            ("HU7G6KETJZ", "1yr", "standard", "Partial Upfront"),
            ("6QCMYABX3D", "1yr", "standard", "All Upfront"),
            ("BPH4J8HBKS", "3yr", "standard", "No Upfront"),
            ("38NPMPTW36", "3yr", "standard", "Partial Upfront"),
            ("7NE97W5U4E", "1yr", "convertible", "No Upfront"))


def instance_types() -> Iterator[str]:
    yield from GPU_TYPES
    while True:
        for family in FAMILIES:
            for size in SIZES:
                yield f"{family}.{size}"


def products(count: int) -> Iterator[tuple[str, dict, bool]]:
    """(sku, product, gets reserved terms) for `count` products."""
    types = instance_types()
    n = 0
    while n < count:
        instance = next(types)
        gpu = "8" if instance in GPU_TYPES else None
        for os, tenancy, sw, cap in VARIANTS:
            if n >= count:
                return
            sku = f"SKU{n:013d}"
            attributes = {
                "servicecode": "AmazonEC2", "location": "US East (N. Virginia)",
                "locationType": "AWS Region", "instanceType": instance,
                "currentGeneration": "Yes", "instanceFamily": "GPU instance" if gpu else
                "General purpose", "vcpu": "96", "physicalProcessor": "Intel Xeon Platinum 8488C",
                "clockSpeed": "3.2 GHz", "memory": "384 GiB", "storage": "EBS only",
                "networkPerformance": "50 Gigabit", "processorArchitecture": "64-bit",
                "tenancy": tenancy, "operatingSystem": os, "licenseModel": "No License required",
                "usagetype": f"BoxUsage:{instance}", "operation": "RunInstances:0002",
                "availabilityzone": "NA", "capacitystatus": cap,
                "classicnetworkingsupport": "false", "dedicatedEbsThroughput": "Up to 10000 Mbps",
                "ecu": "NA", "enhancedNetworkingSupported": "Yes",
                "intelAvx2Available": "Yes", "marketoption": "OnDemand",
                "normalizationSizeFactor": "192", "preInstalledSw": sw,
                "processorFeatures": "Intel AVX; Intel AVX2; Intel Turbo",
                "regionCode": "us-east-1", "servicename": "Amazon Elastic Compute Cloud",
                "vpcnetworkingsupport": "true"}
            if gpu:
                attributes["gpu"] = gpu
            yield sku, {"sku": sku, "productFamily": "Compute Instance",
                        "attributes": attributes}, (os, tenancy, cap) == ("Linux", "Shared",
                                                                          "Used")
            n += 1


def _dimension(sku: str, code: str, unit: str, usd: str) -> dict:
    rate = f"{sku}.{code}.6YS6EN2CT7"
    return {rate: {"rateCode": rate, "description": "$1.00 per Hour", "beginRange": "0",
                   "endRange": "Inf", "unit": unit, "pricePerUnit": {"USD": usd},
                   "appliesTo": []}}


def _term(sku: str, code: str, dimensions: dict, attributes: dict) -> dict:
    return {f"{sku}.{code}": {"offerTermCode": code, "sku": sku,
                              "effectiveDate": "2025-06-01T00:00:00Z",
                              "priceDimensions": dimensions, "termAttributes": attributes}}


def write_offer(path: Path, count: int) -> None:
    """The offer file, written a product at a time (never held whole)."""
    indent = {"indent": 2, "separators": (",", " : ")}
    reserved_skus: list[str] = []
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n  "formatVersion" : "v1.0",\n  "disclaimer" : "This pricing list is for '
                  'informational purposes only.",\n  "offerCode" : "AmazonEC2",\n  "version" : '
                  '"20250612184720",\n  "publicationDate" : "2025-06-12T18:47:20Z",\n'
                  '  "products" : {\n')
        skus = []
        for index, (sku, product, reserved) in enumerate(products(count)):
            text = json.dumps(product, **indent).replace("\n", "\n    ")
            out.write(f'{COMMA if index else ""}    "{sku}" : {text}')
            skus.append(sku)
            if reserved:
                reserved_skus.append(sku)
        out.write('\n  },\n  "terms" : {\n    "OnDemand" : {\n')
        for index, sku in enumerate(skus):
            term = _term(sku, "JRTCKXETXF", _dimension(sku, "JRTCKXETXF", "Hrs", "12.3400000000"),
                         {})
            text = json.dumps(term, **indent).replace("\n", "\n      ")
            out.write(f'{COMMA if index else ""}      "{sku}" : {text}')
        out.write('\n    },\n    "Reserved" : {\n')
        for index, sku in enumerate(reserved_skus):
            terms = {}
            for code, length, klass, option in RESERVED:
                terms |= _term(sku, code, _dimension(sku, code, "Hrs", "7.8900000000"),
                               {"LeaseContractLength": length, "OfferingClass": klass,
                                "PurchaseOption": option})
            text = json.dumps(terms, **indent).replace("\n", "\n      ")
            out.write(f'{COMMA if index else ""}      "{sku}" : {text}')
        out.write("\n    }\n  }\n}\n")


def parse_only(path: Path, repeat: int, products_count: int) -> None:
    """Run in a fresh process: time the parse, then its Python allocations' peak."""
    data = path.read_bytes()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    times = []
    parsed = None
    for _ in range(repeat):
        start = time.perf_counter()
        parsed = aws_offer.parse(path.name, data, AdapterOptions())
        times.append(time.perf_counter() - start)
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    aws_offer.parse(path.name, data, AdapterOptions())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seconds = statistics.median(times)
    mib = len(data) / (1 << 20)
    assert parsed is not None
    print(f"file: {products_count:,} products, {mib:.1f} MiB")  # noqa: T201
    print(f"parse (median of {repeat}): {seconds:.2f} s = {mib / seconds:.1f} MiB/s, "  # noqa: T201
          f"{products_count / seconds:,.0f} products/s")
    print(f"rows {len(parsed.pack.rows)}, rejected {len(parsed.rejected)}, "  # noqa: T201
          f"skipped {parsed.skipped_lines:,}")
    print(f"peak Python allocations during a parse (tracemalloc): "  # noqa: T201
          f"{peak / (1 << 20):.1f} MiB")
    print(f"max resident set: {rss_before / 1024:.0f} MiB after reading the file, "  # noqa: T201
          f"{rss_after / 1024:.0f} MiB after parsing it (file bytes included)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--products", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="write the offer file here and keep it")
    parser.add_argument("--parse-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.parse_only:
        parse_only(args.parse_only, args.repeat, args.products)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.keep or Path(tmp) / "index.json"
        start = time.perf_counter()
        write_offer(path, args.products)
        print(f"generated in {time.perf_counter() - start:.1f} s")  # noqa: T201
        subprocess.run([sys.executable, __file__, "--parse-only", str(path), "--repeat",
                        str(args.repeat), "--products", str(args.products)], check=False)


if __name__ == "__main__":
    main()
