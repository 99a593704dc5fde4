"""Page 1 in words: workloads with their options side by side, each comparison's verdict and
what would flip it, and the same as plain text for an e-mail body.

`page_one` builds the pieces once; the briefing's view (reports.view_model) and the e-mail
digest both read them, so page 1 and the e-mail cannot disagree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from models.dates import span_text
from models.serving import calibration
from reports.context import BriefingContext, DecisionLine, MarketLine, OptionLine, ServingLine
from reports.formatting import format_number, format_percent, format_usd


@dataclass(frozen=True)
class DecisionView:
    """One comparison as page 1 prints it: its line, its verdict and what would flip it."""

    line: DecisionLine
    verdict: str
    flip: str


@dataclass(frozen=True)
class Workload:
    """One model at one job size: every option any of its comparisons prices (an option
    priced the same way in two comparisons is one column, named by both), and the
    comparisons' verdicts."""

    title: str
    options: tuple[tuple[str, OptionLine], ...]   # (names, figures)
    decisions: tuple[DecisionView, ...]
    assumptions: str = ""                         # what cost per job assumes, in words
    bottom_line: str = ""                         # the workload's answer in one sentence

    @property
    def headers(self) -> tuple[tuple[str, str], ...]:
        """Each column's name and, when two comparisons price it alike, its other names."""
        return tuple((names.split(" / ")[0], ", ".join(names.split(" / ")[1:]))
                     for names, _ in self.options)


@dataclass(frozen=True)
class ServingView:
    """One serving scenario as page 1 and the serving section print it."""

    line: ServingLine
    verdict: str      # the whole sentence (the serving section)
    band_basis: str   # what the options' bands and the margin's rest on
    headline: str = ""  # page 1's: what its note says for every verdict left out


@dataclass(frozen=True)
class PageOne:
    """Page 1's words: the modelled workloads and the serving verdicts."""

    workloads: tuple[Workload, ...]
    serving: tuple[ServingView, ...]
    market: str = ""   # how old the market is: "market prices of 2026-08-19 to 2026-11-09"


def page_one(context: BriefingContext) -> PageOne:
    """The workloads, verdicts and flips, and the serving verdicts, computed once."""
    return PageOne(workloads=tuple(workloads(context.decisions)),
                   serving=tuple(serving_view(line) for line in context.serving),
                   market=market_dates(context))


def market_dates(context: BriefingContext) -> str:
    """The market's date as page 1 states it: the price dates of the offers the price index
    counts ("market prices of 2026-08-19 to 2026-11-09"), and when remote sources could not
    be fetched, that the market is their last good copies. "" without a market."""
    ends = [m.price_to for m in context.market if m.price_to]
    starts = [m.price_from or m.price_to for m in context.market if m.price_to]
    if not ends:
        return ""
    oldest, newest = min(starts), max(ends)
    text = (f"market prices of {oldest.isoformat()}" if oldest == newest else
            f"market prices of {oldest.isoformat()} to {newest.isoformat()}")
    stale = context.stale_source_count or len(context.stale_sources)
    if stale:
        text += f" ({stale} feed{'s' * (stale != 1)} not fetched: last good copies)"
    return text


def serving_view(line: ServingLine) -> ServingView:
    """A serving scenario with its verdict sentence and band basis."""
    return ServingView(line, serving_verdict(line), band_basis(line),
                       serving_verdict(line, brief=True))


def band_basis(line: ServingLine) -> str:
    """What the bands rest on: each distinct option band once, with the options it is of
    (named when the options differ), then the margin's when it is paired."""
    names: dict[str, list[str]] = {}
    for option in line.options:
        names.setdefault(option.band_basis, []).append(option.name)
    if len(names) == 1:
        text = next(iter(names))
    else:
        text = "; ".join(f"{', '.join(n)}: {basis}" for basis, n in names.items())
    if line.saving_basis == "paired" and line.saving_note:
        text += f". The margin's band: {line.saving_note}"
    return text


