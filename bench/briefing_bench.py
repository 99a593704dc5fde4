"""Briefing benchmark: render_pdf on a full-size context (target <= 5 s).

The context is the report tests' fixture grown to the real ledger's size (the reference
packs give 224 values, 102 sources, 405 flags, 12 scenarios, 4 TCO comparisons): 230 values,
100 sources, 400 flags, 14 scenarios, every chart and table filled. The first render also
pays for imports and font loading; the figure reported is the median of the rest.

    python bench/briefing_bench.py [--repeat 5] [--values 230] [--flags 400]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # for tests.reports.contexts

from reports.briefing import chart_svgs, render_html, render_pdf  # noqa: E402
from tests.reports.contexts import full_size_context  # noqa: E402

TARGET_SECONDS = 5.0


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--values", type=int, default=230)
    parser.add_argument("--flags", type=int, default=400)
    args = parser.parse_args()
    context = full_size_context(specs_count=args.values, flags_count=args.flags)
    start = time.perf_counter()
    pdf = render_pdf(context)
    first = time.perf_counter() - start
    charts = statistics.median(timed(lambda: chart_svgs(context), args.repeat))
    html = statistics.median(timed(lambda: render_html(context), args.repeat))
    full = timed(lambda: render_pdf(context), args.repeat)
    median = statistics.median(full)
    # CPU time of this process: what the wall time would be on an idle machine (the render
    # is single-threaded), useful when other jobs share the CPUs.
    cpu = statistics.median(timed(lambda: render_pdf(context), args.repeat, time.process_time))
    print(f"context: {len(context.specs)} values, {len(context.sources)} sources, "
          f"{len(context.flags)} flags, {len(context.scenarios)} scenarios")
    print(f"PDF: {pages(pdf)} pages, {len(pdf):,} bytes")
    print(f"first render (imports, fonts): {first:.2f} s")
    print(f"charts: {charts:.2f} s, HTML with charts: {html:.2f} s (medians)")
    print(f"render_pdf: median {median:.2f} s, min {min(full):.2f} s wall over {args.repeat}; "
          f"median {cpu:.2f} s CPU (target <= {TARGET_SECONDS:.0f} s: "
          f"{'met' if median <= TARGET_SECONDS else 'MISSED'} on wall time)")


if __name__ == "__main__":
    main()
