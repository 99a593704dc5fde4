"""`specledger export`: the folder is taken as written (no `~` expanded), files already there
are refused unless --force, each file is written whole (no temporary file left), the views
(current_value) are exported too, and pandas reads the Parquet files in the project's own
environment."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from db.warehouse_export import ExportExists, export_warehouse
from tests.db.test_marts import published  # noqa: F401 - the fixture


def test_a_tilde_is_a_folder_name_never_the_home_folder(published, tmp_path,  # noqa: F811
                                                        monkeypatch):
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    written = export_warehouse(published, Path("~/exp"))
    assert list(home.iterdir()) == []
    assert {w.path.parent for w in written} == {work / "~" / "exp"}
    assert (work / "~" / "exp" / "observation.parquet").is_file()


def test_files_already_there_are_refused_unless_forced(published, tmp_path):  # noqa: F811
    folder = tmp_path / "export"
    folder.mkdir()
    theirs = folder / "observation.parquet"
    theirs.write_bytes(b"someone's own file")
    with pytest.raises(ExportExists) as refused:
        export_warehouse(published, folder)
    assert refused.value.paths == [theirs]
    assert [p.name for p in folder.iterdir()] == ["observation.parquet"]  # nothing written
    assert theirs.read_bytes() == b"someone's own file"

    written = export_warehouse(published, folder, force=True)
    assert sorted(p.name for p in folder.iterdir()) == sorted(w.path.name for w in written)
    assert pd.read_parquet(theirs).shape[0] == next(
        w.rows for w in written if w.table == "observation")


def test_the_views_are_exported_and_pandas_reads_every_file(published, tmp_path):  # noqa: F811
    written = {w.table: w for w in export_warehouse(published, tmp_path / "export")}
    assert {"current_value", "c2c_latest", "tco_latest"} <= set(written)
    for name, w in written.items():
        frame = pd.read_parquet(w.path)
        assert len(frame) == w.rows, name
    current = pd.read_parquet(written["current_value"].path)
    assert {"item", "metric", "value", "source"} <= set(current.columns)
    assert len(current) > 0
