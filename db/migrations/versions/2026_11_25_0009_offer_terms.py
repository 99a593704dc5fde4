"""offer terms: a market price's provider, region, term, GPU, GPUs a unit, instance type,
currency and quote validity as columns of its observation; the market flag kinds and the
price-list file formats

Cloud price lists and vendor quotes carry dimensions that used to live only inside item keys
(`gcp-a3-h100-1yr`); the price index groups by them. NULL on every other observation, so
existing rows and their content digests are unchanged. The flag table accepts the market's
flag kinds (price_move, new_cheapest, quote_expiring, lead_time_grew), and ingest_file the
formats of the price-list and quote-sheet readers.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    ('offer_provider', sa.Text()),
    ('offer_region', sa.Text()),
    ('offer_term', sa.String(length=20)),
    ('offer_gpu', sa.Text()),
    ('offer_units', sa.Integer()),
    ('offer_instance', sa.Text()),
    ('offer_currency', sa.String(length=10)),
    ('offer_valid_until', sa.Date()),
)


_OLD_KINDS = ('density_threshold', 'density_growth', 'interconnect_trend', 'bandwidth_ratio',
              'switch_capacity', 'single_source', 'unconfirmed', 'stale', 'conflicting',
              'claim_without_measurement', 'undated', 'added', 'changed', 'superseded',
              'result_moved')
_NEW_KINDS = (*_OLD_KINDS, 'price_move', 'new_cheapest', 'quote_expiring', 'lead_time_grew')
_OLD_FORMATS = ('source-pack', 'epoch-ml-hardware', 'nccl-tests', 'mlperf-system',
                'mlperf-result', 'unknown')
_NEW_FORMATS = (*_OLD_FORMATS, 'azure-retail-prices', 'aws-price-list', 'skypilot-catalog',
                'quote-sheet')


def _vocabulary(table: str, column: str, values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists a column's allowed values."""
    with op.batch_alter_table(table) as batch:
        batch.drop_constraint(op.f(f'ck_{table}_{column}'), type_='check')
        batch.create_check_constraint(
            column, f"{column} IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    with op.batch_alter_table('observation') as batch:
        for name, kind in _COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))
    op.create_index('ix_observation_offer', 'observation',
                    ['offer_gpu', 'offer_term', 'superseded_at'])
    _vocabulary('flag', 'kind', _NEW_KINDS)
    _vocabulary('ingest_file', 'format', _NEW_FORMATS)


def downgrade() -> None:
    _vocabulary('ingest_file', 'format', _OLD_FORMATS)
    _vocabulary('flag', 'kind', _OLD_KINDS)
    op.drop_index('ix_observation_offer', table_name='observation')
    with op.batch_alter_table('observation') as batch:
        for name, _ in reversed(_COLUMNS):
            batch.drop_column(name)
