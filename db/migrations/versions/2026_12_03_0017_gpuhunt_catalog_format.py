"""a file format for gpuhunt's catalogs (the market feed)

ingest_file.format takes 'gpuhunt-catalog': a provider's catalog.zip from gpuhunt's published
catalogs, read by pipelines/inputs/adapters/gpuhunt_catalog.py.

Going down, the older vocabulary cannot name it: those files read 'unknown' (their raw bytes,
observations and rejected rows stay).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

revision: str = '0017'
down_revision: str | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_FORMATS = ('source-pack', 'epoch-ml-hardware', 'nccl-tests', 'mlperf-system',
                'mlperf-result', 'unknown', 'azure-retail-prices', 'aws-price-list',
                'skypilot-catalog', 'quote-sheet', 'inferencex', 'mlperf-inference')
_NEW_FORMATS = (*_OLD_FORMATS, 'gpuhunt-catalog')


def _formats(values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists ingest_file.format's allowed values."""
    with op.batch_alter_table('ingest_file') as batch:
        batch.drop_constraint(op.f('ck_ingest_file_format'), type_='check')
        batch.create_check_constraint(
            'format', "format IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    _formats(_NEW_FORMATS)


def downgrade() -> None:
    op.execute("UPDATE ingest_file SET format = 'unknown' WHERE format = 'gpuhunt-catalog'")
    _formats(_OLD_FORMATS)
