"""A file with thousands of bad rows gets a summary line, not thousands of printed lines; every
row is still kept for `specledger review`."""

from __future__ import annotations

import json

from pipelines.cli.app import SHOWN_REJECTIONS

ROWS = 60


def pack(rows: int) -> str:
    observations = "\n".join(
        f"  - {{item: gpu-{i}, metric: tdp, value: not-a-number, unit: W, as_of: 2026-01-01, "
        "status: C}" for i in range(rows))
    items = "\n".join(f"  - {{key: gpu-{i}, name: GPU {i}, kind: gpu, vendor: V}}"
                      for i in range(rows))
    return (f"source: {{key: flood, title: A flood, kind: secondary_press, "
            f"published_on: 2026-01-01}}\nitems:\n{items}\nobservations:\n{observations}\n")


def test_a_flood_of_rejections_prints_a_summary_and_keeps_every_row(cli, tmp_path):
    path = tmp_path / "flood.yaml"
    path.write_text(pack(ROWS), encoding="utf-8")

    result = cli("ingest", str(path))

    shown = [line for line in result.output.splitlines() if line.startswith("rejected")]
    assert len(shown) == SHOWN_REJECTIONS + 1
    assert f"and {ROWS - SHOWN_REJECTIONS:,} more rejected rows" in shown[-1]
    assert "(most rejected fields: value (60))" in shown[-1]   # over all its rows
    review = json.loads(cli("review", "--json").stdout)
    assert len(review["rejected"]) == ROWS