def workloads(decisions: Sequence[DecisionLine], illustrative: bool = False) -> list[Workload]:
    """The decisions grouped by workload, in the order they come; `illustrative` picks the
    comparisons whose job times are given rather than modelled instead."""
    groups: dict[str, list[DecisionLine]] = {}
    for line in decisions:
        if line.illustrative == illustrative:
            groups.setdefault(line.workload, []).append(line)
    return [Workload(title, _columns(lines), tuple(DecisionView(d, verdict(d), flip(d))
                                                   for d in lines),
                     assumptions(_columns(lines)), bottom_line(lines))
            for title, lines in groups.items()]


def bottom_line(lines: Sequence[DecisionLine]) -> str:
    """A workload's answer in one sentence: what to buy ("Buy X", or "Either X or Y: too
    close to call; what decides it: ..." naming something the buyer can get), then whether to
    own or rent. Built from the comparisons' verdicts, so it never says more than they do."""
    hardware = [line for line in lines if not _own_vs_rent(line) and _decided(line)]
    parts = [_buy(hardware)] if hardware else []
    parts += [_own_or_rent(line) for line in lines if _own_vs_rent(line)]
    text = "; ".join(p for p in parts if p)
    return f"{text[0].upper()}{text[1:]}." if text else ""


def _own_vs_rent(line: DecisionLine) -> bool:
    return len({o.rented for o in line.options}) > 1


def _decided(line: DecisionLine) -> bool:
    """A comparison with a verdict: both job times known and no rent past the age limit."""
    return (line.saving is not None and line.cheaper is not None
            and not any(o.rented and o.rent_stale for o in line.options))


def _buy(lines: Sequence[DecisionLine]) -> str:
    clear = [line for line in lines if not line.too_close]
    close = [line for line in lines if line.too_close]
    winners = list(dict.fromkeys(line.cheaper for line in clear))
    losers = {line.dearer for line in clear}
    settle = next((line.settle_with for line in close if line.settle_with), None)
    decides = f"what decides it: {settle + ', or ' if settle else ''}firm quotes for each"
    if not close and len(winners) == 1 and winners[0] not in losers:
        return f"Buy {winners[0]}"
    if not clear:
        names = list(dict.fromkeys(n for line in close for n in (line.cheaper, line.dearer)))
        return f"Either {' or '.join(str(n) for n in names)}: too close to call; {decides}"
    beaten = ", ".join(str(line.dearer) for line in clear)
    level = ", ".join(str(line.dearer if line.cheaper in winners else line.cheaper)
                      for line in close)
    return (f"Buy {' or '.join(str(w) for w in winners)} rather than {beaten}"
            + (f"; against {level} too close to call ({decides})" if close else ""))


def _own_or_rent(line: DecisionLine) -> str:
    if any(o.rented and o.rent_stale for o in line.options):
        stale = ", ".join(o.name for o in line.options if o.rented and o.rent_stale)
        return f"own or rent: no current rent price for {stale}"
    if not _decided(line):
        return ""
    rented = next(o for o in line.options if o.rented)
    if line.too_close:
        return f"owning or renting ({rented.name}): too close to call"
    margin = f"{format_percent(line.saving)} cheaper per job"
    if line.cheaper == rented.name:
        return f"rent ({rented.name}) rather than own, {margin}"
    return f"own rather than rent, {margin} than {rented.name}"


