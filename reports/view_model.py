"""The one view the briefing's templates read: everything they print that is derived from the
context, computed once in Python (`build_view`).

The templates call no function of ours: they lay out these fields, and format figures with
the filters of reports.formatting. Plain fields of the context they read as `view.ctx`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from markupsafe import Markup

from models.trends.types import Flag, Series, TrendPoint
from reports import charts as trend_charts
from reports import decision_charts, market_charts, views
from reports.context import (
    BriefingContext,
    Cited,
    DecisionLine,
    MarketLine,
    MarketSeries,
    OptionLine,
    ScenarioLine,
    ServingOptionLine,
    SpecLine,
    StaleSource,
    TcoLine,
)
from reports.decisions import ServingView, Workload, input_label, page_one

NumberedPoint = tuple[int, Series, TrendPoint]


@dataclass(frozen=True)
class Charts:
    """Each chart's inline SVG; None (or no entry): nothing to draw."""

    density: Markup | None = None
    interconnect: Markup | None = None
    switch: Markup | None = None
    c2c: Markup | None = None
    tco: Markup | None = None
    market: Markup | None = None
    tornado: Mapping[str, Markup] = field(default_factory=dict)   # decision name -> chart
    serving: Mapping[str, Markup] = field(default_factory=dict)   # serving scenario -> chart


@dataclass(frozen=True)
class ScenarioRow:
    """A C2C result with the scale-up tier's share of its C2C (None: no communication)."""

    line: ScenarioLine
    share: float | None


@dataclass(frozen=True)
class Tornado:
    """A decision's "what moves the margin" chart."""

    line: DecisionLine
    chart: Markup


@dataclass(frozen=True)
class MarketRow:
    """One GPU and term's price index now, with its offers' price dates and its changes over
    matched offers (the series' own), and how many versions it has been in."""

    series: MarketSeries
    last_usd: float
    versions: int


@dataclass(frozen=True)
class InputRow:
    """One result (or serving option) and the numbers of the inputs it read."""

    name: str
    numbers: list[int]
    option: ServingOptionLine | None = None   # serving rows: the option priced


@dataclass(frozen=True)
class NumberedInputs:
    """Distinct input figures, numbered from 1, and a row per result pointing at them."""

    figures: list[Cited]
    rows: tuple[InputRow, ...]


@dataclass(frozen=True)
class DensityView:
    findings: list[str]              # one sentence per threshold and position
    points: list[NumberedPoint]


@dataclass(frozen=True)
class InterconnectView:
    points: list[NumberedPoint]          # per-GPU bandwidth, scale-up then scale-out
    switch_points: list[NumberedPoint]


@dataclass(frozen=True)
class FlagKind:
    """Appendix B: the flags of one kind the context holds, and how many there are."""

    kind: str
    flags: list[Flag]
    compact: bool                       # print subjects counted by metric, not messages
    total: int
    more: int                           # flags of the kind not listed
    subjects: list[views.SubjectGroup]  # compact kinds only
    query: str                          # the warehouse query listing all of them


@dataclass(frozen=True)
class FlagsView:
    summary: views.FlagSummary
    kinds: tuple[FlagKind, ...]


@dataclass(frozen=True)
class StaleView:
    """Remote sources whose latest fetch failed: those listed and how many in all."""

    sources: tuple[StaleSource, ...]
    total: int
    more: int


@dataclass(frozen=True)
class ChangeCounts:
    """Observation changes per kind, the ones the list leaves out included."""

    added: int
    changed: int
    superseded: int


@dataclass(frozen=True)
class ChangesView:
    counts: ChangeCounts
    left_out: list[views.LeftOut]
    query: str
    more_flags: int                  # change flags not listed


@dataclass(frozen=True)
class SpecSection:
    """Appendix A: one section's values, and how many the section has in all."""

    name: str
    lines: list[SpecLine]
    total: int
    more: int


