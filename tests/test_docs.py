"""The documentation ships with the project and nothing shipped points outside it.

Every file the project ships (tracked by git, or new and not ignored) must cite docs/ rather
than notes that live outside the repository; every relative link in README.md and docs/*.md
must reach a file (and a heading, when it names an anchor on a docs page); every
`docs/<page>.md#<anchor>` a file cites must name a heading that exists, so code can cite a
section and the citation cannot silently rot. README.md is an entry, not a manual: at most
250 lines, the two commands, a picture of page 1, links into docs/. And docs/ builds as a
strict MkDocs site (mkdocs.yml), so a link MkDocs cannot resolve fails here too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
THIS_FILE = Path(__file__).resolve()
README_MAX_LINES = 250

# Notes outside the repository that shipped files used to cite.
OUTSIDE = ("shared/reference", "../shared")
OUTSIDE_NAMES = re.compile(r"(perf_model|cost_facts|spec_facts|versioning|formats)\.md")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CITATION = re.compile(r"(?<![/\w.])docs/([\w-]+\.md)(?:#([\w-]+))?")  # not a URL's path


@cache
def shipped_files() -> tuple[Path, ...]:
    """Files git tracks, plus new files it does not ignore (they ship once committed)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the shipped files are unknown")
    paths = (ROOT / name for name in listed.decode("utf-8").split("\0") if name)
    return tuple(p for p in paths if p.is_file() and p.resolve() != THIS_FILE)


def text_of(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="ignore")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", FENCE.sub("", text_of(page)), re.M)
    seen: dict[str, int] = {}
    found = set()
    for heading in headings:
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return frozenset(found)


def markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


# Every page of the site: the home page (MkDocs's index.md; a docs/README.md would be a second
# index), the pages for users, those on how it works, and development.
PAGES = ("index.md", "getting-started.md", "cli.md", "scenarios.md", "briefing.md",
         "source-packs.md", "files-you-have.md", "analysts.md", "deploy.md", "configuration.md",
         "architecture.md", "clocks.md", "c2c-method.md", "tco-method.md", "serving-method.md",
         "warehouse.md", "warehouse-reference.md", "development.md")


def test_the_documentation_pages_exist():
    for name in PAGES:
        assert (DOCS / name).is_file(), f"docs/{name} is missing"
    assert not (DOCS / "README.md").exists(), "docs/README.md would be a second MkDocs index"


def test_every_page_is_in_the_sites_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = set(re.findall(r":\s*([\w-]+\.md)\s*$", nav, re.M))
    assert listed == {p.name for p in DOCS.glob("*.md")}, "mkdocs.yml's nav lists every page"


def test_no_shipped_file_points_outside_the_repository():
    found = []
    for path in shipped_files():
        for number, line in enumerate(text_of(path).splitlines(), start=1):
            where = f"{path.relative_to(ROOT)}:{number}"
            found += [f"{where}: {marker}" for marker in OUTSIDE if marker in line]
            found += [f"{where}: {m.group(0)}" for m in OUTSIDE_NAMES.finditer(line)
                      if line[max(m.start() - 5, 0):m.start()] != "docs/"]  # a docs link
    assert not found, "cite docs/ instead of notes outside the repository:\n" + "\n".join(found)


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file(page):
    broken = []
    for target in LINK.findall(FENCE.sub("", text_of(page))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or an anchor on the page itself
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve()
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and resolved.parent == DOCS \
                and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_docs_pages_link_to_their_own_headings():
    broken = [f"docs/{page.name}: #{target[1:]}" for page in sorted(DOCS.glob("*.md"))
              for target in LINK.findall(FENCE.sub("", text_of(page)))
              if target.startswith("#") and target[1:] not in anchors(page)]
    assert not broken, "no such heading:\n" + "\n".join(broken)


def test_every_cited_docs_section_exists():
    """`docs/c2c-method.md#defaults` in a docstring, a comment or a printed string."""
    broken = []
    for path in shipped_files():
        for page, anchor in CITATION.findall(text_of(path)):
            target = DOCS / page
            if not target.is_file():
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} does not exist")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} has no #{anchor}")
    assert not broken, "\n".join(broken)


def test_the_slug_matches_githubs():
    assert slug("The analyst warehouse: `warehouse.duckdb`") == \
        "the-analyst-warehouse-warehouseduckdb"
    assert slug("Calibration and error") == "calibration-and-error"
    assert slug('"Valid on D, as known at T"') == "valid-on-d-as-known-at-t"


def test_the_readme_is_an_entry():
    """An entry, not a manual: short, the two commands, a picture of page 1, links into docs/."""
    text = text_of(README)
    lines = text.count("\n") + (not text.endswith("\n"))
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES})"
    commands = "\n".join(re.findall(r"^```sh\n(.*?)^```", text, re.S | re.M))
    for command in ("./dev run", "./dev test"):
        assert re.search(rf"^{re.escape(command)}\b", commands, re.M), \
            f"README.md shows `{command}` in a sh block"
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert "docs/images/page1.png" in images, "README.md shows page 1 (docs/images/page1.png)"
    assert (ROOT / "docs" / "images" / "page1.png").is_file()
    linked = {target.partition("#")[0] for target in LINK.findall(FENCE.sub("", text))}
    pages = {f"docs/{p.name}" for p in DOCS.glob("*.md")}
    assert pages <= linked, f"README.md links every docs page; missing: {sorted(pages - linked)}"


def test_the_docs_build_as_a_strict_site(tmp_path):
    """`mkdocs build --strict` fails on a link or anchor MkDocs cannot resolve, a page missing
    from the nav, or a link out of docs/ (a file elsewhere is named as code, not linked)."""
    mkdocs = Path(sys.executable).parent / "mkdocs"
    if not mkdocs.exists():
        pytest.skip(f"no mkdocs beside {sys.executable}")
    # Not --quiet: it drops the warnings that --strict counts, and the build then passes.
    done = subprocess.run([str(mkdocs), "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