def assumptions(columns: Sequence[tuple[str, OptionLine]]) -> str:
    """What every cost per job above assumes, stated: the cost of a year (owning, or a
    rent held for the year) charged by job time over the share of the year the cluster does
    paid work (utilisation), and each option's availability and goodput."""
    used = [format_percent(u) for u in sorted({o.utilisation for _, o in columns},
                                              reverse=True)]
    shares = sorted({(format_percent(o.availability), format_percent(o.goodput))
                     for _, o in columns})
    stated = "; ".join(f"availability {a}, goodput {g}" for a, g in shares)
    sources = sorted({o.goodput_source for _, o in columns if o.goodput_source})
    if sources and all(o.goodput_source for _, o in columns):
        where = (f"set per option in the scenario; goodput from {'; '.join(sources)}"
                 + (", the only published large-run figure, every option's"
                    if len(sources) == 1 else ""))
    else:
        where = "all set per option in the scenario"
    return ("Cost per job is a year's owned cost ÷ utilisation (idle hours are paid by the "
            "jobs that run), plus any rent, × job time / 365; "
            f"utilisation {' / '.join(used)}. "
            f"Job times assume {stated} ({where}). "
            f"{fabrics(columns)}Upfront capex: the options' capex items at purchase"
            f"{capex_gaps(columns)}. {input_dates_note(columns)}")


def input_dates_note(columns: Sequence[tuple[str, OptionLine]]) -> str:
    """What the "Inputs dated" row spans, and how many of each option's ledger figures have
    no date at all ("1 undated: nvl72, hgx-ndr")."""
    text = "Inputs dated: the oldest and newest ledger figure each cost reads"
    by_count: dict[int, list[str]] = {}
    for name, option in columns:
        if option.inputs_undated:
            by_count.setdefault(option.inputs_undated, []).append(name)
    if by_count:
        text += "; undated besides: " + "; ".join(
            f"{count} ({', '.join(names)})" for count, names in sorted(by_count.items()))
    return text + "."


def capex_gaps(columns: Sequence[tuple[str, OptionLine]]) -> str:
    """"; not in the ledger: cooling of hgx-800gbe, hgx-ndr", each category no capex item of
    an option covers, with the options it is missing from ("" when none is)."""
    missing: dict[str, list[str]] = {}
    for name, option in columns:
        for category in option.capex_missing:
            missing.setdefault(category, []).append(name)
    if not missing:
        return ""
    return "; not in the ledger: " + "; ".join(f"{category} of {', '.join(names)}"
                                               for category, names in missing.items())


def fabrics(columns: Sequence[tuple[str, OptionLine]]) -> str:
    """Whether the options' fabrics (each column's header names its per-GPU scale-out)
    compare at one line rate, and which option's efficiency is borrowed from another fabric's
    measurement ("" when fewer than two fabrics are named and none is borrowed)."""
    named = [(name, o.fabric, o.fabric_borrowed) for name, o in columns if o.fabric]
    fabrics_named = {fabric for _, fabric, _ in named}
    rates = {str(fabric).split("G ", 1)[0] for fabric in fabrics_named}
    text = ""
    if len(fabrics_named) > 1:
        text = (f"The fabrics compare at one line rate ({next(iter(rates))}G per GPU). "
                if len(rates) == 1 else
                "The fabrics' line rates per GPU differ: they are not compared at one rate. ")
    for name, _, borrowed in named:
        if borrowed:
            text += f"{name}'s {borrowed}: the fabrics' difference is assumed. "
    return text


def _columns(lines: Sequence[DecisionLine]) -> tuple[tuple[str, OptionLine], ...]:
    names: dict[tuple[object, ...], list[str]] = {}
    figures: dict[tuple[object, ...], OptionLine] = {}
    for line in lines:
        for option in line.options:
            key = (option.gpu, option.gpus, option.time_to_train_days, option.job_cost_usd,
                   option.usd_per_gpu_hour)
            figures.setdefault(key, option)
            if option.name not in names.setdefault(key, []):
                names[key].append(option.name)
    return tuple((" / ".join(names[key]), option) for key, option in figures.items())


def input_label(name: str) -> str:
    """A TCO input as a reader names it: "options.hgx-ndr.jct" -> "hgx-ndr job time (days)"."""
    words = name.removeprefix("options.").replace(".jct", " job time (days)")
    return words.replace(".capex.", " capex ").replace(".", " ").replace("_", " ")