@dataclass(frozen=True)
class ValuesView:
    sections: tuple[SpecSection, ...]
    total: int
    left_out: int                    # values of all sections not listed
    query: str


@dataclass(frozen=True)
class BriefingView:
    """Everything the briefing's templates print: the context's plain fields (`ctx`) and
    every derived value, built once by `build_view`."""

    ctx: BriefingContext
    charts: Charts
    workloads: tuple[Workload, ...]
    serving: tuple[ServingView, ...]
    market_dates: str
    scenarios: tuple[ScenarioRow, ...]
    tornadoes: tuple[Tornado, ...]
    tco: tuple[TcoLine, ...]                 # the comparisons of modelled workloads
    tco_illustrations: tuple[TcoLine, ...]   # those whose job times are given (appendix)
    # Each option of those comparisons once, with its capex by category (TcoLine).
    tco_capex: tuple[tuple[str, str], ...]
    rented: list[tuple[DecisionLine, OptionLine]]
    # The market of the GPUs the briefing's options run on (all of it when none names its GPU),
    # and the rest of it, which the appendix lists.
    market: tuple[MarketRow, ...]
    market_rest: tuple[MarketRow, ...]
    market_lines: tuple[MarketLine, ...]   # page 2's, of the briefed GPUs
    market_lines_rest: tuple[str, ...]     # the other GPUs page 2 leaves to the appendix
    market_compositions: tuple[str, ...]   # offers that came or went, apart from the changes
    density: DensityView
    interconnect: InterconnectView
    flags: FlagsView
    stale: StaleView
    changes: ChangesView
    values: ValuesView
    source_total: int
    parameters: tuple[tuple[str, str], ...]
    validation: list[views.ValidationSummary]
    validation_sets: list[views.ValidationSet]
    scenario_inputs: NumberedInputs
    tco_inputs: NumberedInputs
    serving_inputs: NumberedInputs


def capex_groups(lines: Sequence[TcoLine]) -> tuple[tuple[str, str], ...]:
    """Each option of `lines` once with its capex by category, options of one bill of
    materials together ("hgx-ndr, own-hgx-b200"), and a part every option shares (the
    facility in colocation) said once, first, as ("", part)."""
    by_option = dict(pair for t in lines for pair in t.capex_by_category)
    split = {name: text.split("; ") for name, text in by_option.items()}
    # Unpriced parts every option has (the facility rented, a category none has) are said once.
    shared = [p for p in next(iter(split.values()), []) if "$" not in p and len(split) > 1
              and all(p in parts for parts in split.values())]
    grouped: dict[str, list[str]] = {}
    for name, parts in split.items():
        grouped.setdefault("; ".join(p for p in parts if p not in shared), []).append(name)
    return (*(("", p) for p in shared),
            *((", ".join(names), text) for text, names in grouped.items()))


def build_view(context: BriefingContext, document: str = "briefing") -> BriefingView:
    """The view of one document of the briefing (only the charts differ between them)."""
    drawn = Charts(**chart_svgs(context, document))
    page = page_one(context)
    return BriefingView(
        ctx=context, charts=drawn, workloads=page.workloads, serving=page.serving,
        market_dates=page.market,
        scenarios=tuple(ScenarioRow(s, views.scale_up_share(s)) for s in context.scenarios),
        tornadoes=tuple(Tornado(d, drawn.tornado[d.name]) for d in context.decisions
                        if d.name in drawn.tornado),
        tco=(split := procurement_tco(context))[0], tco_illustrations=split[1],
        tco_capex=capex_groups(split[0]),
        rented=views.rented_options(context.decisions),
        market=(market := (split_market := market_split(context))[0]),
        market_rest=split_market[1],
        market_lines=(lines := split_by_gpu(context.market, briefed_gpus(context)))[0],
        market_lines_rest=tuple(line.gpu for line in lines[1]),
        market_compositions=market_compositions(market),
        density=density_view(context), interconnect=interconnect_view(context),
        flags=flags_view(context), stale=stale_view(context), changes=changes_view(context),
        values=values_view(context),
        source_total=(len(context.sources) if context.source_count is None
                      else context.source_count),
        parameters=tuple(context.parameters.items()),
        validation=views.summarise_validation(context.validation),
        validation_sets=views.validation_sets(context.validation),
        scenario_inputs=numbered_inputs((s.name, s.inputs) for s in context.scenarios),
        tco_inputs=numbered_inputs((t.name, t.inputs) for t in context.tco),
        serving_inputs=serving_inputs(context),
    )


