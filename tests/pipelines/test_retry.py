"""The one retry loop (pipelines/retry.py): how many attempts, which waits, when it stops early;
run with an injected sleep, so nothing waits."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pipelines.retry import Backoff, backoff_delays, with_retries


def test_the_backoff_doubles_after_each_retry_up_to_its_cap():
    assert backoff_delays(4, 2.0) == [2.0, 4.0, 8.0, 16.0]
    assert backoff_delays(8, 2.0, cap=30.0)[-3:] == [30.0, 30.0, 30.0]
    assert backoff_delays(0, 2.0) == []
    assert backoff_delays(-1, 2.0) == []
    assert Backoff(3, 5.0).delays() == [5.0, 10.0, 20.0]


def results(*given: str) -> Callable[[], str]:
    """An action answering `given` in turn."""
    answers: Iterator[str] = iter(given)
    return lambda: next(answers)


def bad(result: str) -> bool:
    return result.startswith("bad")


def test_a_good_first_result_is_one_attempt_and_no_wait():
    waits: list[float] = []
    tried = with_retries(results("good"), Backoff(3, 1.0), failed=bad, sleep=waits.append)
    assert (tried.last, tried.attempts, tried.refused_wait, waits) == ("good", 1, None, [])


def test_failures_are_retried_with_growing_waits_until_a_good_result():
    waits: list[float] = []
    seen: list[tuple[str, int, float]] = []
    tried = with_retries(results("bad 1", "bad 2", "good"), Backoff(3, 1.0), failed=bad,
                         before_retry=lambda r, n, w: seen.append((r, n, w)),
                         sleep=waits.append)
    assert (tried.last, tried.attempts, waits) == ("good", 3, [1.0, 2.0])
    assert seen == [("bad 1", 1, 1.0), ("bad 2", 2, 2.0)]  # told before each wait


def test_spent_retries_return_the_last_failure_without_a_wait_after_it():
    waits: list[float] = []
    tried = with_retries(results("bad 1", "bad 2", "bad 3"), Backoff(2, 0.5), failed=bad,
                         sleep=waits.append)
    assert (tried.last, tried.attempts, waits) == ("bad 3", 3, [0.5, 1.0])


def test_no_retries_is_a_single_attempt():
    tried = with_retries(results("bad"), Backoff(0, 9.0), failed=bad, sleep=lambda _: None)
    assert (tried.last, tried.attempts) == ("bad", 1)


def test_an_asked_wait_lengthens_the_backoff_never_shortens_it():
    waits: list[float] = []
    asked = {"bad long": 7.0, "bad short": 0.1}
    tried = with_retries(results("bad long", "bad short", "good"), Backoff(3, 2.0),
                         failed=bad, asked_wait=asked.get, sleep=waits.append)
    assert (tried.attempts, waits) == (3, [7.0, 4.0])


def test_an_asked_wait_beyond_the_cap_stops_at_once_and_says_so():
    waits: list[float] = []
    tried = with_retries(results("bad", "good"), Backoff(3, 1.0, cap_seconds=60.0),
                         failed=bad, asked_wait=lambda _: 120.0, sleep=waits.append)
    assert (tried.last, tried.attempts, tried.refused_wait, waits) == ("bad", 1, 120.0, [])


def test_the_asked_wait_of_the_last_attempt_is_not_a_refusal():
    tried = with_retries(results("bad"), Backoff(0, 1.0), failed=bad,
                         asked_wait=lambda _: 120.0, sleep=lambda _: None)
    assert (tried.attempts, tried.refused_wait) == (1, None)
