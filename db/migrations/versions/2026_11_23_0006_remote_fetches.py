"""remote fetches: an append-only log of every fetch of a source declared by URL

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0006'
down_revision: str | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # One row per source per run, all retries included. A good fetch names the cached bytes
    # (sha256) and the validators the next run sends back; the URL has no credentials.
    op.create_table('remote_fetch',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('source_name', sa.String(length=200), nullable=False),
    sa.Column('url', sa.String(length=2000), nullable=False),
    sa.Column('attempted_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('outcome', sa.String(length=20), nullable=False),
    sa.Column('http_status', sa.Integer(), nullable=True),
    sa.Column('sha256', sa.String(length=64), nullable=True),
    sa.Column('size_bytes', sa.BigInteger(), nullable=True),
    sa.Column('etag', sa.String(length=500), nullable=True),
    sa.Column('last_modified', sa.String(length=100), nullable=True),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    # The outcome vocabulary is db.schema.FETCH_OUTCOMES.
    sa.CheckConstraint("outcome IN ('fetched', 'unchanged', 'not_modified', 'failed')", name=op.f('ck_remote_fetch_outcome')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_remote_fetch'))
    )
    with op.batch_alter_table('remote_fetch', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_remote_fetch_source_name'), ['source_name'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('remote_fetch', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_remote_fetch_source_name'))

    op.drop_table('remote_fetch')
