"""file formats for the price feeds people keep: a tracker's per-region Azure prices, GCP's
pricing.yml, a daily price series CSV and a neocloud price feed (JSON lines)

ingest_file.format takes 'azure-pricing-radar', 'gcp-pricing-yaml', 'aws-price-series' and
'neocloud-cheapest' (pipelines/inputs/adapters/). Going down, the older vocabulary cannot name
them: those files read 'unknown' (their raw bytes, observations and rejected rows stay).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

revision: str = '0018'
down_revision: str | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FORMATS = ('source-pack', 'epoch-ml-hardware', 'nccl-tests', 'mlperf-system',
                'mlperf-result', 'unknown', 'azure-retail-prices', 'aws-price-list',
                'skypilot-catalog', 'quote-sheet', 'inferencex', 'mlperf-inference',
                'gpuhunt-catalog')
_ADDED = ('azure-pricing-radar', 'gcp-pricing-yaml', 'aws-price-series', 'neocloud-cheapest')


def _formats(values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists ingest_file.format's allowed values."""
    with op.batch_alter_table('ingest_file') as batch:
        batch.drop_constraint(op.f('ck_ingest_file_format'), type_='check')
        batch.create_check_constraint(
            'format', "format IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    _formats((*_OLD_FORMATS, *_ADDED))


def downgrade() -> None:
    op.execute("UPDATE ingest_file SET format = 'unknown' WHERE format IN ("
               + ", ".join(f"'{v}'" for v in _ADDED) + ")")
    _formats(_OLD_FORMATS)
