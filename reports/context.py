"""The briefing's plain context: every number already resolved, with its source and date or
its formula. pipelines/briefing/context.py fills it from the ledger; reports/ only lays it out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from models.serving.validation import FamilyFidelity
from models.tco.decision import Swing
from models.trends.types import Changes, DensityTrend, Flag, InterconnectTrend


@dataclass(frozen=True)
class SpecLine:
    """One resolved value as the briefing prints it."""

    section: str
    item: str
    metric: str
    metric_description: str
    low: float
    high: float
    unit: str
    as_of: date
    as_of_precision: str
    status: str
    source_key: str
    source_title: str
    source_published_on: date | None
    alternatives: int = 0
    reason: str = ""


@dataclass(frozen=True)
class SourceLine:
    key: str
    title: str
    publisher: str | None
    kind: str
    published_on: date | None
    url: str | None


@dataclass(frozen=True)
class Cited:
    """A printed figure: a sourced value (source + as_of) or a formula over such values."""

    low: float
    high: float
    unit: str
    source: str | None = None      # source key, listed in the appendix
    as_of: date | None = None
    formula: str | None = None     # e.g. "port_rate 400 Gb/s x 64 ports x 2"
    text: str | None = None        # a qualitative cell (lossless mechanism, ecosystem)
    label: str = ""                # what the figure is, e.g. "NVLink 5 per-GPU bandwidth";
                                   # printed where the figure is listed apart from its row


@dataclass(frozen=True)
class ComparisonRow:
    """One attribute of the scale-up vs scale-out table; one cell per option (same order as
    BriefingContext.comparison_options). A None cell prints as "not in the ledger"."""

    attribute: str
    cells: tuple[Cited | None, ...]


@dataclass(frozen=True)
class ScenarioLine:
    """A C2C result of this dataset version."""

    name: str
    workload: str          # e.g. "GPT-3 175B, TP8 x PP8" (from the scenario definition)
    cluster: str           # e.g. "GB200 NVL72" / "HGX B200 + NDR"
    gpus: int
    c2c: float
    c2c_scale_up: float
    c2c_scale_out: float
    c2c_class: str         # compute-bound / performance-sensitive / communication-bound
    recommended_fabric: str
    mfu: float
    time_to_train_days: float | None
    inputs: tuple[Cited, ...] = ()   # the hardware figures it read, with source and date
    domain_gpus: int | None = None   # GPUs in the cluster's scale-up (NVLink) domain
    # The job as a buyer names it ("GPT-3 175B (175B parameters), 300B tokens"), and the
    # layout the result is for with how it was chosen ("TP8 x PP8 x DP48, best of 1,936").
    title: str | None = None
    layout: str | None = None
    layout_note: str | None = None
    layout_searched: bool = False
    c2c_link: float | None = None    # C2C with nothing hidden behind compute (None: unknown)
    # Its scale-out fabric as page 1 names it ("400G RoCE per GPU"), and why its efficiency
    # is not its own when it is borrowed from another fabric's measurement.
    fabric: str | None = None
    fabric_borrowed: str | None = None

    @property
    def fabric_reading(self) -> str:
        """The fabric as the cluster reads it: on a scale-up cluster (a domain wider than a
        node) a scale-out fabric is what links its domains, not a different cluster."""
        if (self.domain_gpus or 0) > 8 and self.recommended_fabric.startswith("scale-out "):
            linked = self.recommended_fabric.removeprefix("scale-out ")
            return f"{self.domain_gpus}-GPU domains linked by {linked}"
        return self.recommended_fabric


@dataclass(frozen=True)
class TcoLine:
    """A TCO comparison of this dataset version."""

    name: str
    scale_up_option: str
    scale_out_option: str
    break_even_speedup: float
    break_even_p10: float | None
    break_even_p90: float | None
    speedup: float | None          # JCT_out / JCT_up from the C2C model, when known
    cheaper_option: str | None
    usd_per_gpu_hour: tuple[tuple[str, float], ...] = ()   # (option, $/GPU-hour)
    inputs: tuple[Cited, ...] = ()
    # s's P10-P90 with the C2C model's error, and "too close to call" when it overlaps s*'s.
    speedup_p10: float | None = None
    speedup_p90: float | None = None
    call: str | None = None
    settle_with: str | None = None
    # Each option's capex by category: "racks (compute, network) $168 M; liquid-retrofit
    # (cooling) $11.4 M; facility in colocation", a category no item covers "not in the ledger".
    capex_by_category: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class OptionLine:
    """One option of a decision, as page 1 sets them side by side."""

    name: str
    gpus: int | None
    gpu: str | None                       # the GPU's item key, when the C2C result names it
    time_to_train_days: float | None
    job_cost_usd: float | None
    usd_per_gpu_hour: float | None        # owning (or the rent the scenario names)
    # The market's on-demand price index for the same GPU, and renting the same GPU-hours
    # at it; None when the ledger has no offer for the GPU.
    market_usd_per_gpu_hour: float | None = None
    market_job_cost_usd: float | None = None
    layout: str | None = None             # the layout its job time is for, "TP8 x PP8 x DP48"
    layout_note: str | None = None        # how it was chosen: "best of 222 that fit"
    layout_searched: bool = False
    # "owned", or the rent it pays: "rented: reserved_1y median of 1 provider (gcp), 2025-03-01"
    basis: str = "owned"
    rented: bool = False
    availability: float = 1.0
    goodput: float = 1.0
    utilisation: float = 1.0
    upfront_capex_usd: float | None = None
    annual_opex_usd: float | None = None
    # The oldest and newest price dates of the on-demand offers the market figure counts
    # (one date when they agree): valid time, not the dataset version's date.
    market_priced_from: date | None = None
    market_priced_to: date | None = None
    # A rented option whose rent is older than the market's age limit: no verdict rests on it.
    rent_stale: bool = False
    # Capex categories no capex item covers (cooling, facility, ...): "not in the ledger".
    capex_missing: tuple[str, ...] = ()
    goodput_source: str | None = None     # "item (source, date)" when the ledger gives it
    fabric: str | None = None             # its training cluster's scale-out, "400G RoCE"
    fabric_borrowed: str | None = None    # its efficiency is another fabric's (why), or None
    # The oldest and newest dates of the ledger figures its cost reads, as precise as their
    # sources ("2024", "2025-08-20"), and how many of those figures are undated.
    inputs_oldest: str | None = None
    inputs_newest: str | None = None
    inputs_undated: int = 0


@dataclass(frozen=True)
class DecisionLine:
    """A workload's decision: its options, the cheaper one per job with the margin and the
    model's P10-P90 band, and what would flip it (models.tco.decision)."""

    name: str                             # the TCO comparison
    workload: str                         # the model and job the options run
    scale_up_option: str
    scale_out_option: str
    options: tuple[OptionLine, ...]
    cheaper: str | None
    dearer: str | None = None
    saving: float | None = None           # 0.09: the cheaper option is 9 % cheaper per job
    saving_p10: float | None = None
    saving_p90: float | None = None
    too_close: bool = False
    settle_with: str | None = None
    break_even: float | None = None       # s*
    speedup: float | None = None          # s, with its P10-P90
    speedup_p10: float | None = None
    speedup_p90: float | None = None
    flips: tuple[str, ...] = ()           # inputs whose range end flips the answer
    swings: tuple[Swing, ...] = ()        # the inputs that move the margin most
    illustrative: bool = False            # no option runs a modelled workload
    # Why the point may sit outside its P10-P90: an input priced at an end of its range.
    point_at_end: str | None = None


