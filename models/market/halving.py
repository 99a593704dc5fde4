"""How fast GPU-hours get cheaper: the halving time of the index's median on-demand price per
GPU generation, from a log-linear fit over the dataset versions.

A generation may hold several GPUs (Hopper: H100 SXM5, H100 PCIe, H200) whose prices differ
in level and are not all listed at every version. Pooling their medians in one fit would
read a dearer GPU's arrival as a price rise, so the fit gives each GPU its own level and one
common slope (a within-GPU least-squares fit: log2 price and date are centred per GPU before
the slope is taken). With one GPU it is the ordinary log-linear fit of models/trends/fit.py,
which is not called directly because it has one level for all points and asks for a year of
data (spec-sheet dates are often only year-precise; weekly prices are not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd

from models.market.frames import GPU, TERM, VERSION_DATE, require_columns
from models.market.index import MEDIAN

MIN_POINTS = 3
# Weekly prices two weeks apart say nothing about a rate per year.
MIN_SPAN_DAYS = 90


@dataclass(frozen=True)
class HalvingTime:
    """The price trend of one GPU generation's `term` medians (USD per GPU-hour).

    `halving_days` is set when prices fall, `doubling_days` when they rise; both are None
    when there is no fit (`reason` says why) or the slope is exactly zero. A rising price is
    reported as a doubling time, never as a negative halving time."""

    generation: str
    term: str
    gpus: tuple[str, ...]          # the generation's GPUs that have points in the fit
    n_points: int                  # (version, GPU) medians in the fit
    first: date | None
    last: date | None
    slope_log2_per_year: float | None   # -1.0: prices halve every year
    r2: float | None               # of the within-GPU fit
    halving_days: float | None
    doubling_days: float | None
    reason: str | None = None      # why there is no halving time

    @property
    def change_per_year(self) -> float | None:
        """Multiplicative change a year minus one: -0.5 means half the price a year later."""
        if self.slope_log2_per_year is None:
            return None
        return float(2 ** self.slope_log2_per_year - 1)


def halving_times(index: pd.DataFrame, generations: Mapping[str, str], *,
                  term: str = "on_demand", min_points: int = MIN_POINTS,
                  min_span_days: int = MIN_SPAN_DAYS) -> list[HalvingTime]:
    """One HalvingTime per generation named in `generations` (GPU key -> generation, e.g.
    {"h100-sxm5": "hopper", "b200": "blackwell"}), ordered by generation: the fit of
    log2(median `term` price) against the version date over every version of the index.
    GPUs of the index missing from `generations` are left out.

    No fit (halving and doubling None, a reason) with fewer than `min_points` points, dates
    spanning less than `min_span_days`, or no GPU with two dates (a GPU seen at one version
    only says nothing about the slope and is not counted). A rising price gives
    `doubling_days` and the reason "price rising, not falling".
    """
    require_columns(index, (VERSION_DATE, GPU, TERM, MEDIAN), "price index")
    rows = index[(index[TERM] == term) & index[GPU].isin(list(generations))]
    rows = rows[np.isfinite(rows[MEDIAN]) & (rows[MEDIAN] > 0)]
    by_generation = rows.assign(_generation=rows[GPU].map(dict(generations)))
    results = []
    for generation in sorted(set(generations.values())):
        points = by_generation[by_generation["_generation"] == generation]
        results.append(_fit(generation, term, points, min_points, min_span_days))
    return results


def _fit(generation: str, term: str, points: pd.DataFrame, min_points: int,
         min_span_days: int) -> HalvingTime:
    counted = points[points.groupby(GPU)[VERSION_DATE].transform("nunique") >= 2]
    gpus = tuple(sorted(counted[GPU].unique()))

    def none(reason: str, first: date | None = None, last: date | None = None) -> HalvingTime:
        return HalvingTime(generation, term, gpus, len(counted), first, last, None, None,
                           None, None, reason)

    if len(counted) < min_points:
        return none(f"{len(counted)} {term} price point(s) of GPUs seen at two or more "
                    f"dates; a fit needs {min_points}")
    first = counted[VERSION_DATE].min().date()
    last = counted[VERSION_DATE].max().date()
    if (last - first).days < min_span_days:
        return none(f"prices span {(last - first).days} days ({first} to {last}); a fit "
                    f"needs {min_span_days}", first, last)
    years = (counted[VERSION_DATE] - pd.Timestamp("2000-01-01")).dt.days / 365.25
    log2 = np.log2(counted[MEDIAN])
    x = years - years.groupby(counted[GPU]).transform("mean")
    y = log2 - log2.groupby(counted[GPU]).transform("mean")
    slope = float((x * y).sum() / (x * x).sum())
    residual = float(((y - slope * x) ** 2).sum())
    total = float((y * y).sum())
    r2 = 1.0 - residual / total if total > 0 else 1.0
    halving = 365.25 / -slope if slope < 0 else None
    doubling = 365.25 / slope if slope > 0 else None
    reason = None if slope < 0 else ("price rising, not falling" if slope > 0
                                     else "price flat")
    return HalvingTime(generation, term, gpus, len(counted), first, last, slope, r2,
                       halving, doubling, reason)
