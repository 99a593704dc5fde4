"""The main job's steps as plain functions: ingest, publish, render. Flows wrap these."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

from db import outputs, queries
from db.engine import (
    LockWait,
    Session,
    lock_wait_of,
    write_session,
)
from db.warehouse import Published, WarehouseMeta, publish_version
from models.resolve import SOURCE_KIND_RANK
from models.trends import TrendParams
from pipelines.briefing.comparison import load_comparison
from pipelines.briefing.context import BriefingInputs, briefing_context
from pipelines.delivery.deliver import DeliveryReport
from pipelines.fetch.remote import FetchReport
from pipelines.inputs.adapters.base import AdapterOptions
from pipelines.inputs.adapters.instances import InstanceTable, default_instances
from pipelines.inputs.adapters.registry import load_aliases
from pipelines.inputs.catalog import load_metrics
from pipelines.jobs import c2c, render_cache, serving, tco
from pipelines.jobs.flags import FlagReport, compute_flags
from pipelines.jobs.ingest import FileReport, IngestReport, ingest_paths
from pipelines.jobs.ledger_update import LedgerUpdate, UpdateInputs, update_ledger
from pipelines.jobs.price_index import store_price_index
from pipelines.jobs.recompute import RecomputeReport
from pipelines.ledger.connection import (
    code_version,
    connect_ledger,
    migrate_ledger,
    open_ledger,
    utc_now,
)
from pipelines.ledger.market import market_index, price_index_rows
from pipelines.settings import Settings
from reports.briefing import DOCUMENTS, RenderedPdf, layout_digest, render, render_html
from reports.context import BriefingContext
from reports.decisions import digest as page_one_digest
from reports.side_render import appendix_beside


@dataclass(frozen=True)
class RunResult:
    """What one weekly run did: its ledger update and the outputs it wrote."""

    ledger: LedgerUpdate
    warehouse: Path
    briefing: Path
    remote: FetchReport = FetchReport()  # the sources declared by URL, fetched before
    delivery: DeliveryReport | None = None  # how the briefing reached its readers (None: not tried)
    briefing_reused: bool = False  # its documents came from the render cache (same HTML)

    @property
    def ingest(self) -> IngestReport:
        return self.ledger.ingest

    @property
    def c2c(self) -> RecomputeReport:
        return self.ledger.c2c

    @property
    def tco(self) -> RecomputeReport:
        return self.ledger.tco

    @property
    def serving(self) -> RecomputeReport | None:
        return self.ledger.serving

    @property
    def flags(self) -> FlagReport:
        return self.ledger.flags

    @property
    def lock_wait(self) -> LockWait:
        return self.ledger.lock_wait


def ingest(settings: Settings, paths: list[Path], *, today: date,
           now: Callable[[], datetime] = utc_now,
           on_file: Callable[[FileReport], None] | None = None,
           item: str | None = None, as_of: date | None = None,
           on_wait: Callable[[LockWait], None] | None = None) -> IngestReport:
    """Ingest `paths`; `item` and `as_of` say what the files cannot (see AdapterOptions).
    `on_wait` hears how long the migration and the write waited for other writers."""
    options = AdapterOptions(item=item, as_of=as_of, aliases=item_aliases(settings),
                             limits=settings.input_limits, instances=instance_table())
    waited = migrate_ledger(settings)
    engine = connect_ledger(settings)
    try:
        with write_session(engine, settings.lock_timeout_seconds) as session:
            waited = waited.then(lock_wait_of(session))
            report = ingest_paths(session, paths, metrics=load_metrics(settings.catalog_path),
                                  today=today, now=now, code_version=code_version(),
                                  on_file=on_file, options=options,
                                  market_max_age_days=settings.market_max_age_days)
    finally:
        engine.dispose()
    if on_wait is not None:
        on_wait(waited)
    return report


def update(settings: Settings, paths: list[Path], *, as_of: date,
           now: Callable[[], datetime] = utc_now,
           on_stage: Callable[[str], None] | None = None) -> LedgerUpdate:
    """A run's ledger work in one transaction: ingest `paths`, recompute every C2C and TCO
    scenario of settings.scenarios_dir for the resulting version (as of `as_of`), store its
    flags. Nothing of it is kept if any step fails. `on_stage` hears each step as it starts."""
    inputs = UpdateInputs(paths=paths, scenarios_dir=settings.scenarios_dir,
                          metrics=load_metrics(settings.catalog_path), params=_params(settings),
                          options=AdapterOptions(aliases=item_aliases(settings),
                                                 limits=settings.input_limits,
                                                 instances=instance_table()),
                          market_max_age_days=settings.market_max_age_days)
    waited = migrate_ledger(settings)
    engine = connect_ledger(settings)
    try:
        # "Future" means after the real today, whatever date the briefing reports on.
        updated = update_ledger(engine, inputs, today=now().date(), as_of=as_of, now=now,
                                code_version=code_version(),
                                lock_timeout_seconds=settings.lock_timeout_seconds,
                                on_stage=on_stage)
    finally:
        engine.dispose()
    return dataclasses.replace(updated, lock_wait=waited.then(updated.lock_wait))


def item_aliases(settings: Settings) -> dict[str, str]:
    """The alias table (absent file: no aliases, every name becomes its own item)."""
    path = settings.aliases_path
    return load_aliases(path.read_text(encoding="utf-8")) if path.exists() else {}


def instance_table() -> InstanceTable:
    """The instance table of the price lists (data/instances.yaml): read and checked before
    the ingest, so that a broken entry stops it with the entry's name, not at the first file."""
    return default_instances()


