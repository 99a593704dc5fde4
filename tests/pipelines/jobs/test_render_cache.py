"""The render cache: documents kept by the digest of what they were laid out from, read back
only when every file matches its record, the newest few kept, never an error of the run."""

from __future__ import annotations

import json
import os

from pipelines.jobs.render_cache import KEEP, Entry, keep_entry, read_entry, render_key
from reports.briefing import RenderedPdf

ENTRY = Entry(RenderedPdf(b"%PDF-1.7 main", 12), b"%PDF-1.7 appendix")


def test_the_key_changes_with_either_document_or_the_layout():
    key = render_key(("<main>", "<appendix>"), "layout-1")
    assert key == render_key(("<main>", "<appendix>"), "layout-1")
    assert len({key, render_key(("<main>!", "<appendix>"), "layout-1"),
                render_key(("<main>", "<appendix>!"), "layout-1"),
                render_key(("<main>", "<appendix>"), "layout-2"),
                # where one document ends counts: the same characters split otherwise
                render_key(("<main><", "appendix>"), "layout-1")}) == 5


def test_kept_documents_come_back_with_their_page_count(tmp_path):
    keep_entry(tmp_path / "cache", "k1", ENTRY)
    assert read_entry(tmp_path / "cache", "k1") == ENTRY
    assert read_entry(tmp_path / "cache", "k2") is None
    assert not list((tmp_path / "cache").glob(".*.partial"))


def test_an_entry_whose_files_do_not_match_its_record_is_ignored(tmp_path):
    keep_entry(tmp_path, "k", ENTRY)
    (tmp_path / "k-appendix.pdf").write_bytes(b"%PDF-1.7 other")
    assert read_entry(tmp_path, "k") is None
    keep_entry(tmp_path, "j", ENTRY)
    (tmp_path / "j.json").write_text("{not json")
    assert read_entry(tmp_path, "j") is None
    keep_entry(tmp_path, "i", ENTRY)
    (tmp_path / "i.pdf").unlink()
    assert read_entry(tmp_path, "i") is None


def test_only_the_newest_entries_are_kept(tmp_path):
    for n in range(KEEP + 2):
        keep_entry(tmp_path, f"k{n}", ENTRY)
        record = tmp_path / f"k{n}.json"
        os.utime(record, (1_000_000 + n, 1_000_000 + n))  # a clock that always moves on
    records = sorted(p.stem for p in tmp_path.glob("*.json"))
    assert records == sorted(f"k{n}" for n in range(2, KEEP + 2))
    assert len(list(tmp_path.glob("*.pdf"))) == 2 * KEEP
    assert json.loads((tmp_path / f"k{KEEP + 1}.json").read_text())["pages"] == 12


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    keep_entry(blocked / "cache", "k", ENTRY)  # returns: the run has its documents
    assert read_entry(blocked / "cache", "k") is None


def test_an_entry_that_cannot_be_written_whole_leaves_nothing(tmp_path, monkeypatch):
    from pipelines.jobs import render_cache

    written = []

    def fail_on_the_record(path, data):
        if path.suffix == ".json":
            raise OSError(28, "No space left on device")
        path.write_bytes(data)
        written.append(path)
    monkeypatch.setattr(render_cache, "_write", fail_on_the_record)
    keep_entry(tmp_path, "k", ENTRY)
    assert written and not [p for p in tmp_path.iterdir() if p.is_file()]
