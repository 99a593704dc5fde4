"""Settings refuse values no run could use, with a message that names the variable."""

import pytest
from pydantic import ValidationError

from pipelines.cli.app import settings_problem
from pipelines.inputs.limits import InputLimits
from pipelines.settings import Settings


@pytest.mark.parametrize(("name", "value"), [
    ("FETCH_TIMEOUT_SECONDS", "nan"), ("FETCH_TIMEOUT_SECONDS", "0"),
    ("LOCK_TIMEOUT_SECONDS", "inf"), ("MAX_FILE_BYTES", "-1"), ("SWEEP_MAX_LAYOUTS", "0"),
    ("SMTP_PORT", "0"), ("SMTP_SECURITY", "tls"), ("DELIVERY_RETRY_DELAY_SECONDS", "-1"),
])
def test_a_setting_out_of_range_is_refused_by_name(monkeypatch, name, value):
    monkeypatch.setenv(f"SPECLEDGER_{name}", value)
    with pytest.raises(ValidationError) as refused:
        Settings()
    assert settings_problem(refused.value).startswith(f"invalid setting SPECLEDGER_{name}=")


@pytest.mark.parametrize(("name", "value", "bound"), [
    ("LOCK_TIMEOUT_SECONDS", "3000000", "2147483"),      # PostgreSQL's lock_timeout range
    ("MARKET_MAX_AGE_DAYS", "99999999999", "36500"),     # past timedelta's days
    ("STALE_AFTER_DAYS", "0", "1"), ("FETCH_RETRIES", "1000000", "100"),
    ("LEDGER_RETRY_DELAY_SECONDS", "1e300", "86400"), ("FLAG_TOLERANCE", "nan", "finite"),
    ("NICS_PER_GPU", "0", "0"),
])
def test_a_setting_past_what_the_run_can_use_says_its_range(monkeypatch, name, value, bound):
    """Issue 43, case 5: a setting the database or the run cannot take (a lock timeout past
    PostgreSQL's integer range was accepted, then failed every write) is refused when the
    settings are read, naming the variable and the bound it passed."""
    monkeypatch.setenv(f"SPECLEDGER_{name}", value)
    with pytest.raises(ValidationError) as refused:
        Settings()
    said = settings_problem(refused.value)
    assert said.startswith(f"invalid setting SPECLEDGER_{name}=") and bound in said


def test_the_limits_reach_the_readers_as_one_plain_value(monkeypatch):
    monkeypatch.setenv("SPECLEDGER_MAX_ROWS_PER_FILE", "10")
    monkeypatch.setenv("SPECLEDGER_FETCH_MAX_BYTES", "4096")
    limits = Settings().input_limits
    assert isinstance(limits, InputLimits)
    assert (limits.max_rows_per_file, limits.fetch_max_bytes) == (10, 4096)
    assert limits.yaml_max_depth == InputLimits().yaml_max_depth


def test_the_readers_are_one_comma_separated_variable(monkeypatch):
    monkeypatch.setenv("SPECLEDGER_MAIL_TO", " cfo@example.com, infra@example.com ,")
    assert Settings().mail_to == ["cfo@example.com", "infra@example.com"]
    monkeypatch.setenv("SPECLEDGER_MAIL_TO", "")
    assert Settings().mail_to == []  # no readers: no e-mail


def test_the_market_age_limit_is_on_by_default_and_set_by_its_variable(monkeypatch):
    from models.market.valid_time import MAX_OFFER_AGE_DAYS

    assert Settings().market_max_age_days == MAX_OFFER_AGE_DAYS == 120
    monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", "30")
    assert Settings().market_max_age_days == 30
    monkeypatch.setenv("SPECLEDGER_MARKET_MAX_AGE_DAYS", "0")
    with pytest.raises(ValidationError) as refused:
        Settings()
    assert settings_problem(refused.value).startswith(
        "invalid setting SPECLEDGER_MARKET_MAX_AGE_DAYS=")
