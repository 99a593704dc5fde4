"""flags and briefings: trend and evidence flags per dataset version, rendered briefings with their sha256

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0005'
down_revision: str | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('briefing',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=False),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('size_bytes', sa.BigInteger(), nullable=False),
    sa.Column('pages', sa.Integer(), nullable=True),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('rendered_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_briefing_dataset_version_id_dataset_version')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_briefing'))
    )
    with op.batch_alter_table('briefing', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_briefing_dataset_version_id'), ['dataset_version_id'], unique=False)

    op.create_table('flag',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=False),
    sa.Column('kind', sa.String(length=40), nullable=False),
    sa.Column('severity', sa.String(length=10), nullable=False),
    sa.Column('subject', sa.String(length=400), nullable=False),
    sa.Column('item_key', sa.String(length=200), nullable=True),
    sa.Column('metric_key', sa.String(length=100), nullable=True),
    sa.Column('scenario_name', sa.String(length=200), nullable=True),
    sa.Column('message', sa.Text(), nullable=False),
    sa.Column('observation_ids', sa.Text(), nullable=False),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('density_threshold', 'density_growth', 'interconnect_trend', 'bandwidth_ratio', 'switch_capacity', 'single_source', 'unconfirmed', 'stale', 'conflicting', 'claim_without_measurement', 'undated', 'added', 'changed', 'superseded', 'result_moved')", name=op.f('ck_flag_kind')),
    sa.CheckConstraint("severity IN ('critical', 'warning', 'info')", name=op.f('ck_flag_severity')),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_flag_dataset_version_id_dataset_version')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_flag')),
    sa.UniqueConstraint('dataset_version_id', 'kind', 'subject', name=op.f('uq_flag_dataset_version_id_kind_subject'))
    )
    with op.batch_alter_table('flag', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_flag_dataset_version_id'), ['dataset_version_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('flag', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_flag_dataset_version_id'))

    op.drop_table('flag')
    with op.batch_alter_table('briefing', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_briefing_dataset_version_id'))

    op.drop_table('briefing')