_RECOMPUTE = {"c2c": c2c.recompute, "tco": tco.recompute, "serving": serving.recompute}


def price_index(settings: Settings, dataset_version: int, *,
                now: Callable[[], datetime] = utc_now) -> list[int]:
    """Store the price index of every version up to `dataset_version` that lacks one."""
    engine = connect_ledger(settings)
    try:
        with write_session(engine, settings.lock_timeout_seconds) as session:
            return store_price_index(session, dataset_version, code_version=code_version(),
                                     now=now(), max_age_days=settings.market_max_age_days)
    finally:
        engine.dispose()


def recompute(settings: Settings, kind: str, dataset_version: int, *, on: date,
              now: Callable[[], datetime] = utc_now) -> RecomputeReport:
    """Results of one model (c2c, tco or serving) for every scenario of that kind in
    settings.scenarios_dir, for a dataset version."""
    engine = connect_ledger(settings)
    try:
        return _RECOMPUTE[kind](engine, settings.scenarios_dir, dataset_version, on=on,
                                now=now(), code_version=code_version(),
                                lock_timeout_seconds=settings.lock_timeout_seconds,
                                limits=settings.input_limits)
    finally:
        engine.dispose()


def publish(settings: Settings, dataset_version: int, *, as_of: date,
            built_at: datetime) -> Published:
    """Rebuild warehouse.duckdb for a dataset version, after any other publisher of it
    (waiting up to settings.lock_timeout_seconds). `built_at` is when the publish was asked
    for: a file another publisher built since then for the same version is left in place,
    as is one holding a newer version (Published.outcome says which)."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            version = queries.dataset_version(session, dataset_version)
            meta = WarehouseMeta(version.id, version.content_hash, version.cutoff_at, as_of,
                                 built_at, code_version(), settings.market_max_age_days)
            index = price_index_rows(market_index(session, up_to=dataset_version))
        return publish_version(engine, settings.warehouse_path, meta, SOURCE_KIND_RANK,
                               lock_timeout_seconds=settings.lock_timeout_seconds,
                               model_errors=c2c.fidelity_rows(), price_index=index)
    finally:
        engine.dispose()


def flags(settings: Settings, dataset_version: int, *,
          now: Callable[[], datetime] = utc_now) -> FlagReport:
    """Compute and store a dataset version's flags (once per version)."""
    engine = connect_ledger(settings)
    try:
        return compute_flags(engine, dataset_version, params=_params(settings),
                             code_version=code_version(), now=now(),
                             lock_timeout_seconds=settings.lock_timeout_seconds)
    finally:
        engine.dispose()


