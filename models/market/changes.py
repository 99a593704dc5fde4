"""How the price index moved: each version's median against an earlier version's, per GPU
and term, week over week and over 90 days."""

from __future__ import annotations

import pandas as pd

from models.market.frames import GPU, TERM, VERSION, VERSION_DATE, require_columns
from models.market.index import MEDIAN

# (column prefix, days back): the comparisons index_changes makes.
HORIZONS: tuple[tuple[str, int], ...] = (("wow", 7), ("d90", 90))


def reference_versions(index: pd.DataFrame, days: int) -> pd.DataFrame:
    """Per dataset version of the index: the version it is compared with `days` back, i.e.
    the latest version whose version_date <= this version's date - `days` days (of two
    versions on that date, the higher id). Columns dataset_version, ref_version (Int64, NA
    when no version is old enough), ref_date (NaT then)."""
    versions = (index[[VERSION, VERSION_DATE]].drop_duplicates()
                .sort_values([VERSION_DATE, VERSION]).reset_index(drop=True))
    wanted = versions.assign(_back=versions[VERSION_DATE] - pd.Timedelta(days=days))
    earlier = versions.rename(columns={VERSION: "ref_version", VERSION_DATE: "ref_date"})
    # merge_asof takes the last right row whose key is <= the left one: with the right side
    # sorted by (date, version) that is the latest version, the higher id on a shared date.
    matched = pd.merge_asof(wanted.sort_values("_back"), earlier, left_on="_back",
                            right_on="ref_date", direction="backward")
    matched["ref_version"] = matched["ref_version"].astype("Int64")
    return matched[[VERSION, "ref_version", "ref_date"]].sort_values(VERSION).reset_index(
        drop=True)


def index_changes(index: pd.DataFrame,
                  horizons: tuple[tuple[str, int], ...] = HORIZONS) -> pd.DataFrame:
    """Per row of the price index (dataset version, GPU, term): its median and, for each
    (prefix, days) of `horizons` (default week over week, `wow`, 7 days; and `d90`, 90
    days), the version it is compared with (`<prefix>_version`, `<prefix>_date`; see
    reference_versions), that version's median for the same GPU and term
    (`<prefix>_median`) and the change as a fraction (`<prefix>_change`: -0.12 is 12 %
    cheaper). The change is NaN when no version is old enough or that version has no offer
    of the GPU and term (it is not looked for further back: a "week over week" change is
    against a week ago or not at all). Ordered as the index."""
    require_columns(index, (VERSION, VERSION_DATE, GPU, TERM, MEDIAN), "price index")
    out = index[[VERSION, VERSION_DATE, GPU, TERM, MEDIAN]].reset_index(drop=True)
    medians = index[[VERSION, GPU, TERM, MEDIAN]]
    for prefix, days in horizons:
        refs = reference_versions(index, days).rename(columns={
            "ref_version": f"{prefix}_version", "ref_date": f"{prefix}_date"})
        then = medians.rename(columns={VERSION: f"{prefix}_version",
                                       MEDIAN: f"{prefix}_median"})
        then[f"{prefix}_version"] = then[f"{prefix}_version"].astype("Int64")
        out = out.merge(refs, on=VERSION, how="left").merge(
            then, on=[f"{prefix}_version", GPU, TERM], how="left")
        out[f"{prefix}_change"] = out[MEDIAN] / out[f"{prefix}_median"] - 1
    return out
