"""MLPerf loadgen logs: a serving point's request rate, arrival rate, p99 times and limits

ingest_file.format takes 'mlperf-loadgen' (a run's mlperf_log_summary.txt or
mlperf_log_detail.txt), and inference_point gains the figures such a log gives beyond
throughput: samples_per_s, target_qps, ttft_p99_s, tpot_p99_s, ttft_limit_s and tpot_limit_s
(NULL for the points read before, whose files give none). Going down drops the columns and
reads those files' format as 'unknown' (their raw bytes and points stay).

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019'
down_revision: str | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FORMATS = ('source-pack', 'epoch-ml-hardware', 'nccl-tests', 'mlperf-system',
                'mlperf-result', 'unknown', 'azure-retail-prices', 'aws-price-list',
                'skypilot-catalog', 'quote-sheet', 'inferencex', 'mlperf-inference',
                'gpuhunt-catalog', 'azure-pricing-radar', 'gcp-pricing-yaml',
                'aws-price-series', 'neocloud-cheapest')
_ADDED = ('mlperf-loadgen',)
_COLUMNS = ('samples_per_s', 'target_qps', 'ttft_p99_s', 'tpot_p99_s', 'ttft_limit_s',
            'tpot_limit_s')


def _formats(values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists ingest_file.format's allowed values."""
    with op.batch_alter_table('ingest_file') as batch:
        batch.drop_constraint(op.f('ck_ingest_file_format'), type_='check')
        batch.create_check_constraint(
            'format', "format IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    _formats((*_OLD_FORMATS, *_ADDED))
    with op.batch_alter_table('inference_point') as batch:
        for column in _COLUMNS:
            batch.add_column(sa.Column(column, sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('inference_point') as batch:
        for column in _COLUMNS:
            batch.drop_column(column)
    op.execute("UPDATE ingest_file SET format = 'unknown' WHERE format IN ("
               + ", ".join(f"'{v}'" for v in _ADDED) + ")")
    _formats(_OLD_FORMATS)