@dataclass(frozen=True)
class StaleMarketLine:
    """A GPU and term whose every offer is older than the market's age limit: what the
    ledger holds, left out of the index."""

    gpu: str
    term: str
    offers: int
    providers: int
    usd_per_gpu_hour: float                 # median over providers, each one voice
    newest: date                            # the newest offer's price date
    age_days: int                           # its age on the version's date


@dataclass(frozen=True)
class MarketSeries:
    """The price index of one GPU and term over the dataset versions up to the briefing's."""

    gpu: str
    term: str
    points: tuple[tuple[date, float], ...]   # (version date, median USD per GPU-hour)
    # The latest version's index line: its offers and providers, the oldest and newest price
    # dates (valid time) of the offers it counts, and its changes over 7 and 90 days of price
    # dates over matched offers (None: no offer priced on both dates), with the offers that
    # came or went over those days in words ("gcp added 11 offers"), apart.
    offers: int | None = None
    providers: int | None = None
    priced_from: date | None = None
    priced_to: date | None = None
    change_7d: float | None = None
    change_90d: float | None = None
    composition_7d: str | None = None
    composition_90d: str | None = None


@dataclass(frozen=True)
class MarketLine:
    """The market for one GPU: its on-demand price index and the cheapest offer of any term."""

    gpu: str
    median_usd: float | None              # on-demand median, USD per GPU-hour
    offers: int
    providers: int
    change: float | None                  # the median's change since the compared version
    cheapest_usd: float
    cheapest_provider: str
    cheapest_term: str
    cheapest_source: str
    as_of: date                           # the dataset version's date
    # Price dates (valid time): the oldest and newest of the on-demand offers counted, and the
    # cheapest offer's own; composition: offers that came or went, apart from the change.
    price_from: date | None = None
    price_to: date | None = None
    cheapest_as_of: date | None = None
    composition: str | None = None


