"""`specledger ingest` on inference benchmark files: recognised by content whatever their name,
exit 1 with every rejected row as `file:line field: reason`, the points in the warehouse."""

from __future__ import annotations

import json
import shutil

import duckdb

from tests.support.shared_data import fixture_path

# A real InferenceX artifact, by its path in the shared folder (the project keeps no copy).
AGG = ("inferencex", "agg_bmk_kimik2.5_mi355x.json")


def test_an_undated_artifact_exits_1_saying_to_give_its_date(cli, tmp_path):
    path = tmp_path / "results.txt"  # any name: the content decides
    shutil.copyfile(fixture_path(*AGG), path)
    result = cli("ingest", str(path), "--no-publish")

    assert result.exit_code == 1
    assert f"{path}:52 as_of" in result.stderr and "--as-of" in result.stderr


def test_bad_rows_are_listed_and_the_good_points_reach_the_warehouse(cli, tmp_path):
    rows = json.loads(fixture_path(*AGG).read_text())
    rows[2]["output_tput_per_gpu"] = -1
    path = tmp_path / "agg_bmk.json"
    path.write_text(json.dumps(rows, indent=2))
    result = cli("ingest", str(path), "--as-of", "2026-06-01", "--json")

    assert result.exit_code == 1
    [report] = json.loads(result.stdout)["files"]
    assert (report["format"], report["read"], report["accepted"], report["rejected"]) == (
        "inferencex", 3, 2, 1)
    [error] = report["errors"]
    assert error["field"] == "output_tput_per_gpu" and 102 < error["line"] < 152
    warehouse = json.loads(result.stdout)["warehouse"]["path"]
    with duckdb.connect(warehouse, read_only=True) as con:
        assert con.execute("select concurrency from inference_point order by concurrency"
                           ).fetchall() == [(4,), (32,)]


def test_files_of_one_name_are_told_apart_by_their_folders():
    from pipelines.cli.app import distinct_names

    assert distinct_names(["/a/x/Server/run_1/log.txt", "/a/y/Offline/run_1/log.txt",
                           "/a/prices.csv"]) == ["Server/run_1/log.txt",
                                                 "Offline/run_1/log.txt", "prices.csv"]
    assert distinct_names(["/a/log.txt", "/a/log.txt"]) == ["/a/log.txt"] * 2
