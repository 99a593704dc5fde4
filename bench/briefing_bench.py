"""Briefing benchmark: each document rendered from a full-size context (the main briefing,
target <= 5 s; its appendix, target <= 15 s), and the whole briefing (context from the
ledger + both PDFs) after a big change.

The context is the report tests' fixture grown to the real ledger's size (the reference
packs give 224 values, 102 sources, 405 flags, 12 scenarios, 4 TCO comparisons): 230 values,
100 sources, 400 flags, 14 scenarios, every chart and table filled. The first render also
pays for imports and font loading; the figure reported is the median of the rest.

    python -m bench.briefing_bench [--repeat 5] [--values 230] [--flags 400]

With --change-rows N, a SQLite ledger gets two dataset versions through the public jobs: the
reference packs, then the same packs plus one generated CSV source with N observations of
existing GPU metrics on generated items. The second version's briefing is then built and
rendered in a child process, which reports its context and render seconds and its peak RSS
(a run that exceeds --max-gb of address space or --timeout seconds is reported as such).

    python -m bench.briefing_bench --change-rows 200000 [--items 4000]

(run from the repository root: the context comes from tests.support.contexts)
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from reports.briefing import chart_svgs, render, render_html
from tests.support.contexts import full_size_context

ROOT = Path(__file__).resolve().parents[1]

# Seconds per document: the main briefing, and its appendix of every value, flag and source.
TARGETS = {"briefing": 5.0, "appendix": 15.0}


def timed(call, repeat: int, clock=time.perf_counter) -> list[float]:
    times = []
    for _ in range(repeat):
        start = clock()
        call()
        times.append(clock() - start)
    return times


def pages(pdf: bytes) -> int:
    with tempfile.NamedTemporaryFile(suffix=".pdf") as file:
        file.write(pdf)
        file.flush()
        info = subprocess.run(["pdfinfo", file.name], capture_output=True, text=True,
                              check=True).stdout
    return int(next(line.split()[1] for line in info.splitlines() if line.startswith("Pages:")))


# The generated change: existing GPU metrics of the catalogue (canonical unit, value range).
CHANGE_METRICS = {
    "tdp": ("W", 200, 1500), "hbm_capacity": ("GB", 16, 288), "hbm_bandwidth": ("TB/s", 1, 8),
    "peak_dense_bf16": ("TFLOP/s", 100, 2500), "peak_dense_fp8": ("TFLOP/s", 200, 5000),
    "peak_fp32": ("TFLOP/s", 10, 80), "peak_fp64": ("TFLOP/s", 1, 80),
    "peak_int8": ("TOP/s", 200, 5000), "gpu_price": ("USD", 1000, 50000),
}
CHANGE_HEADER = ("source", "source_title", "source_kind", "source_published_on", "item",
                 "item_name", "item_kind", "metric", "value", "unit", "as_of", "status", "quote")
FIRST_CUTOFF = datetime(2026, 1, 5, 6, tzinfo=UTC)


def write_change_pack(path: Path, rows: int, items: int, seed: int = 20260112) -> None:
    """One source with `rows` observations of CHANGE_METRICS on `items` generated GPUs; each
    (item, metric) gets distinct as_of days, so every row is a new observation."""
    rng = random.Random(seed)
    metrics = sorted(CHANGE_METRICS)
    pairs = items * len(metrics)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CHANGE_HEADER)
        for n in range(rows):
            pair, repeat = n % pairs, n // pairs
            item_no, metric = divmod(pair, len(metrics))
            name = metrics[metric]
            unit, low, high = CHANGE_METRICS[name]
            as_of = date(2025, 12, 31) - timedelta(days=repeat)
            value = f"{rng.uniform(low, high):.4g}"
            writer.writerow(["bench-gpu-survey", "Generated GPU survey (briefing bench)",
                             "dataset", "2026-01-10", f"bench-gpu-{item_no:05d}",
                             f"Bench GPU {item_no}", "gpu", name, value, unit, as_of.isoformat(),
                             "S", f"{name} of bench GPU {item_no}: {value} {unit}"])


def change_bench(args: argparse.Namespace) -> None:
    """Two dataset versions (reference packs; + a generated change), then the second one's
    briefing in a child process with bounded memory and time."""
    from pipelines.jobs import steps as jobs
    from pipelines.settings import Settings

    with tempfile.TemporaryDirectory(prefix="specledger-briefing-bench-") as tmp:
        home = args.home or Path(tmp)    # --home: keep the ledger to profile it afterwards
        home.mkdir(parents=True, exist_ok=True)
        settings = Settings(home=home, database_url=None)
        pack = home / "change" / "bench-gpu-survey.csv"
        pack.parent.mkdir()
        write_change_pack(pack, args.change_rows, args.items)
        clock = iter([FIRST_CUTOFF + timedelta(seconds=n) for n in range(10_000)])
        start = time.perf_counter()
        first = jobs.update(settings, [settings.sources_dir], as_of=FIRST_CUTOFF.date(),
                            now=lambda: next(clock))
        first_s = time.perf_counter() - start
        clock = iter([FIRST_CUTOFF + timedelta(days=7, seconds=n) for n in range(10_000)])
        start = time.perf_counter()
        second = jobs.update(settings, [settings.sources_dir, pack.parent],
                             as_of=FIRST_CUTOFF.date() + timedelta(days=7),
                             now=lambda: next(clock))
        second_s = time.perf_counter() - start
        print(f"version {first.dataset_version}: reference packs ({first_s:.1f} s); version "
              f"{second.dataset_version}: + {second.ingest.total('accepted'):,} accepted, "
              f"{second.ingest.total('rejected'):,} rejected, {second.flags.stored:,} flags "
              f"stored ({second_s:.1f} s)")
        command = [sys.executable, "-m", "bench.briefing_bench", "--render-child", str(home),
                   str(second.dataset_version), (FIRST_CUTOFF.date() + timedelta(days=7))
                   .isoformat(), "--max-gb", str(args.max_gb)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                                  timeout=args.timeout)
        except subprocess.TimeoutExpired:
            print(f"briefing: did not finish within {args.timeout:.0f} s")
            return
        if done.returncode != 0:
            print(f"briefing failed (exit {done.returncode}, address space capped at "
                  f"{args.max_gb:g} GB): {done.stderr.strip().splitlines()[-1:]}")
            return
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"briefing of a {args.change_rows:,}-row change: "
              f"context {figures['context_s']:.1f} s, render {figures['render_s']:.1f} s, "
              f"{figures['pages']} pages, "
              f"{figures['bytes']:,} bytes, peak RSS {figures['peak_rss_mb']:,.0f} MB")


def render_child(home: Path, version_id: int, as_of: date, max_gb: float) -> None:
    """Build and render one briefing; print its figures as one JSON line."""
    limit = int(max_gb * (1 << 30))
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from db import queries
    from db.engine import Session
    from models.trends import TrendParams
    from pipelines.briefing.comparison import load_comparison
    from pipelines.briefing.context import BriefingInputs, briefing_context
    from pipelines.jobs import steps as jobs
    from pipelines.settings import Settings
    from reports.briefing import render

    settings = Settings(home=home, database_url=None)
    params = TrendParams(stale_after_days=settings.stale_after_days,
                          tolerance=settings.flag_tolerance,
                          result_tolerance=settings.result_tolerance,
                          nics_per_gpu=settings.nics_per_gpu)
    engine = jobs.connect_ledger(settings)
    start = time.perf_counter()
    with Session(engine) as session:
        context = briefing_context(
            session, as_of=as_of, version=queries.dataset_version(session, version_id),
            code_version="bench",
            inputs=BriefingInputs(params, load_comparison(settings.comparison_path)))
    context_s = time.perf_counter() - start
    start = time.perf_counter()
    rendered = [render(context, document=document) for document in TARGETS]
    render_s = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(json.dumps({"context_s": context_s, "render_s": render_s,
                                 "pages": " + ".join(str(r.pages) for r in rendered),
                                 "bytes": sum(len(r.pdf) for r in rendered),
                                 "peak_rss_mb": peak}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--values", type=int, default=230)
    parser.add_argument("--flags", type=int, default=400)
    parser.add_argument("--change-rows", type=int, default=0)
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--max-gb", type=float, default=8.0)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--home", type=Path, help="build the ledger here and keep it")
    parser.add_argument("--render-child", nargs=3, metavar=("HOME", "VERSION", "AS_OF"))
    args = parser.parse_args()
    if args.render_child:
        home, version, as_of = args.render_child
        render_child(Path(home), int(version), date.fromisoformat(as_of), args.max_gb)
        return
    if args.change_rows:
        change_bench(args)
        return
    context = full_size_context(specs_count=args.values, flags_count=args.flags)
    print(f"context: {len(context.specs)} values, {len(context.sources)} sources, "
          f"{len(context.flags)} flags, {len(context.scenarios)} scenarios")
    for document, target in TARGETS.items():
        document_bench(context, document, target, args.repeat)


def document_bench(context, document: str, target: float, repeat: int) -> None:
    """Render one document of the briefing: the first call, then the median of `repeat`."""
    def rendered() -> bytes:
        return render(context, document=document).pdf

    start = time.perf_counter()
    pdf = rendered()
    first = time.perf_counter() - start
    charts = statistics.median(timed(lambda: chart_svgs(context, document), repeat))
    html = statistics.median(timed(lambda: render_html(context, document=document), repeat))
    full = timed(rendered, repeat)
    median = statistics.median(full)
    # CPU time of this process: what the wall time would be on an idle machine (the render
    # is single-threaded), useful when other jobs share the CPUs.
    cpu = statistics.median(timed(rendered, repeat, time.process_time))
    print(f"{document}: {pages(pdf)} pages, {len(pdf):,} bytes; first render (imports, "
          f"fonts) {first:.2f} s; charts {charts:.2f} s, HTML with charts {html:.2f} s "
          f"(medians)")
    print(f"{document}: median {median:.2f} s, min {min(full):.2f} s wall over {repeat}; "
          f"median {cpu:.2f} s CPU (target <= {target:.0f} s: "
          f"{'met' if median <= target else 'MISSED'} on wall time)")

if __name__ == "__main__":
    main()