@dataclass(frozen=True)
class PriceTierLine:
    """An option priced one way: owned, rented from a neocloud or from a hyperscaler."""

    tier: str                             # owned | neocloud | hyperscaler
    usd_per_gpu_hour: float
    source: str                           # the TCO option, or the providers and price dates
    usd_per_mtok_in: float | None = None  # at the target; None: the option does not reach it
    usd_per_mtok_out: float | None = None
    usd_per_mtok_all_out: float | None = None  # every GPU-second charged to output


@dataclass(frozen=True)
class ServingOptionLine:
    """One option of a serving scenario: its curve and its cost at the target."""

    name: str
    source: str                           # "measured" or "model"
    usd_per_gpu_hour: float
    price_source: str                     # the scenario, the market index, or a TCO option
    curve: tuple[tuple[float, float, float], ...]   # (concurrency, tok/s/GPU, tok/s/user)
    tok_s_per_gpu: float | None = None    # at the target; None: it does not reach it
    usd_per_mtok: float | None = None
    band_basis: str = ""
    inputs: tuple[Cited, ...] = ()        # the hardware figures it read, with source and date
    # The same option rented on demand (the market's median), beside its own price.
    rent_usd_per_gpu_hour: float | None = None
    rent_usd_per_mtok: float | None = None
    rent_source: str | None = None
    tiers: tuple[PriceTierLine, ...] = ()  # owned, neocloud, hyperscaler: those the ledger has
    prefill_share: float | None = None    # of the GPU-time at the target: the input tokens'
    # What each user gets at that point: the target, or more where the curve's slowest point
    # per user is still faster than the target (a curve is never extrapolated).
    tok_s_per_user: float | None = None
    layout: str = ""                      # the layout it runs at: "DP8 x EP8"
    layout_note: str = ""                 # how it was chosen: "best of 13", "pinned by ..."
    # The oldest and newest dates of the ledger figures its cost reads (hardware and price),
    # as precise as their sources, and how many of them are undated (models.dates.date_span).
    inputs_oldest: str | None = None
    inputs_newest: str | None = None
    inputs_undated: int = 0
    gpu: str | None = None                # the GPU's item key, when the answer names it
    engine: str = ""                      # the serving engine it runs on: "TensorRT-LLM"

    def labelled(self, *, with_engine: bool) -> str:
        """The option with its layout (and its engine, `with_engine`), as a verdict names it:
        "b200 (DP8 x EP8, SGLang, best of 13)"."""
        if not self.layout:
            return self.name
        parts = filter(None, [self.layout, self.engine if with_engine else "",
                              self.layout_note])
        return f"{self.name} ({', '.join(parts)})"


@dataclass(frozen=True)
class ServingLine:
    """A serving scenario's answer: cost per million output tokens at a target
    interactivity, per option, and the cheaper option with its margin and band."""

    name: str
    model: str
    precision: str
    input_tokens: int
    output_tokens: int
    target_tok_s_per_user: float
    options: tuple[ServingOptionLine, ...]
    cheaper: str | None = None
    dearer: str | None = None
    saving: float | None = None
    saving_p10: float | None = None
    saving_p90: float | None = None
    too_close: bool = False
    price_basis: str = "owned"            # owned | rented <term> | given | mixed
    not_compared: str | None = None       # why there is no verdict (the bases differ)
    saving_basis: str | None = None       # "paired" | "widest": how the band was built
    saving_note: str | None = None        # what the band rests on
    model_measured: bool = True           # the model is among those the constants are fitted on
    # Its model estimates' families short of the calibration targets: (family, figure,
    # target) each; the stored call is then "no verdict" and the verdict says them.
    short_of_targets: tuple[tuple[str, str, str], ...] = ()


