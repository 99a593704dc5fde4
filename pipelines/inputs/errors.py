"""The one error type every reader raises for a file it cannot use: where, which field, why."""

from __future__ import annotations


class InputError(ValueError):
    """`path:line field: reason`; path and line are left out when unknown.

    Packs and adapters (PackError), scenario files (ScenarioError) and remote-source
    declarations (RemoteSourceError) raise subclasses, so a caller catches this one type."""

    def __init__(self, path: str | None, line: int | None, field: str, reason: str) -> None:
        where = (f"{path}:{line}" if line else path) if path else (
            f"line {line}" if line else "")
        message = f"{where} {field}: {reason}" if where else f"{field}: {reason}"
        super().__init__(message)
        self.path, self.line, self.field, self.reason = path, line, field, reason
