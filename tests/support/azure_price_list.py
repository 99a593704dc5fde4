"""A generated Azure Retail Prices list of any size: the GPU SKUs the ledger tracks, in every
term and in synthetic regions, prices jittered around real list prices. The ingest benchmark
(bench/price_list_ingest.py) and the bulk-ingest tests share it."""

from __future__ import annotations

import random

SKUS = {"Standard_ND96isr_H100_v5": ("NDisrH100v5", "ND96isr H100 v5", 98.32),
        "Standard_ND96isr_H200_v5": ("NDisrH200v5", "ND96isr H200 v5", 110.24),
        "Standard_ND96asr_v4": ("NDasrA100v4", "ND96asr v4", 27.20),
        "Standard_ND96amsr_A100_v4": ("NDamsrA100v4", "ND96amsr A100 v4", 32.77),
        "Standard_ND96isr_MI300X_v5": ("NDisrMI300Xv5", "ND96isr MI300X v5", 48.00)}
TERMS = (("Consumption", None, ""), ("Consumption", None, " Spot"),
         ("Reservation", "1 Year", ""), ("Reservation", "3 Years", ""))


def price_list(rows: int, seed: int = 1) -> dict:
    """`rows` Linux GPU offers: SKUs x terms x synthetic regions, prices jittered."""
    rng = random.Random(seed)
    items = []
    regions = [f"region{n:04d}" for n in range(rows // (len(SKUS) * len(TERMS)) + 1)]
    for region in regions:
        for sku, (series, name, hourly) in SKUS.items():
            for kind, term, suffix in TERMS:
                if len(items) == rows:
                    break
                price = hourly * rng.uniform(0.85, 1.25)
                if kind == "Reservation":
                    price *= (8760 if term == "1 Year" else 26280) * (0.6 if "1" in term else 0.4)
                if suffix:
                    price *= 0.3
                item = {"currencyCode": "USD", "retailPrice": round(price, 4),
                        "unitPrice": round(price, 4), "armRegionName": region,
                        "location": region, "effectiveStartDate": "2026-11-01T00:00:00Z",
                        "meterName": name + suffix, "productName": f"Virtual Machines {series} "
                        "Series", "skuName": name + suffix, "serviceName": "Virtual Machines",
                        # Azure writes "1 Hour" on reservations too (their price is the term's)
                        "unitOfMeasure": "1 Hour", "type": kind, "armSkuName": sku}
                if term:
                    item["reservationTerm"] = term
                items.append(item)
    return {"BillingCurrency": "USD", "CustomerEntityType": "Retail", "Items": items,
            "NextPageLink": None, "Count": len(items)}
