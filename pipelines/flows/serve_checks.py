"""What `specledger serve` checks before it serves the deployments: a Prefect server and a
valid schedule. The deployments themselves are declared in prefect.yaml (team) or built by
`serve` (one machine)."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

WEEKLY_CRON = "0 6 * * 1"  # Mondays 06:00 in --timezone (the same default as prefect.yaml)
NO_SERVER_HELP = (
    "[red]error[/] no Prefect server: PREFECT_API_URL is not set.\n"
    "A schedule needs a running Prefect server; Prefect's temporary in-process server (what "
    "`specledger run` uses) stops with the process and never starts scheduled runs.\n"
    "Start one (`prefect server start`, or `docker compose up`) and point at it, e.g.\n"
    "  PREFECT_API_URL=http://127.0.0.1:4200/api specledger serve")


def prefect_api_url() -> str | None:
    """The Prefect server this process talks to (environment or Prefect profile), if any."""
    from prefect.settings import PREFECT_API_URL

    return PREFECT_API_URL.value() or None


def schedule_timezone(name: str) -> ZoneInfo:
    """The time zone a schedule is read in; a clear error for a name that is not one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. UTC, Europe/Paris)") from exc
