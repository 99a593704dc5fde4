"""Remote-source declarations (data/remote_sources.yaml): which files to fetch by URL.

Reading the declaration file only; fetching is pipelines/fetch/remote.py. Every error names the
file, the line and the field, as every reader's errors do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx

from pipelines.inputs.errors import InputError
from pipelines.inputs.scenarios import read_lined_file
from pipelines.inputs.yaml_lines import (
    LINES,
)

ALLOWED_KEYS = ("name", "url", "file_name", "local", "paging", "max_pages", "gpuhunt")
# gpuhunt's own default for GPUHUNT_CATALOG_URL (gpuhunt._internal.catalog.CATALOG_URL, 0.1.34):
# every provider's catalog is published under {base}/{provider}/.
GPUHUNT_CATALOG_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com/v3"
# The providers gpuhunt publishes offline catalogs for (gpuhunt's OFFLINE_PROVIDERS, 0.1.34);
# the others it queries live, with each provider's API key.
GPUHUNT_PROVIDERS = ("aws", "azure", "verda", "gcp", "lambdalabs", "nebius", "oci", "runpod",
                     "cloudrift")
# What the fetch keeps a catalog as: dated by its publication once fetched (the catalog reader
# reads the provider and the date from the name).
GPUHUNT_FILE_NAME = "gpuhunt-{provider}-{date}.zip"
# How a paged API links its pages: Azure's Retail Prices API ends each page with NextPageLink.
PAGING = ("next_link",)
DEFAULT_MAX_PAGES, MAX_PAGES = 100, 10_000
# Sane lengths for what the ledger's remote_fetch log keeps: a longer name or URL is a
# declaration error.
MAX_NAME, MAX_URL = 200, 2000


class RemoteSourceError(InputError):
    """The declaration file cannot be used; says where and what (`path:line field: reason`,
    as a scenario file's errors do)."""


@dataclass(frozen=True)
class RemoteSource:
    name: str
    url: str          # as declared: may hold credentials, never printed or stored as is
    file_name: str    # what the ingest sees (it picks the reader)
    line: int | None = None
    local: bool = False  # may reach loopback, link-local and private addresses
    paging: str | None = None  # "next_link": follow each page's NextPageLink, join the pages
    max_pages: int = DEFAULT_MAX_PAGES
    # A gpuhunt provider: `url` is its folder ({base}/{provider}); the fetch reads its
    # `version`, then fetches {url}/{version}/catalog.zip.
    gpuhunt: str | None = None

    @property
    def host(self) -> str:
        """The host it is fetched from (a run that cannot reach a host tries it once)."""
        return urlsplit(self.url).hostname or ""


# --- declarations -----------------------------------------------------------------------------

def load_remote_sources(path: Path, gpuhunt_catalog_url: str | None = None
                        ) -> list[RemoteSource]:
    """The sources a declaration file lists; a missing file lists none. A gpuhunt source
    without a URL is read from `gpuhunt_catalog_url` (GPUHUNT_CATALOG_URL, gpuhunt's own
    setting: a mirror, which may be on the LAN) or gpuhunt's public bucket."""
    if not path.exists():
        return []
    shown = str(path)
    document = read_lined_file(path, RemoteSourceError)
    if document is None:
        return []
    if not isinstance(document, dict) or not isinstance(document.get("sources") or [], list):
        raise RemoteSourceError(shown, 1, "sources", "expected `sources:` with a list of "
                                                     "{name, url, file_name}")
    sources: list[RemoteSource] = []
    for number, entry in enumerate(document.get("sources") or [], start=1):
        source = _source(shown, number, entry, document[LINES].get("sources"),
                         gpuhunt_catalog_url)
        if any(s.name == source.name for s in sources):
            raise RemoteSourceError(shown, source.line, f"sources[{number}].name",
                                    f"{source.name!r} is declared twice; names must be unique")
        sources.append(source)
    return sources


def _source(path: str, number: int, entry: Any, list_line: int | None,
            gpuhunt_catalog_url: str | None = None) -> RemoteSource:
    where = f"sources[{number}]"
    if not isinstance(entry, dict):
        raise RemoteSourceError(path, list_line, where, "expected a mapping with name and url")
    lines = entry[LINES]

    def fail(key: str, reason: str) -> RemoteSourceError:
        return RemoteSourceError(path, lines.get(key) or lines[""], f"{where}.{key}", reason)

    for key in entry:
        if key != LINES and key not in ALLOWED_KEYS:
            raise fail(str(key), f"unknown field; expected {', '.join(ALLOWED_KEYS)}")
    provider = entry.get("gpuhunt")
    if provider is not None and provider not in GPUHUNT_PROVIDERS:
        raise fail("gpuhunt", f"{provider!r} is not a provider gpuhunt publishes a catalog "
                              f"for ({', '.join(GPUHUNT_PROVIDERS)})")
    mirror = False
    if provider is not None and entry.get("url") is None:
        mirror = bool(gpuhunt_catalog_url)
        entry = {**entry, "url": f"{(gpuhunt_catalog_url or GPUHUNT_CATALOG_URL).rstrip('/')}"
                                 f"/{provider}"}
        if entry.get("file_name") is None:
            entry["file_name"] = GPUHUNT_FILE_NAME.replace("{provider}", provider)
    for key in ("name", "url"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise fail(key, "required, a non-empty string")
    name, url = entry["name"].strip(), entry["url"].strip()
    if len(name) > MAX_NAME:
        raise fail("name", f"longer than {MAX_NAME} characters")
    if len(without_userinfo(url)) > MAX_URL:
        raise fail("url", f"longer than {MAX_URL} characters")
    if not _http_url(url):
        raise fail("url", f"{without_userinfo(url)!r} is not an http:// or https:// URL "
                          "with a host")
    local = entry.get("local", mirror)  # a mirror the user points gpuhunt at may be local
    if not isinstance(local, bool):
        raise fail("local", f"{local!r} is not true or false")
    file_name = entry.get("file_name")
    if file_name is None:
        file_name = default_file_name(url)
        if not file_name:
            raise fail("url", "its path has no file name to read it by; give file_name")
    if not isinstance(file_name, str) or not _plain_name(file_name):
        raise fail("file_name", f"{file_name!r} is not a plain file name (no folders)")
    paging = entry.get("paging")
    if paging is not None and paging not in PAGING:
        raise fail("paging", f"{paging!r} is not one of {', '.join(PAGING)}")
    max_pages = entry.get("max_pages", DEFAULT_MAX_PAGES)
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or not (
            1 <= max_pages <= MAX_PAGES):
        raise fail("max_pages", f"{max_pages!r} is not a whole number from 1 to {MAX_PAGES}")
    if provider is not None and "{date}" not in file_name:
        raise fail("file_name", "a gpuhunt catalog's file name needs {date}: the catalog's "
                                "publication date goes there")
    return RemoteSource(name, url, file_name, lines[""], local, paging, max_pages, provider)


def _http_url(url: str) -> bool:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError):  # a bad port, a space in the host, ...
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host)


def _plain_name(name: str) -> bool:
    return bool(name.strip()) and name not in (".", "..") and not any(c in name for c in "/\\\0")



# --- URL helpers ---------------------------------------------------------------------------------

def without_userinfo(url: str) -> str:
    """The URL without its user:password@ part (the rest kept as declared)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def default_file_name(url: str) -> str:
    """The URL path's last segment, percent-decoded ("" when the path ends in a folder)."""
    return unquote(PurePosixPath(urlsplit(url).path).name) if not url.endswith("/") else ""
