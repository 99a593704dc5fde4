"""source item live index: an ingest's lookup of what a source says of some items now

Without it, SQLite answered "live observations of source S for items (...)" by scanning every
live observation of S, so ingesting many small files from one source slowed down as the
ledger grew.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-24
"""

from collections.abc import Sequence

from alembic import op

revision: str = '0008'
down_revision: str | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_observation_source_item_live', 'observation',
                    ['source_id', 'item_id', 'superseded_at'])


def downgrade() -> None:
    op.drop_index('ix_observation_source_item_live', table_name='observation')