def procurement_tco(context: BriefingContext) -> tuple[tuple[TcoLine, ...], tuple[TcoLine, ...]]:
    """The TCO comparisons of modelled workloads (the procurement table), and those whose job
    times are given rather than modelled (worked illustrations: the appendix's)."""
    given = {d.name for d in context.decisions if d.illustrative}
    return (tuple(t for t in context.tco if t.name not in given),
            tuple(t for t in context.tco if t.name in given))


def chart_svgs(context: BriefingContext, document: str = "briefing") -> dict[str, Any]:
    """The inline SVG of each chart of `document` the context has data for (None: nothing
    to draw); the appendix draws only the switch chart."""
    svgs: dict[str, Any] = dict.fromkeys(
        ("density", "interconnect", "switch", "c2c", "tco", "market"))
    links = context.interconnect
    if document != "briefing":
        if links and _plotted(links.switch_capacity):
            svgs["switch"] = trend_charts.switch_chart(links)
        return svgs
    if (density := context.density) and _plotted(density.series):
        svgs["density"] = trend_charts.density_chart(density)
    if links and _plotted((links.scale_up, links.scale_out)):
        svgs["interconnect"] = trend_charts.interconnect_chart(links)
    if context.scenarios:
        svgs["c2c"] = trend_charts.c2c_map_chart(context.scenarios, context.c2c_thresholds)
    if procurement := procurement_tco(context)[0]:
        svgs["tco"] = trend_charts.tco_chart(procurement)
    briefed = [row.series for row in market_split(context)[0]]
    if any(len(series.points) for series in briefed):
        svgs["market"] = market_charts.market_chart(briefed)
    svgs["tornado"] = {d.name: decision_charts.tornado_chart(d, input_label)
                       for d in context.decisions if d.swings and not d.illustrative}
    svgs["serving"] = {s.name: decision_charts.serving_chart(s) for s in context.serving
                       if any(o.curve for o in s.options)}
    return svgs


def _plotted(series: Iterable[Series]) -> bool:
    return any(line.points for line in series)


class _HasGpu(Protocol):
    @property
    def gpu(self) -> str: ...


_OfGpu = TypeVar("_OfGpu", bound=_HasGpu)


def briefed_gpus(context: BriefingContext) -> frozenset[str]:
    """The GPUs the briefing's options run on: its comparisons' and its serving answers'."""
    return frozenset(filter(None, (*(o.gpu for d in context.decisions for o in d.options),
                                   *(o.gpu for s in context.serving for o in s.options))))


def split_by_gpu(lines: Iterable[_OfGpu], gpus: frozenset[str]) -> tuple[tuple[_OfGpu, ...], ...]:
    """The lines of `gpus`, and the rest. All of them when no line is of `gpus` (no option
    names its GPU, or the ledger prices none of them): the market then is the briefing's only
    view of prices, not an empty table."""
    lines = tuple(lines)
    if not any(x.gpu in gpus for x in lines):
        return lines, ()
    return (tuple(x for x in lines if x.gpu in gpus),
            tuple(x for x in lines if x.gpu not in gpus))


def market_split(context: BriefingContext) -> tuple[tuple[MarketRow, ...], ...]:
    """The market rows of the briefed GPUs, and the rest (split_by_gpu)."""
    series = split_by_gpu(context.market_history, briefed_gpus(context))
    return tuple(tuple(map(market_row, part)) for part in series)


