"""nccl-tests output: the text of `all_reduce_perf` and the other `*_perf` binaries, in every
layout in circulation, and the `-J` JSON.

Each results table is one run: a MeasurementRun of NcclPoints, one per message size, with what the
lines around the table say about it (command, parameters, rank -> host -> device map, NCCL
version, footer). A log of several runs (concatenated logs, a script running one binary after
another) gives several runs.

Columns are read by the header's names, never by position: the legacy header (before 2022-08)
differs by collective and has an `error` float instead of `#wrong`; `-C 1` renames `time` to
`cputime`; `-S 1` adds a timestamp; per-iteration mode adds `i_*` columns. Launcher labels
(OpenMPI `[1,0]<stdout>:`, Intel MPI `[0] `, Slurm `0: `) are stripped first. Lines that are not
results (NCCL INFO/WARN, device listings, comments) are counted as skipped; a results line that is
cut short or garbled is a Rejected naming the column that failed.

Each run also gives one candidate observation, `busbw_measured`: the peak bus bandwidth (GB/s,
1e9 B/s, as reported) among the large messages (sizes >= the largest / 16). Bus bandwidth measures
a fabric, so the row names a fabric item: the one given with --item, else the NVLink generation of
a single-node run's GPUs. A multi-node run measures a scale-out network the file never names, so
without --item its summary is rejected with the reason, as is a run with no date and no --as-of.

The package, one job a module: dispatch (detect, parse), text_reader (the text layouts, line by
line) with header (which column is which) and rows (one results line), text_runs (a text table
as a run), json_output (the -J JSON), summary (the item and the busbw_measured row) and common
(what those share).
"""

from pipelines.inputs.adapters.nccl_tests.common import FORMAT
from pipelines.inputs.adapters.nccl_tests.dispatch import detect, parse
from pipelines.inputs.adapters.nccl_tests.summary import LARGE_MESSAGE_FRACTION, METRIC, UNIT

__all__ = ["FORMAT", "LARGE_MESSAGE_FRACTION", "METRIC", "UNIT", "detect", "parse"]