def verdict(line: DecisionLine) -> str:
    """The comparison's answer in one sentence a buyer can act on: what to buy (or whether to
    own or rent), by how much per job, the P10-P90, and on what basis the options compare."""
    if line.saving is None or line.cheaper is None:
        cheaper = line.cheaper or "neither option"
        return (f"{cheaper} is cheaper per GPU-hour; cost per job needs both job times, "
                "which this comparison does not have.")
    stale = [o for o in line.options if o.rented and o.rent_stale]
    if stale:   # a rent past the market's age limit is history, not a price to decide on
        return (f"No verdict: no current rent price for {', '.join(o.name for o in stale)} "
                f"({stale[0].basis}).")
    options = {o.name: o for o in line.options}
    cheaper, dearer = options.get(line.cheaper), options.get(line.dearer or "")
    band = (f"P10–P90 {format_percent(line.saving_p10, signed=True)} to "
            f"{format_percent(line.saving_p90, signed=True)}")
    outside = line.saving_p10 is not None and line.saving_p90 is not None and not (
        line.saving_p10 <= line.saving <= line.saving_p90)
    if outside and line.point_at_end:   # a point outside its own band says why
        band += f" (the point takes {line.point_at_end})"
    layouts = _layout_basis(line.options)
    margin = (f"{format_percent(line.saving)} cheaper per job than {line.dearer}"
              f"{' ' + layouts if layouts else ''}, {band}")
    if line.too_close:
        # What decides it is something the buyer can get: a measurement, firm quotes.
        settle = f"{line.settle_with}, or firm quotes for both" if line.settle_with else \
            "firm quotes for both"
        return f"Either: too close to call ({line.cheaper} {margin}); what decides it: {settle}."
    if cheaper is not None and dearer is not None and cheaper.rented != dearer.rented:
        rented = cheaper if cheaper.rented else dearer
        choice = "Rent rather than own" if cheaper.rented else "Own rather than rent"
        return (f"{choice}: {line.cheaper} is {margin}. {rented.name} is {rented.basis}.")
    verb = "Rent" if cheaper is not None and cheaper.rented else "Buy"
    return f"{verb} {line.cheaper}: {margin}."


def _layout_basis(options: Sequence[OptionLine]) -> str:
    """On which layouts the options compare: each at its best, or as the scenarios pin them."""
    searched = [o.layout_searched for o in options if o.layout is not None]
    if not searched:  # job times given, not modelled: no layout to speak of
        return ""
    if all(searched):
        return "at each option's best layout"
    if not any(searched):
        return "at the layouts the scenarios pin"
    return "(some options searched for their best layout, some pinned)"


def flip(line: DecisionLine) -> str:
    """What would make the other option the cheaper one."""
    if line.break_even is None or line.speedup is None or line.saving is None:
        return ""
    up, out = line.scale_up_option, line.scale_out_option
    same = same_machine_flip(line)
    if same:
        return same
    model = f"the model says {format_number(line.speedup, 3)}×"
    if line.speedup_p10 is not None and line.speedup_p90 is not None:
        model += (f", P10–P90 {format_number(line.speedup_p10, 3)}–"
                  f"{format_number(line.speedup_p90, 3)}×")
    threshold = format_number(line.break_even, 3)
    if line.cheaper == up:
        text = f"It flips if {up} runs less than {threshold}× as fast as {out} ({model})"
    else:
        text = f"It flips if {up} runs at least {threshold}× as fast as {out} ({model})"
    return text + "".join(f", or with {f}" for f in line.flips) + "."


