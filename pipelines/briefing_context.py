"""Build the briefing's plain context from the ledger (resolved values, sources)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from db import queries
from db.engine import Session
from pipelines.resolved import ResolvedValue, current_values, disagreeing
from reports.briefing import BriefingContext, SourceLine, SpecLine

# Item kinds grouped into the briefing's sections, in the order they are printed.
SECTIONS: dict[str, tuple[str, ...]] = {
    "Scale-up fabric (NVLink, NVSwitch, PCIe, UALink)": ("scaleup_fabric", "scaleup_switch"),
    "Scale-out fabric (InfiniBand, Ethernet)": ("scaleout_fabric", "scaleout_switch",
                                                "switch_silicon"),
    "Standards": ("standard",),
    "GPUs": ("gpu",),
    "Systems, racks and power density": ("system", "rack", "survey", "cluster"),
    "Costs and facilities": ("energy_price", "facility", "cost_benchmark"),
}
OTHER_SECTION = "Other"


def section_of(item_kind: str) -> str:
    for title, kinds in SECTIONS.items():
        if item_kind in kinds:
            return title
    return OTHER_SECTION


def briefing_context(session: Session, *, as_of: date, known: datetime, version: Any,
                     code_version: str) -> BriefingContext:
    """Everything the briefing prints, resolved as of `as_of` as known at `known`."""
    items, metrics = queries.items_by_key(session), queries.metrics_by_key(session)
    order = {title: n for n, title in enumerate([*SECTIONS, OTHER_SECTION])}
    resolved = current_values(session, on=as_of, known=known)
    specs = sorted((_spec_line(r, items, metrics) for r in resolved),
                   key=lambda s: (order[s.section], s.item.lower(), s.metric))
    cited = {s.source_key for s in specs}
    sources = [SourceLine(key=row.key, title=row.title, publisher=row.publisher, kind=row.kind,
                          published_on=row.published_on, url=row.url)
               for row in queries.sources_frame(session).itertuples() if row.key in cited]
    return BriefingContext(
        as_of=as_of, dataset_version=version.id, dataset_hash=version.content_hash,
        cutoff_at=version.cutoff_at, code_version=code_version, specs=specs, sources=sources,
        rejected_rows=len(queries.rejected_rows(session)),
        conflicts=len(disagreeing(resolved)))


def _spec_line(resolved: ResolvedValue, items: dict[str, Any],
               metrics: dict[str, Any]) -> SpecLine:
    winner = resolved.winner
    item, metric = items[winner["item"]], metrics[winner["metric"]]
    return SpecLine(
        section=section_of(item.kind), item=item.name, metric=metric.key,
        metric_description=metric.description, low=winner["low"], high=winner["high"],
        unit=metric.unit, as_of=winner["as_of"], as_of_precision=winner["as_of_precision"],
        status=winner["status"], source_key=winner["source"],
        source_title=winner["source_title"], source_published_on=winner["source_published_on"],
        alternatives=len(resolved.alternatives), reason=resolved.resolution.reason)
