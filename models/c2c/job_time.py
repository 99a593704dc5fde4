"""A job's time to train from one iteration's time: the arithmetic every reader of a stored
C2C estimate shares (the TCO stage prices a job of another token budget with it)."""

from __future__ import annotations

SECONDS_PER_DAY = 86_400


def days_to_train(t_iter_s: float, tokens: float, global_batch: int, seq_len: int) -> float:
    """Days for `tokens` at `global_batch` sequences of `seq_len` tokens an iteration."""
    return tokens / (global_batch * seq_len) * t_iter_s / SECONDS_PER_DAY
