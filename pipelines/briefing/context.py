"""Build the briefing's plain context from the ledger: resolved values, trends, stored flags,
the version's results, changes since the previous version, and every source cited.

Everything is read as of the briefing date and as known at the dataset version's cut-off, so
the same version and date give the same context (and the same PDF bytes) whenever it is built.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time
from typing import Any

from db import changes as db_changes
from db import fetches, outputs, queries
from db.engine import Session
from db.results import results_frame, stored_results
from db.schema import C2CResult, DatasetVersion, ServingResult, TcoResult
from models.c2c import calibration
from models.market.stale import stale_summary
from models.records import C2CRecord, ServingRecord, TcoRecord
from models.resolve import SOURCE_KIND_RANK
from models.serving.validation import serving_fidelity
from models.trends import (
    TREND_METRICS,
    TrendParams,
    density_trend,
    interconnect_trend,
    undated_claims,
)
from models.trends.types import (
    SEVERITIES,
    Changes,
    DensityTrend,
    Flag,
    InterconnectTrend,
    ObservationChange,
    Series,
    by_severity,
)
from pipelines.briefing.comparison import comparison_pairs, comparison_table, reference_sources
from pipelines.briefing.decisions import (
    decision_lines,
    headlines,
    market_history,
    market_lines,
)
from pipelines.briefing.fabric import with_fabric
from pipelines.briefing.results import (
    ledger_pairs,
    moves_of,
    scenario_line,
    tco_line,
    validation_lines,
)
from pipelines.briefing.serving import serving_line
from pipelines.inputs.measurements import shipped_serving_points
from pipelines.ledger.market import market_index
from pipelines.ledger.market_tiers import known_offers, market_max_age_days
from pipelines.ledger.resolved import ResolvedValue, current_values, disagreeing
from reports.context import (
    BriefingContext,
    ChangeCount,
    SourceLine,
    SpecLine,
    StaleMarketLine,
    StaleSource,
)
from reports.views import compact_flags

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
# Which values Appendix A keeps first when a section is over its bound (after those printed
# elsewhere): checked, then secondary, then unconfirmed.
STATUS_ORDER = {"C": 0, "S": 1, "U": 2}


@dataclass(frozen=True)
class BriefingBounds:
    """The most rows each list of the briefing prints, whatever the ledger holds: the rest is
    counted, and the briefing names the warehouse query that lists it. With the defaults a
    200,000-row change still gives a briefing of a few dozen pages."""

    changes: int = 100                 # the changes table
    values_per_section: int = 100      # Appendix A, per section
    flag_messages_per_kind: int = 30   # Appendix B, per kind printed flag by flag
    flag_subjects_per_kind: int = 250  # Appendix B, per kind printed as a list of subjects
    stale_sources: int = 50            # remote sources whose latest fetch failed


@dataclass(frozen=True)
class BriefingInputs:
    """What the briefing needs besides the ledger: parameters, the comparison layout and the
    bounds on its lists."""

    params: TrendParams
    comparison: dict[str, Any]
    bounds: BriefingBounds = BriefingBounds()


def section_of(item_kind: str) -> str:
    for title, kinds in SECTIONS.items():
        if item_kind in kinds:
            return title
    return OTHER_SECTION


def briefing_context(session: Session, *, as_of: date, version: DatasetVersion,
                     code_version: str, inputs: BriefingInputs) -> BriefingContext:
    """Everything the briefing prints for `version`, valid on `as_of`. Lists that grow with
    the ledger hold their most important rows (inputs.bounds) and count the rest."""
    known, bounds = version.cutoff_at, inputs.bounds
    items, metrics = queries.items_by_key(session), queries.metrics_by_key(session)
    resolved = current_values(session, on=as_of, known=known)
    by_key = {(r.winner["item"], r.winner["metric"]): r for r in resolved}
    history = queries.trend_frame(session, TREND_METRICS)
    density = density_trend(history, on=as_of, cutoff=known)
    interconnect = interconnect_trend(history, on=as_of, cutoff=known,
                                      nics_per_gpu=inputs.params.nics_per_gpu)
    previous, previous_briefing = outputs.compared_version(session, version)
    options, comparison = comparison_table(inputs.comparison, by_key,
                                           {k: i.vendor for k, i in items.items()})
    validation, validation_sources = validation_lines()
    c2c_records = [C2CRecord.from_json(stored.result, stored.definition)
                   for stored in stored_results(session, C2CResult, version.id).values()]
    tco_records = [TcoRecord.from_json(stored.result, stored.definition)
                   for stored in stored_results(session, TcoResult, version.id).values()
                   if stored.result.get("mode") == "comparison"]
    decisive = comparison_pairs(inputs.comparison).union(
        *(ledger_pairs(r.specs) for r in c2c_records),
        *(ledger_pairs(r.inputs) for r in tco_records))
    printed = decisive | {(p.item, p.metric) for s in _trend_series(density, interconnect)
                          for p in s.points}
    specs, section_counts = _bounded_specs(resolved, items, metrics, printed,
                                           bounds.values_per_section)
    flags, flag_counts = _bounded_flags(session, version.id, bounds, undated_claims(
        _printed_claims(specs, density, interconnect)))
    stale = stale_sources(session, stale_known_at(version, as_of))
    changes, change_counts = _bounded_changes(session, version, previous, flags, decisive,
                                              bounds.changes)
    scenarios = [with_fabric(scenario_line(r), r, items, by_key) for r in c2c_records]
    moves = moves_of(results_frame(session, previous.id) if previous else None,
                     results_frame(session, version.id), inputs.params.result_tolerance)
    index = market_index(session, up_to=version.id)
    market = market_lines(index, version.id)
    max_age = market_max_age_days()
    stale_market = [StaleMarketLine(r.gpu, r.term, r.offers, r.providers, r.median, r.newest,
                                    r.age_days)
                     for r in stale_summary(known_offers(session, version.id),
                                            max_age).itertuples()]
    context = BriefingContext(
        as_of=as_of, dataset_version=version.id, dataset_hash=version.content_hash,
        cutoff_at=known, code_version=code_version, specs=specs,
        rejected_rows=queries.rejected_row_count(session),
        conflicts=len(disagreeing(resolved, inputs.params.tolerance)),
        previous_version=previous.id if previous else None,
        previous_cutoff_at=previous.cutoff_at if previous else None,
        previous_briefing_on=previous_briefing.as_of if previous_briefing else None,
        flags=flags, density=density, interconnect=interconnect,
        comparison_options=options, comparison=comparison,
        scenarios=scenarios,
        tco=[tco_line(r) for r in tco_records],
        decisions=decision_lines(tco_records, scenarios, as_of=as_of, max_age_days=max_age),
        market=market, market_history=market_history(index),
        market_stale=stale_market, market_max_age_days=max_age,
        market_stale_newest=max((s.newest for s in stale_market), default=None),
        serving=[serving_line(ServingRecord.from_json(stored.result)) for stored in
                 stored_results(session, ServingResult, version.id).values()],
        serving_fidelity=list(serving_fidelity(shipped_serving_points().points)),
        headlines=headlines(moves, market, changes.observations,
                            price_tolerance=inputs.params.result_tolerance),
        changes=changes, moves=moves,
        validation=validation, parameters=_parameters(inputs.params),
        stale_sources=stale[:bounds.stale_sources], stale_source_count=len(stale),
        change_counts=change_counts, flag_counts=flag_counts, section_counts=section_counts)
    extra = reference_sources(inputs.comparison) + validation_sources
    sources = _cited_sources(session, context) + extra
    every_source = ({r.winner["source"] for r in resolved} | {s.key for s in sources})
    return replace(_with_sources(context, sources), source_count=len(every_source))


def _bounded_specs(resolved: list[ResolvedValue], items: dict[str, Any],
                   metrics: dict[str, Any], printed: set[tuple[str, str]],
                   per_section: int) -> tuple[list[SpecLine], dict[str, int]]:
    """At most `per_section` values of each section: those the briefing prints elsewhere
    first, then checked before secondary before unconfirmed, the most corroborated first;
    and the count of every value per section."""
    by_section: dict[str, list[ResolvedValue]] = {}
    for value in resolved:
        by_section.setdefault(section_of(items[value.winner["item"]].kind), []).append(value)

    def rank(value: ResolvedValue) -> tuple[Any, ...]:
        winner = value.winner
        return ((winner["item"], winner["metric"]) not in printed,
                STATUS_ORDER.get(winner["status"], len(STATUS_ORDER)),
                -len(value.alternatives), winner["item"], winner["metric"])

    kept = [v for group in by_section.values() for v in sorted(group, key=rank)[:per_section]]
    counts = {section: len(group) for section, group in by_section.items()}
    return _spec_lines(kept, items, metrics), counts


def _bounded_flags(session: Session, version_id: int, bounds: BriefingBounds,
                   computed: list[Flag]) -> tuple[list[Flag], dict[str, int]]:
    """The version's stored flags, at most a bound of each kind (most severe first), with
    `computed` (flags about what is printed); and the count of every flag per kind."""
    counts = outputs.flag_counts(session, version_id)
    per_kind = max(bounds.flag_messages_per_kind, bounds.flag_subjects_per_kind)
    rows = outputs.first_flags_per_kind(session, version_id, per_kind, SEVERITIES)
    taken: Counter[str] = Counter()
    kept: list[Flag] = list(computed)
    for row in rows:
        kind = row["kind"]
        limit = (bounds.flag_subjects_per_kind if compact_flags(counts.get(kind, {}))
                 else bounds.flag_messages_per_kind)
        if taken[kind] < limit:
            kept.append(Flag(**row))
            taken[kind] += 1
    totals = Counter({kind: sum(by.values()) for kind, by in counts.items()})
    totals.update(flag.kind for flag in computed)
    return by_severity(kept), dict(totals)


def _bounded_changes(session: Session, version: DatasetVersion,
                     previous: DatasetVersion | None, flags: list[Flag],
                     decisive: set[tuple[str, str]], limit: int
                     ) -> tuple[Changes, dict[str, ChangeCount]]:
    """The `limit` observation changes since `previous` that matter most, the change flags
    among `flags`, and every change counted per kind (by the database)."""
    if previous is None:
        return Changes(), {}
    window = {"previous": previous.cutoff_at, "cutoff": version.cutoff_at}
    counts = {kind: ChangeCount(*n)
              for kind, n in db_changes.change_counts(session, **window).items()}
    rows = db_changes.top_changes(session, **window, version_id=version.id,
                                  decisive=decisive, limit=limit)
    observations = tuple(ObservationChange(
        kind=row["kind"], item=row["item"], metric=row["metric"], source=row["source"],
        unit=row["unit"], before=row["before_value"], after=row["after_value"],
        as_of=row["as_of"], observation_ids=tuple(int(i) for i in (row["before_id"],
                                                                   row["observation_id"])
                                                  if i is not None)) for row in rows)
    change_flags = tuple(f for f in flags if f.kind in db_changes.CHANGE_KINDS)
    return Changes(observations, change_flags), counts


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


def _spec_lines(resolved: list[ResolvedValue], items: dict[str, Any],
                metrics: dict[str, Any]) -> list[SpecLine]:
    order = {title: n for n, title in enumerate([*SECTIONS, OTHER_SECTION])}
    return sorted((_spec_line(r, items, metrics) for r in resolved),
                  key=lambda s: (order[s.section], s.item.lower(), s.metric))


def _trend_series(density: DensityTrend, interconnect: InterconnectTrend) -> list[Series]:
    return [*density.series, interconnect.scale_up, interconnect.scale_out,
            *interconnect.switch_capacity]


def _printed_claims(specs: list[SpecLine], density: DensityTrend,
                    interconnect: InterconnectTrend) -> list[tuple[str, date | None, str]]:
    """(subject, as_of, precision) of every density and performance figure printed."""
    claims = [(f"{s.item} / {s.metric}", s.as_of, s.as_of_precision) for s in specs]
    claims += [(f"{p.item} / {p.metric}", p.as_of, p.as_of_precision)
               for s in _trend_series(density, interconnect) for p in s.points]
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
        "Stale after": (f"prices and costs "
                        f"{params.price_stale_after_days or params.stale_after_days} days "
                        "(the market's age limit), availability and lead times "
                        f"{params.stale_after_days} days, without a newer dated observation; "
                        "datasheet constants never"),
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
    for line in [*context.scenarios, *context.tco,
                 *(o for s in context.serving for o in s.options)]:
        cited.update(c.source for c in line.inputs if c.source)
    return [SourceLine(key=row["key"], title=row["title"], publisher=row["publisher"],
                       kind=row["kind"], published_on=row["published_on"], url=row["url"])
            for row in queries.sources_by_keys(session, {c for c in cited if c})]


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
