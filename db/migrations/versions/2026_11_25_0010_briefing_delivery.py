"""briefing delivery: where each briefing was delivered (e-mail, a folder), when, how it went

One row per channel per delivery (append-only): the e-mail's recipients and Message-ID, or the
folder a copy was written to; the attempts it took and, when it failed, the last error.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0010'
down_revision: str | None = '0009'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('briefing_delivery',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('briefing_id', sa.Integer(), nullable=False),
    sa.Column('channel', sa.String(length=10), nullable=False),
    sa.Column('target', sa.Text(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('message_id', sa.Text(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('delivered_at', sa.DateTime(timezone=True), nullable=False),
    # The vocabularies are db.schema.DELIVERY_CHANNELS and DELIVERY_STATUSES.
    sa.CheckConstraint("channel IN ('email', 'folder')", name=op.f('ck_briefing_delivery_channel')),
    sa.CheckConstraint("status IN ('delivered', 'failed')", name=op.f('ck_briefing_delivery_status')),
    sa.ForeignKeyConstraint(['briefing_id'], ['briefing.id'], name=op.f('fk_briefing_delivery_briefing_id_briefing')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_briefing_delivery'))
    )
    with op.batch_alter_table('briefing_delivery', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_briefing_delivery_briefing_id'), ['briefing_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('briefing_delivery', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_briefing_delivery_briefing_id'))

    op.drop_table('briefing_delivery')
