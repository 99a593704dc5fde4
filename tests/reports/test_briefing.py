"""The briefing PDF: opens, lists every spec with its source and date, same bytes each time."""

from __future__ import annotations

import re
import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from reports.briefing import (
    BriefingContext,
    SourceLine,
    SpecLine,
    format_number,
    render_html,
    render_pdf,
)

NVLINK = SpecLine(section="Scale-up fabric", item="NVLink 5.0", metric="scaleup_bw_per_gpu_bidir",
                  metric_description="per-GPU NVLink bandwidth", low=1800, high=1800,
                  unit="GB/s", as_of=date(2024, 3, 18), as_of_precision="day", status="C",
                  source_key="nvidia-nvlink-page", source_title="NVIDIA NVLink page",
                  source_published_on=date(2024, 3, 18))
RACK = SpecLine(section="Systems", item="GB200 NVL72", metric="rack_it_power",
                metric_description="rack IT power", low=120, high=132, unit="kW",
                as_of=date(2024, 3, 1), as_of_precision="month", status="S",
                source_key="introl", source_title="Introl GB200 guide", source_published_on=None,
                alternatives=2)
CONTEXT = BriefingContext(
    as_of=date(2026, 11, 22), dataset_version=7, dataset_hash="ab" * 32,
    cutoff_at=datetime(2026, 11, 22, 6, 0, tzinfo=UTC), code_version="0.1.0",
    specs=[NVLINK, RACK],
    sources=[SourceLine("nvidia-nvlink-page", "NVIDIA NVLink page", "NVIDIA", "vendor_datasheet",
                        date(2024, 3, 18), "https://www.nvidia.com/en-us/data-center/nvlink/"),
             SourceLine("introl", "Introl GB200 guide", "Introl", "secondary_press", None, None)])


@pytest.fixture(scope="module")
def pdf(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("briefing") / "briefing.pdf"
    path.write_bytes(render_pdf(CONTEXT))
    return path


def pdftotext(path: Path) -> str:
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout


def test_the_cover_names_the_date_and_dataset_version(pdf):
    text = pdftotext(pdf)
    assert "as of 2026-11-22" in text
    assert "Dataset version" in text and "7 · abababababab" in text


def test_every_spec_prints_with_its_value_source_and_date(pdf):
    lines = pdftotext(pdf).splitlines()
    nvlink = next(line for line in lines if "NVLink 5.0" in line)
    assert all(part in nvlink for part in ("1,800", "GB/s", "2024-03-18", "NVIDIA NVLink page"))
    rack = next(line for line in lines if "GB200 NVL72" in line)
    assert all(part in rack for part in ("120–132", "kW", "2024-03", "Introl GB200 guide"))
    # The publication date wraps under the source title.
    assert "(undated)" in lines[lines.index(rack) + 1]


def test_the_appendix_lists_every_source_with_its_date(pdf):
    text = pdftotext(pdf)
    appendix = text[text.index("Appendix: sources"):]
    assert "nvidia-nvlink-page" in appendix and "2024-03-18" in appendix
    assert "https://www.nvidia.com/en-us/data-center/nvlink/" in appendix
    assert "introl" in appendix


def test_pages_are_a4_with_numbers(pdf):
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True,
                          check=True).stdout
    assert re.search(r"Pages:\s+3\n", info)
    assert "595.276 x 841.89 pts (A4)" in info
    assert re.search(r"\b2\s*/\s*3\b", pdftotext(pdf))


def test_the_same_context_gives_the_same_bytes(pdf):
    assert render_pdf(CONTEXT) == pdf.read_bytes()


def test_the_template_fetches_nothing_outside_the_project():
    html = render_html(CONTEXT)
    assert "http" not in html.replace("https://www.nvidia.com/en-us/data-center/nvlink/", "")


@pytest.mark.parametrize(("value", "shown"), [
    (1800.0000000000002, "1,800"), (0.0806, "0.0806"), (51.2, "51.2"), (218_400_000, "218,400,000"),
    (0, "0"), (1.5e-5, "1.5e-05"),
])
def test_numbers_print_without_float_noise(value, shown):
    assert format_number(value) == shown
