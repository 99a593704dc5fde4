"""Build the briefing's plain context from the ledger: resolved values, trends, stored flags,
the version's results, changes since the previous version, and every source cited.

Everything is read as of the briefing date and as known at the dataset version's cut-off, so
the same version and date give the same context (and the same PDF bytes) whenever it is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from typing import Any

from db import fetches, outputs, queries
from db.engine import Session
from db.results import results_frame, results_of
from db.schema import C2CResult, DatasetVersion, TcoResult
from models.c2c import calibration
from models.resolve import SOURCE_KIND_RANK
from models.trends import (
    TrendParams,
    density_trend,
    interconnect_trend,
    observation_changes,
    undated_claims,
)
from models.trends.types import Flag, by_severity
from pipelines.briefing_comparison import comparison_table, reference_sources
from pipelines.briefing_results import moves_of, scenario_line, tco_line, validation_lines
from pipelines.resolved import ResolvedValue, current_values, disagreeing
from reports.context import BriefingContext, SourceLine, SpecLine, StaleSource

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


@dataclass(frozen=True)
class BriefingInputs:
    """What the briefing needs besides the ledger: parameters and the comparison layout."""

    params: TrendParams
    comparison: dict[str, Any]


def section_of(item_kind: str) -> str:
    for title, kinds in SECTIONS.items():
        if item_kind in kinds:
            return title
    return OTHER_SECTION


def briefing_context(session: Session, *, as_of: date, version: DatasetVersion,
                     code_version: str, inputs: BriefingInputs) -> BriefingContext:
    """Everything the briefing prints for `version`, valid on `as_of`."""
    known = version.cutoff_at
    items, metrics = queries.items_by_key(session), queries.metrics_by_key(session)
    resolved = current_values(session, on=as_of, known=known)
    by_key = {(r.winner["item"], r.winner["metric"]): r for r in resolved}
    history = queries.observations_frame(session)
    density = density_trend(history, on=as_of, cutoff=known)
    interconnect = interconnect_trend(history, on=as_of, cutoff=known,
                                      nics_per_gpu=inputs.params.nics_per_gpu)
    previous = outputs.previous_version(session, version)
    options, comparison = comparison_table(inputs.comparison, by_key,
                                           {k: i.vendor for k, i in items.items()})
    validation, validation_sources = validation_lines()
    specs = _spec_lines(resolved, items, metrics)
    flags = [*undated_claims(_printed_claims(specs, density, interconnect)),
             *_stored_flags(session, version.id)]
    context = BriefingContext(
        as_of=as_of, dataset_version=version.id, dataset_hash=version.content_hash,
        cutoff_at=known, code_version=code_version, specs=specs,
        rejected_rows=len(queries.rejected_rows(session)),
        conflicts=len(disagreeing(resolved, inputs.params.tolerance)),
        previous_version=previous.id if previous else None,
        previous_cutoff_at=previous.cutoff_at if previous else None,
        flags=by_severity(flags), density=density, interconnect=interconnect,
        comparison_options=options, comparison=comparison,
        scenarios=[scenario_line(r, s) for r, s in results_of(session, C2CResult, version.id)],
        tco=[tco_line(r, s) for r, s in results_of(session, TcoResult, version.id)
             if r.mode == "comparison"],
        changes=observation_changes(history, previous_cutoff=previous.cutoff_at
                                    if previous else None, cutoff=known),
        moves=moves_of(results_frame(session, previous.id) if previous else None,
                           results_frame(session, version.id), inputs.params.result_tolerance),
        validation=validation, parameters=_parameters(inputs.params),
        stale_sources=stale_sources(session, stale_known_at(version, as_of)))
    sources = _cited_sources(session, context) + reference_sources(inputs.comparison)
    return _with_sources(context, sources + validation_sources)


def stale_known_at(version: DatasetVersion, as_of: date) -> datetime:
    """When the briefing reads which remote sources are stale: the version's cut-off, or the
    end of the briefing's day (UTC) when that is later. A week whose fetches all failed adds
    nothing, so it reuses last week's version; its failed fetches come after that cut-off and
    must still show. Both bounds are fixed, so a re-render prints the same list unless a later
    fetch was logged on the briefing's own day."""
    return max(version.cutoff_at, datetime.combine(as_of, time.max, tzinfo=UTC))