def stored_flags(settings: Settings, dataset_version: int) -> list[dict[str, Any]]:
    """A version's flags as stored (for the run summary)."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            return outputs.flags_of(session, dataset_version)
    finally:
        engine.dispose()


def _params(settings: Settings) -> TrendParams:
    return TrendParams(stale_after_days=settings.stale_after_days,
                       price_stale_after_days=settings.market_max_age_days,
                       tolerance=settings.flag_tolerance,
                       result_tolerance=settings.result_tolerance,
                       nics_per_gpu=settings.nics_per_gpu)


@dataclass(frozen=True)
class RenderedBriefing:
    path: Path
    sha256: str
    dataset_version: int
    first_sha256: str | None  # the first briefing recorded for the same date, if any
    appendix: Path | None = None  # the companion appendix PDF written beside it
    digest: str = ""  # page 1's verdicts as plain text (an e-mail body, a run summary)
    reused: bool = False  # laid out before from the same HTML: taken from the render cache

    @property
    def reproduces_first(self) -> bool | None:
        return None if self.first_sha256 is None else self.first_sha256 == self.sha256


def render_briefing(settings: Settings, dataset_version: int, *, as_of: date,
                    target: Path | None = None,
                    now: Callable[[], datetime] = utc_now,
                    reuse: bool = True) -> RenderedBriefing:
    """Render the briefing of a dataset version for `as_of`, write it atomically (default
    briefings/briefing-<as_of>.pdf) and record it with its sha256. Rendering only reads the
    stored records: prepare_briefing gives the versions it reads their stages first.
    `reuse`: documents laid out before from the same HTML are taken from the home's render
    cache (pipelines.jobs.render_cache) instead of being laid out again; False lays them out
    whatever (a re-render that checks its bytes)."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            version = queries.dataset_version(session, dataset_version)
            inputs = BriefingInputs(_params(settings), load_comparison(settings.comparison_path))
            context = briefing_context(session, as_of=as_of, version=version,
                                       code_version=code_version(), inputs=inputs)
            earlier = outputs.briefings_for(session, as_of)
            first_sha = _first_of_version(earlier, dataset_version)
            target = target or dated_briefing_path(settings.briefings_dir, as_of,
                                                   dataset_version, earlier)
        # Before the render (seconds of CPU): an output folder that cannot be made fails now.
        _make_folder_of(target)
        cache = settings.home / render_cache.FOLDER
        rendered, appendix, reused = _render_both(context, target, cache, reuse=reuse)
        pdf = rendered.pdf
        digest = hashlib.sha256(pdf).hexdigest()
        target = _never_over_another(target, digest)
        _write_atomically(target, pdf)
        appendix_target = _never_over_another(appendix_path(target),
                                              hashlib.sha256(appendix).hexdigest())
        _write_atomically(appendix_target, appendix)
        with write_session(engine, settings.lock_timeout_seconds) as session:
            outputs.record_briefing(session, dataset_version=dataset_version, as_of=as_of,
                                    path=str(target), sha256=digest, size_bytes=len(pdf),
                                    pages=rendered.pages, code_version=code_version(),
                                    rendered_at=now())
    finally:
        engine.dispose()
    return RenderedBriefing(target, digest, dataset_version, first_sha,
                            appendix=appendix_target, digest=page_one_digest(context),
                            reused=reused)


def _render_both(context: BriefingContext, target: Path, cache: Path, *, reuse: bool
                 ) -> tuple[RenderedPdf, bytes, bool]:
    """The briefing and its appendix, both rendered before either is written, and whether
    they came from the render cache (same HTML, same layout: the same bytes). WeasyPrint
    copies the template's fonts to temporary files while it renders: a full disk or a file
    size limit there is named as such, with the briefing it kept. The appendix is laid out
    in a forked child meanwhile (reports.side_render), so the pair costs about the
    appendix's time on two cores."""
    main_html, appendix_html = (render_html(context, document=d) for d in DOCUMENTS)
    key = render_cache.render_key((main_html, appendix_html), layout_digest())
    kept = render_cache.read_entry(cache, key) if reuse else None
    if kept is not None:
        return kept.main, kept.appendix, True
    try:
        appendix = appendix_beside(context, appendix_html)
        try:
            main = render(context, html=main_html)
        finally:
            appendix_pdf = appendix()
    except OSError as exc:
        previous = "; the previous file is unchanged" if target.is_file() else ""
        raise OSError(exc.errno, f"could not be rendered ({exc.strerror} while copying the "
                                 f"template's fonts to a temporary file){previous}",
                      str(target)) from exc
    render_cache.keep_entry(cache, key, render_cache.Entry(main, appendix_pdf))
    return main, appendix_pdf, False


def appendix_path(briefing: Path) -> Path:
    """The companion appendix of a briefing: briefing-<date>[-v<n>]-appendix.pdf beside it."""
    return briefing.with_name(f"{briefing.stem}-appendix{briefing.suffix}")


def prepare_briefing(settings: Settings, dataset_version: int, *, as_of: date,
                     now: Callable[[], datetime] = utc_now) -> list[str]:
    """Give the versions a briefing reads (the version and the one it is compared with)
    every stage of the graph they lack, however they were recorded (a standalone ingest
    makes a version without results); what was computed. A version with a briefing is left
    as it is whatever scenario files appeared since: its briefing read it, and a re-render
    must read the same (issue 43); a new scenario is computed with the next dataset version."""
    engine = connect_ledger(settings)
    try:
        with Session(engine) as session:
            version = queries.dataset_version(session, dataset_version)
            compared, _ = outputs.compared_version(session, version)
            read = [(version.id, as_of)]
            if compared is not None:
                read.append((compared.id, compared.cutoff_at.date()))
            due = [(v, day) for v, day in read if not outputs.is_briefed(session, v)]
    finally:
        engine.dispose()
    return [step for v, day in due for step in complete_version(settings, v, on=day, now=now)]