def market_row(series: MarketSeries) -> MarketRow:
    """The series' latest median and how many versions it spans. Its change is the index's
    over matched offers, never the ratio of two medians over different offers."""
    return MarketRow(series, series.points[-1][1], len(series.points))


def market_compositions(rows: tuple[MarketRow, ...]) -> tuple[str, ...]:
    """"h100-sxm5 on demand, 90 days: gcp added 11 offers", per row whose offers came or
    went (over 90 days, else over 7)."""
    found = []
    for row in rows:
        s = row.series
        for days, words in ((90, s.composition_90d), (7, s.composition_7d)):
            if words:
                found.append(f"{s.gpu} {s.term.replace('_', ' ')}, {days} days: {words}")
                break
    return tuple(found)


def density_view(context: BriefingContext) -> DensityView:
    trend = context.density
    if trend is None:
        return DensityView([], [])
    return DensityView(views.crossing_groups(trend), views.numbered_points(trend.series))


def interconnect_view(context: BriefingContext) -> InterconnectView:
    trend = context.interconnect
    if trend is None:
        return InterconnectView([], [])
    return InterconnectView(views.numbered_points((trend.scale_up, trend.scale_out)),
                            views.numbered_points(trend.switch_capacity))


def flags_view(context: BriefingContext) -> FlagsView:
    """The summary's flags and Appendix B's groups, with every kind's count."""
    totals = views.flag_totals(context)
    kinds = tuple(_flag_kind(context, kind, group, compact, totals.get(kind, len(group)))
                  for kind, group, compact in views.flags_by_kind(context.flags, totals))
    return FlagsView(views.summarise_flags(context.flags, totals=totals), kinds)


def _flag_kind(context: BriefingContext, kind: str, group: list[Flag], compact: bool,
               total: int) -> FlagKind:
    subjects = views.subjects_by_metric(group) if compact else []
    return FlagKind(kind, group, compact, total, total - len(group), subjects,
                    views.flags_query(context, kind))


def stale_view(context: BriefingContext) -> StaleView:
    listed = context.stale_sources
    total = len(listed) if context.stale_source_count is None else context.stale_source_count
    return StaleView(listed, total, total - len(listed))


def changes_view(context: BriefingContext) -> ChangesView:
    """Change counts per kind, the rows the table leaves out, and the change flags not
    listed."""
    totals = views.change_totals(context)
    flag_totals = views.flag_totals(context)
    change_flags = sum(flag_totals.get(kind, 0) for kind in views.CHANGE_KINDS)
    return ChangesView(
        counts=ChangeCounts(**{kind: total.observations for kind, total in totals.items()}),
        left_out=views.changes_left_out(context), query=views.changes_query(context),
        more_flags=change_flags - len(context.changes.flags))


def values_view(context: BriefingContext) -> ValuesView:
    """Appendix A's sections with their totals, the ones left out included."""
    sections = views.spec_sections(context.specs)
    totals = views.value_totals(context, sections)
    rows = tuple(SpecSection(name, lines, totals[name], totals[name] - len(lines))
                 for name, lines in sections.items())
    total = sum(totals.values())
    return ValuesView(rows, total, total - len(context.specs), views.values_query(context))


def numbered_inputs(results: Iterable[tuple[str, Sequence[Cited]]]) -> NumberedInputs:
    """Each distinct input numbered once, and one row per result in the order given."""
    named = list(results)
    index = views.number_inputs(named)
    return NumberedInputs(index.figures,
                          tuple(InputRow(name, index.numbers[name]) for name, _ in named))


def serving_inputs(context: BriefingContext) -> NumberedInputs:
    """The serving options' inputs, one row per scenario and option."""
    options = [(s.name, o) for s in context.serving for o in s.options]
    index = views.number_inputs((f"{name}/{o.name}", o.inputs) for name, o in options)
    return NumberedInputs(index.figures, tuple(
        InputRow(name, index.numbers[f"{name}/{o.name}"], o) for name, o in options))