@dataclass(frozen=True)
class Headline:
    """One change since the last briefing that moves a decision or a price."""

    kind: str                             # "result", "price" or "value"
    subject: str
    text: str


@dataclass(frozen=True)
class ResultMove:
    """A scenario whose class, fabric or break-even speed-up moved since the previous version."""

    scenario: str
    field: str
    before: str
    after: str


@dataclass(frozen=True)
class ValidationLine:
    """The C2C model against one published measurement."""

    dataset: str           # e.g. "Korthikanti et al. 2022, Table 5"
    point: str
    quantity: str          # "iteration time (s)" or "MFU (%)"
    measured: float
    predicted: float
    error: float           # relative (iteration time) or points (MFU), as `error_unit` says
    error_unit: str
    source: str
    source_date: date


@dataclass(frozen=True)
class StaleSource:
    """A remote source whose latest fetch failed: the briefing uses its last good copy."""

    name: str
    url: str                        # without credentials
    failed_at: datetime             # the latest (failed) fetch
    error: str
    last_good_at: datetime | None   # None: never fetched


@dataclass(frozen=True)
class ChangeCount:
    """How many observations one kind of change touched, across how many items and metrics."""

    observations: int
    items: int
    metrics: int


@dataclass(frozen=True)
class BriefingContext:
    as_of: date
    dataset_version: int
    dataset_hash: str
    cutoff_at: datetime
    code_version: str
    specs: list[SpecLine] = field(default_factory=list)
    sources: list[SourceLine] = field(default_factory=list)
    rejected_rows: int = 0
    conflicts: int = 0
    previous_version: int | None = None
    previous_cutoff_at: datetime | None = None
    previous_briefing_on: date | None = None  # the briefing compared with, when one was made
    flags: list[Flag] = field(default_factory=list)          # most severe first
    density: DensityTrend | None = None
    interconnect: InterconnectTrend | None = None
    comparison_options: tuple[str, ...] = ()                 # column headings
    comparison: list[ComparisonRow] = field(default_factory=list)
    scenarios: list[ScenarioLine] = field(default_factory=list)
    tco: list[TcoLine] = field(default_factory=list)
    decisions: list[DecisionLine] = field(default_factory=list)   # page 1, one per workload
    market: list[MarketLine] = field(default_factory=list)        # one per GPU
    market_history: list[MarketSeries] = field(default_factory=list)
    # Offers older than the age limit (SPECLEDGER_MARKET_MAX_AGE_DAYS), per GPU and term.
    market_stale: list[StaleMarketLine] = field(default_factory=list)
    market_max_age_days: int = 120
    market_stale_newest: date | None = None   # the newest price date among market_stale
    headlines: list[Headline] = field(default_factory=list)       # at most five
    serving: list[ServingLine] = field(default_factory=list)      # one per serving scenario
    # The serving model's error and band per GPU family (measured / predicted throughput).
    serving_fidelity: list[FamilyFidelity] = field(default_factory=list)
    changes: Changes = field(default_factory=Changes)
    moves: list[ResultMove] = field(default_factory=list)
    validation: list[ValidationLine] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)  # methodology: name -> value shown
    # C2C class boundaries (compute-bound below the first, communication-bound above the
    # second); the pipeline passes models.c2c.calibration's, which reports/ may not import.
    c2c_thresholds: tuple[float, float] = (0.2, 0.6)
    # Remote sources whose latest fetch known at the briefing failed, by name.
    stale_sources: tuple[StaleSource, ...] = ()
    # Lists that grow with the ledger hold their most important rows only; these count every
    # row, so the briefing can say what it leaves out. Empty (or None): the list is complete.
    change_counts: dict[str, ChangeCount] = field(default_factory=dict)   # kind -> count
    flag_counts: dict[str, int] = field(default_factory=dict)            # kind -> flags
    section_counts: dict[str, int] = field(default_factory=dict)         # section -> values
    source_count: int | None = None        # sources behind the version's resolved values
    stale_source_count: int | None = None