def same_machine_flip(line: DecisionLine) -> str:
    """Own against rent of one machine (one job time, s = 1 in every draw): what flips it is
    the rent, not a speed-up, so say the rent at which it flips. Empty otherwise."""
    if (line.speedup, line.speedup_p10, line.speedup_p90) != (1.0, 1.0, 1.0):
        return ""
    options = {o.name: o for o in line.options}
    rented = [o for o in line.options if o.rented]
    owned = [o for o in line.options if not o.rented]
    if len(rented) != 1 or len(owned) != 1:
        return ""
    rent, own = rented[0], owned[0]
    if None in (rent.usd_per_gpu_hour, rent.job_cost_usd, own.job_cost_usd):
        return ""
    # The rented job costs its rent x GPU-hours: the rent at which both jobs cost the same.
    even = rent.usd_per_gpu_hour * own.job_cost_usd / rent.job_cost_usd  # type: ignore[operator]
    move = "falls below" if options.get(line.cheaper) is own else "rises above"
    return (f"Both run the same job in the same time: it flips if {rent.name}'s rent {move} "
            f"owning's {format_usd(even)}/GPU-hour"
            + "".join(f", or with {f}" for f in line.flips) + ".")


# Both options are model estimates with one engine: the band is that of one configuration's
# error against the other's, for their families (models.serving.cost.cheaper_at_target).
PAIRED_NOTE = "; the two estimates' errors paired by GPU family"


def serving_verdict(line: ServingLine, brief: bool = False) -> str:
    """A serving scenario in one sentence: the cheaper option per million output tokens at
    the target, by how much, and how sure. `brief` (page 1): what page 1's note says once for
    every verdict (options at their owner's cost, errors paired by family) is left out."""
    target = f"at {format_number(line.target_tok_s_per_user, 3)} tokens/s per user"
    reached = [o for o in line.options if o.usd_per_mtok is not None]
    if line.not_compared:
        costs = "; ".join(f"{o.name} {format_usd(o.usd_per_mtok)} ({o.price_source})"
                          for o in reached)
        return f"Not compared: {line.not_compared}. Per million output tokens {target}: {costs}."
    if line.cheaper is None or line.saving is None:
        if not reached:
            return f"No option reaches {target}."
        only = reached[0]
        return (f"Only {only.name} reaches {target}: {format_usd(only.usd_per_mtok)} per "
                "million output tokens.")
    costs = {o.name: o.usd_per_mtok for o in line.options}
    # Each option names its engine, once for both when they share it; page 1's brief line
    # leaves it to the serving section (page 1 has a line each, and a miss names its engine).
    engines = {o.name: o.engine for o in line.options}
    same = engines.get(line.cheaper) == engines.get(line.dearer)
    shared = engines.get(line.cheaper, "") if same and not brief else ""
    named = {o.name: o.labelled(with_engine=not (same or brief)) for o in line.options}
    measured = {o.name for o in line.options if o.source == "measured"}
    # Two measured curves carry no model error: their margin is a measured one, not a band.
    # A model estimate of a family short of the calibration targets gives no band to decide
    # on: the verdict says so, in the family's one number, instead.
    short = short_families(line)
    sure = ("both measured" if {line.cheaper, line.dearer} <= measured else
            f"no band: {short}" if short else
            f"80 % band {format_percent(line.saving_p10, signed=True)} to "
            f"{format_percent(line.saving_p90, signed=True)}")
    text = (f"{named[line.cheaper]} costs {format_usd(costs[line.cheaper])} per million "
            f"output tokens {target}, {format_percent(line.saving)} less than "
            f"{named[line.dearer]} ({format_usd(costs[line.dearer])})"
            f"{f', both on {shared}' if shared else ''}, {sure}")
    parts = [] if brief and line.price_basis == "owned" else [
        {"owned": "each option at its owner's cost per GPU-hour",
         "given": "each option at the price the scenario gives"}.get(
            line.price_basis, f"each option {line.price_basis} at the market's median")]
    if line.saving_basis == "paired" and not brief:
        parts.append(PAIRED_NOTE.removeprefix("; "))
    # With no verdict, that the model has no run of this model adds nothing to decide on.
    if not line.model_measured and not {line.cheaper, line.dearer} <= measured and not short:
        parts.append(calibration.unmeasured_model(line.model))
    basis = f" ({'; '.join(parts)})" if parts else ""
    # What would settle a close call (a measured run of each option) is said once, below
    # the verdicts (decision.html.j2), not in each one: page 1 has room for a line each.
    dated = serving_dates(line)
    if short:
        return f"No verdict: {text}{basis}.{dated}"
    if line.too_close:
        return f"Too close to call: {text}{basis}.{dated}"
    return f"{text}{basis}.{dated}"


