"""Term spreads: how much cheaper spot and reserved GPU-hours are than on-demand ones, per
dataset version and GPU, from the price index's medians."""

from __future__ import annotations

import pandas as pd

from models.market.frames import GPU, TERM, VERSION, VERSION_DATE, require_columns
from models.market.index import MEDIAN

BASE_TERM = "on_demand"
# The terms compared with on-demand; each gives a `<term>_discount` column.
SPREAD_TERMS: tuple[str, ...] = ("spot", "reserved_1y", "reserved_3y")


def term_spreads(index: pd.DataFrame,
                 terms: tuple[str, ...] = SPREAD_TERMS) -> pd.DataFrame:
    """One row per (dataset version, GPU) of the price index, ordered by both: the median
    USD/GPU-hour of on-demand and of each of `terms` (a column per term, NaN where the
    version has no offer of it), and `<term>_discount` = 1 - median(term) / median(on-demand),
    the fraction a buyer saves against on-demand (0.6: 60 % cheaper; negative: dearer).
    A discount is NaN (pandas' None) when either side has no offer at that version."""
    require_columns(index, (VERSION, VERSION_DATE, GPU, TERM, MEDIAN), "price index")
    wide = (index.set_index([VERSION, VERSION_DATE, GPU, TERM])[MEDIAN]
            .unstack(TERM)
            .reindex(columns=[BASE_TERM, *terms]))
    wide.columns.name = None
    for term in terms:
        wide[f"{term}_discount"] = 1 - wide[term] / wide[BASE_TERM]
    return wide.reset_index().sort_values([VERSION, GPU]).reset_index(drop=True)
