"""The main job as a Prefect flow, end to end on the embedded default (SQLite + files)."""

from __future__ import annotations

import http.server
import json
import subprocess
import textwrap
import threading
from datetime import UTC, date, datetime

import duckdb
import pytest
from prefect import get_client
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

from pipelines.flows import weekly_briefing as flow_module
from pipelines.flows.artifacts import REJECTED_KEY, SUMMARY_KEY
from pipelines.flows.weekly_briefing import weekly_briefing
from tests.conftest import NVLINK_PACK
from tests.support.shipped_week import Clock

pytestmark = pytest.mark.slow(seconds=20)



BAD_ROW_PACK = NVLINK_PACK.replace("observations:\n", """observations:
  - {item: nvlink-5, metric: scaleup_bw_per_gpu_bidir, value: -5, unit: GB/s, as_of: 2024-03-18,
     status: S}
""", 1)


def artifacts_of(flow_run_id) -> dict[str, object]:
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id])))
    return {a.key: a for a in found}


# One flow run (seconds of rendering) checked for both: what it ingested, published and
# rendered, and the summary and rejected rows it left for the Prefect UI.
def test_the_flow_ingests_publishes_renders_and_leaves_a_summary_and_its_rejected_rows(
        prefect_harness, tmp_path, write_pack, monkeypatch):
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    sources = write_pack("nvlink.yaml", BAD_ROW_PACK).parent
    state = weekly_briefing(as_of=date(2026, 11, 22), home=tmp_path / "home",
                            sources_dir=sources, return_state=True)
    result = state.result()

    assert result.ingest.total("accepted") == 2
    assert result.warehouse == tmp_path / "home" / "warehouse.duckdb"
    con = duckdb.connect(str(result.warehouse), read_only=True)
    assert con.execute("select dataset_version from meta").fetchall() == [
        (result.ingest.dataset_version,)]
    con.close()
    assert result.briefing.name == "briefing-2026-11-22.pdf"
    appendix = result.briefing.with_name("briefing-2026-11-22-appendix.pdf")
    text = subprocess.run(["pdftotext", "-layout", str(appendix), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "NVIDIA NVLink and NVLink Switch" in text and "1,800" in text   # sources, values

    artifacts = artifacts_of(state.state_details.flow_run_id)
    assert set(artifacts) == {SUMMARY_KEY, REJECTED_KEY}
    summary = artifacts[SUMMARY_KEY].data
    assert f"dataset version {result.ingest.dataset_version}" in summary
    assert "| nvlink.yaml | ingested | 3 | 2 | 0 | 1 |" in summary
    assert str(result.briefing) in summary and str(result.warehouse) in summary
    assert "took the ledger's write lock at once" in summary
    assert "flags on this version" in summary
    table = artifacts[REJECTED_KEY].data
    table = json.loads(table) if isinstance(table, str) else table
    assert table["file"] == ["nvlink.yaml"] and table["field"] == ["value"]
    assert table["verdict"] == ["new"]

    again = weekly_briefing(as_of=date(2026, 11, 22), home=tmp_path / "home",
                            sources_dir=sources)
    assert again.ingest.dataset_version == result.ingest.dataset_version
    assert again.ingest.files[0].outcome == "unchanged_file"


class PackServer:
    """A real HTTP server on 127.0.0.1 serving one pack, that can be told to fail."""

    def __init__(self, body: bytes) -> None:
        self.body, self.failing = body, False
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if outer.failing:
                    self.send_error(503, "down for maintenance")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(outer.body)))
                self.end_headers()
                self.wfile.write(outer.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/team/nvlink.yaml"


def test_a_source_declared_by_url_is_fetched_and_ingested_and_once_down_reported_stale(
        prefect_harness, tmp_path, monkeypatch):
    server = PackServer(textwrap.dedent(NVLINK_PACK).lstrip().encode())
    declared = tmp_path / "remote_sources.yaml"
    declared.write_text(f"sources:\n  - name: team-nvlink\n    url: {server.url}\n"
                        "    local: true\n")  # the test server listens on 127.0.0.1
    monkeypatch.delenv("SPECLEDGER_DATABASE_URL", raising=False)
    for name, value in {"REMOTE_SOURCES_PATH": declared, "FETCH_RETRIES": 0,
                        "FETCH_TIMEOUT_SECONDS": 5, "OFFLINE": "false"}.items():
        monkeypatch.setenv(f"SPECLEDGER_{name}", str(value))
    empty = tmp_path / "no-local-packs"
    empty.mkdir()
    try:
        # Each run on its briefing's morning (the first on the flow_clock's): the fetch it
        # logs is known as of that day, whatever the real date.
        first = weekly_briefing(as_of=date(2026, 11, 22), home=tmp_path / "home",
                                sources_dir=empty)
        server.failing = True
        monkeypatch.setattr(flow_module, "clock", Clock(datetime(2026, 11, 29, 6, tzinfo=UTC)))
        state = weekly_briefing(as_of=date(2026, 11, 29), home=tmp_path / "home",
                                sources_dir=empty, return_state=True)
    finally:
        server.server.shutdown()

    [fetched] = first.remote.sources
    assert (fetched.outcome, first.ingest.total("accepted")) == ("fetched", 2)
    later = state.result()
    assert later.remote.sources[0].outcome == "failed"
    assert later.ingest.dataset_version == first.ingest.dataset_version  # last copy stands
    summary = artifacts_of(state.state_details.flow_run_id)[SUMMARY_KEY].data
    assert "| team-nvlink | failed | 503 | 1 |" in summary
    assert "1 remote sources could not be fetched" in summary
    text = subprocess.run(["pdftotext", "-layout", str(later.briefing), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert "Stale remote source: team-nvlink could not be fetched" in " ".join(text.split())