def short_families(line: ServingLine) -> str:
    """Why the compared options' model estimates are not decision-grade, in the stored one
    number per family short of the calibration targets (on configurations left out of the
    fit; page 1's note gives the targets): "model 27.4 % off on Hopper, 62.7 % off on
    Blackwell"; "" for a verdict."""
    return calibration.short_text(line.short_of_targets)


def serving_dates(line: ServingLine) -> str:
    """" Inputs dated 2024-03–2026-08 (1 undated)." : the oldest and newest ledger figure the
    two compared options' costs read (hardware and price), "" when none is dated."""
    compared = [o for o in line.options if o.name in (line.cheaper, line.dearer)]
    oldest = [o.inputs_oldest for o in compared if o.inputs_oldest]
    newest = [o.inputs_newest for o in compared if o.inputs_newest]
    undated = sum(o.inputs_undated for o in compared)
    if not oldest or not newest:
        return f" Inputs undated ({undated})." if undated else ""
    extra = f" ({undated} undated)" if undated else ""
    return f" Inputs dated {span_text(min(oldest), max(newest))}{extra}."


def digest(context: BriefingContext) -> str:
    """Page 1 as plain text: the verdicts (the same pieces page 1 prints, page_one), the
    changes and the market."""
    lines = [f"specledger briefing, {context.as_of.isoformat()} "
             f"(dataset version {context.dataset_version})", ""]
    page = page_one(context)
    for workload in page.workloads:
        lines.append(workload.title)
        lines += [f"  {names}: {_option_text(option)}" for names, option in workload.options]
        lines += [f"  - {d.verdict} {d.flip}".rstrip() for d in workload.decisions]
        lines.append("")
    if page.serving:
        lines.append("Serving:")
        lines += [f"  - {s.line.model} {s.line.precision}: {s.headline}" for s in page.serving]
        lines.append("")
    if context.headlines:
        lines.append("Since the last briefing:")
        lines += [f"  - {h.subject}: {h.text}" for h in context.headlines]
        lines.append("")
    if context.market:
        lines.append("Market (on-demand index, USD per GPU-hour):")
        lines += [f"  - {m.gpu}: {format_usd(m.median_usd)}{_prices_of(m)}, cheapest "
                  f"{format_usd(m.cheapest_usd)} ({m.cheapest_provider}, "
                  f"{m.cheapest_term.replace('_', ' ')}"
                  f"{f', price of {m.cheapest_as_of}' if m.cheapest_as_of else ''})"
                  f"{f'; {m.composition}' if m.composition else ''}" for m in context.market]
    return "\n".join(lines).rstrip() + "\n"


def _prices_of(line: MarketLine) -> str:
    """The suffix " (prices of 2025-03-01 to 2025-03-08)": the price dates of the offers the
    median counts (valid time), not the dataset version's date."""
    if line.median_usd is None or line.price_to is None:
        return ""
    if line.price_from is None or line.price_from == line.price_to:
        return f" (prices of {line.price_to})"
    return f" (prices of {line.price_from} to {line.price_to})"


def _option_text(option: OptionLine) -> str:
    days = ("n/a" if option.time_to_train_days is None
            else f"{format_number(option.time_to_train_days, 3)} days")
    return (f"{days} to train, {format_usd(option.job_cost_usd)} per job, "
            f"{format_usd(option.usd_per_gpu_hour)} per GPU-hour")