def stale_sources(session: Session, known: datetime) -> tuple[StaleSource, ...]:
    """Remote sources whose latest fetch logged by `known` failed, with their last good fetch."""
    return tuple(StaleSource(name=s.source_name, url=s.url, failed_at=s.failed_at,
                             error=s.error or "no error recorded", last_good_at=s.last_good_at)
                 for s in fetches.stale_sources(session, known))


def _stored_flags(session: Session, version_id: int) -> list[Flag]:
    return [Flag(**row) for row in outputs.flags_of(session, version_id)]


def _spec_lines(resolved: list[ResolvedValue], items: dict[str, Any],
                metrics: dict[str, Any]) -> list[SpecLine]:
    order = {title: n for n, title in enumerate([*SECTIONS, OTHER_SECTION])}
    return sorted((_spec_line(r, items, metrics) for r in resolved),
                  key=lambda s: (order[s.section], s.item.lower(), s.metric))


def _printed_claims(specs: list[SpecLine], density: Any, interconnect: Any
                    ) -> list[tuple[str, date | None, str]]:
    """(subject, as_of, precision) of every density and performance figure printed."""
    claims = [(f"{s.item} / {s.metric}", s.as_of, s.as_of_precision) for s in specs]
    series = [*density.series, interconnect.scale_up, interconnect.scale_out,
              *interconnect.switch_capacity]
    claims += [(f"{p.item} / {p.metric}", p.as_of, p.as_of_precision)
               for s in series for p in s.points]
    return claims


def _parameters(params: TrendParams) -> dict[str, str]:
    return {
        "Resolution rule": "each source's newest figure; then source kind rank ("
                           + ", ".join(SOURCE_KIND_RANK) + "), newest as_of, newest "
                           "publication, latest recorded",
        "C2C classes": f"< {calibration.COMPUTE_BOUND_BELOW:g} compute-bound, "
                       f"{calibration.COMPUTE_BOUND_BELOW:g}-"
                       f"{calibration.COMMUNICATION_BOUND_ABOVE:g} performance-sensitive, > "
                       f"{calibration.COMMUNICATION_BOUND_ABOVE:g} communication-bound",
        "Default link efficiency": f"NVLink {calibration.SCALEUP_EFFICIENCY:g}, NIC "
                                   f"{calibration.SCALEOUT_EFFICIENCY:g} of line rate "
                                   "(nccl-tests #212, #290) when no measurement is in the ledger",
        "Stale after": f"{params.stale_after_days} days without a newer observation",
        "Conflict tolerance": f"{params.tolerance:.0%} relative (ranges that overlap agree)",
        "Result move tolerance": f"{params.result_tolerance:.0%} relative change of s*",
        "NICs per GPU": f"{params.nics_per_gpu:g} (per-GPU scale-out = NIC rate x this)",
    }


def _cited_sources(session: Session, context: BriefingContext) -> list[SourceLine]:
    """Every ledger source a printed number cites, for the appendix."""
    cited = {s.source_key for s in context.specs}
    for series in _all_series(context):
        cited.update(p.source for p in series.points)
    if context.density:
        cited.update(t.source for t in context.density.thresholds)
    for row in context.comparison:
        cited.update(c.source for c in row.cells if c is not None and c.source)
    for line in [*context.scenarios, *context.tco]:
        cited.update(c.source for c in line.inputs if c.source)
    return [SourceLine(key=row.key, title=row.title, publisher=row.publisher, kind=row.kind,
                       published_on=row.published_on, url=row.url)
            for row in queries.sources_frame(session).itertuples() if row.key in cited]


def _all_series(context: BriefingContext) -> list[Any]:
    series = list(context.density.series) if context.density else []
    if context.interconnect:
        ic = context.interconnect
        series += [ic.scale_up, ic.scale_out, *ic.switch_capacity]
    return series


def _with_sources(context: BriefingContext, sources: list[SourceLine]) -> BriefingContext:
    unique = {s.key: s for s in sources}
    return replace(context, sources=sorted(unique.values(), key=lambda s: s.key))


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
