"""The only way the briefing reaches a file: the template folder, or a data: URL.

WeasyPrint would otherwise follow any URL in the HTML or CSS (file:///etc/passwd, http://...).
Ledger text is escaped before it reaches the HTML, so this is the second wall: whatever
slips through still cannot read a file or call out.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from weasyprint.urls import URLFetcher, URLFetcherResponse


class FetchRefused(ValueError):
    """A URL outside the template folder (or of another scheme) was asked for."""


class TemplateFetcher(URLFetcher):
    """Serves files under `root` and data: URLs; refuses everything else.

    Fails the render on any refused or missing resource (fail_on_errors): a template that
    asks for something it should not have is a bug to see, not a blank to print.
    """

    def __init__(self, root: Path) -> None:
        super().__init__(allowed_protocols=("file", "data"), allow_redirects=False,
                         fail_on_errors=True)
        self.root = root.resolve()

    def fetch(self, url: str, headers: dict[str, str] | None = None) -> URLFetcherResponse:
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme == "data":
            return super().fetch(url, headers)
        if scheme != "file":
            raise FetchRefused(f"refused {url!r}: the briefing reads only files under "
                               f"{self.root} and data: URLs")
        path = self.local_path(url)
        content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return URLFetcherResponse(url, path.read_bytes(), {"Content-Type": content_type})

    def local_path(self, url: str) -> Path:
        """The file a file: URL names, if it lies under the template folder (after .. and
        symbolic links are resolved); FetchRefused otherwise."""
        parts = urlsplit(url)
        if parts.netloc not in ("", "localhost"):
            raise FetchRefused(f"refused {url!r}: file URLs on another host")
        path = Path(url2pathname(unquote(parts.path))).resolve()
        if not path.is_relative_to(self.root):
            raise FetchRefused(f"refused {url!r}: outside the template folder {self.root}")
        if not path.is_file():
            raise FetchRefused(f"refused {url!r}: no such file in the template folder")
        return path