def complete_version(settings: Settings, dataset_version: int, *, on: date,
                     now: Callable[[], datetime] = utc_now) -> list[str]:
    """Give a dataset version the stages it lacks, in the graph's order: price index, C2C,
    TCO and serving results, flags (each is stored once per version: a version that has
    them is left as it is); what was computed."""
    computed = [f"price index of version {v}" for v in price_index(settings, dataset_version,
                                                                   now=now)]
    for kind in _RECOMPUTE:
        report = recompute(settings, kind, dataset_version, on=on, now=now)
        computed += [f"{kind} {name}" for name in [*report.computed, *report.reused]]
    if not flags(settings, dataset_version, now=now).already_stored:
        computed.append("flags")
    return computed


def dated_briefing_path(folder: Path, as_of: date, dataset_version: int,
                        earlier: list[Any]) -> Path:
    """Where a briefing of `as_of` goes: briefing-<date>.pdf for the day's first, the same
    name again for the same dataset version, briefing-<date>-v<version>.pdf for another
    version rendered the same day (never the name of another version's briefing)."""
    same = [b for b in earlier if b.dataset_version_id == dataset_version]
    if same:  # its name, in today's folder (a home may have moved since)
        return folder / Path(same[0].path).name
    if not earlier:
        return folder / f"briefing-{as_of.isoformat()}.pdf"
    return folder / f"briefing-{as_of.isoformat()}-v{dataset_version}.pdf"


def _first_of_version(earlier: list[Any], dataset_version: int) -> str | None:
    """The sha256 of the day's first briefing of this version: what a re-render must
    reproduce (None: this is the first)."""
    same = [b for b in earlier if b.dataset_version_id == dataset_version]
    return same[0].sha256 if same else None


def _never_over_another(target: Path, digest: str) -> Path:
    """`target`, unless it holds other bytes (a briefing delivered before, rendered by
    another code version): then a name of its own, <name>-<sha256 prefix>.pdf."""
    try:
        with open(target, "rb") as held:
            if hashlib.file_digest(held, "sha256").hexdigest() == digest:
                return target
    except OSError:  # nothing there (or no folder where one should be): the write says
        return target
    return target.with_name(f"{target.stem}-{digest[:12]}{target.suffix}")


def _make_folder_of(target: Path) -> None:
    """Make `target`'s folder (and its parents); an OSError naming the one that could not be
    made (a file where a folder should be)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"could not be made for {target.name} ({exc.strerror})",
                      exc.filename) from exc


def _write_atomically(target: Path, content: bytes) -> None:
    """Write beside `target`, then rename over it: a reader sees the old file or the new one.
    A failure (full disk, a file size limit, a file where the folder should be) leaves the
    old file and no temporary one, and raises an OSError naming what could not be written.
    The temporary file's name is this writer's own: two runs rendering the same briefing at
    once each rename a complete file (the same bytes, for the same version)."""
    _make_folder_of(target)
    tmp = target.with_name(f"{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        tmp.write_bytes(content)
        tmp.replace(target)
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass  # the error that matters is the write's
        kept = "; the previous file is unchanged" if target.is_file() else ""
        raise OSError(exc.errno, f"could not be written ({exc.strerror}){kept}",
                      str(target)) from exc


class NoDatasetVersion(LookupError):
    """No dataset version existed on the date asked for."""


def report(settings: Settings, *, as_of: date, target: Path | None = None,
           now: Callable[[], datetime] = utc_now,
           dataset_version: int | None = None) -> RenderedBriefing:
    """Re-render the briefing for `as_of` from the ledger: of `dataset_version` when given,
    else the dataset version of the first briefing recorded for that date, else the newest
    version known by the end of that day."""
    engine = open_ledger(settings)
    try:
        with Session(engine) as session:
            first = outputs.first_briefing_for(session, as_of)
            if dataset_version is not None:
                try:
                    version = queries.dataset_version(session, dataset_version)
                except LookupError as exc:
                    raise NoDatasetVersion(str(exc)) from exc
            else:
                version = (queries.dataset_version(session, first.dataset_version_id)
                           if first is not None else outputs.version_known_on(session, as_of))
            if version is None:
                raise NoDatasetVersion(f"the ledger held no dataset version on {as_of}")
            version_id = version.id
    finally:
        engine.dispose()
    prepare_briefing(settings, version_id, as_of=as_of, now=now)
    # Laid out again whatever the render cache holds: a re-render checks its bytes.
    return render_briefing(settings, version_id, as_of=as_of, target=target, now=now,
                           reuse=False)
