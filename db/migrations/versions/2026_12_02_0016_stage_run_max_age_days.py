"""a stored stage keyed by the setting it ran with: the price index's age limit

A version's price index leaves out offers priced more than SPECLEDGER_MARKET_MAX_AGE_DAYS
before its date, so the limit is one of its inputs (issue 43, case 1). The stage record now
keeps it (stage_run.max_age_days), and a reader whose limit differs computes that version's
index at its own limit instead of reading rows built with another (pipelines/ledger/market.py).
Records stored before keep NULL: their limit is not known, and they are read as stored.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0016'
down_revision: str | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('stage_run') as batch:
        batch.add_column(sa.Column('max_age_days', sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('stage_run') as batch:
        batch.drop_column('max_age_days')
