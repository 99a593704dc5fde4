"""c2c results: scenario definitions and the C2C model's results per dataset version

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('scenario',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('kind', sa.String(length=20), nullable=False),
    sa.Column('content_sha256', sa.String(length=64), nullable=False),
    sa.Column('definition', sa.Text(), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=True),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('c2c', 'tco')", name=op.f('ck_scenario_kind')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_scenario')),
    sa.UniqueConstraint('name', 'content_sha256', name=op.f('uq_scenario_name_content_sha256'))
    )
    op.create_table('c2c_result',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=True),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('inputs_sha256', sa.String(length=64), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reused_from_id', sa.Integer(), nullable=True),
    sa.Column('gpus', sa.Integer(), nullable=False),
    sa.Column('t_iter_s', sa.Float(), nullable=False),
    sa.Column('t_compute_s', sa.Float(), nullable=False),
    sa.Column('t_bubble_s', sa.Float(), nullable=False),
    sa.Column('c2c', sa.Float(), nullable=False),
    sa.Column('c2c_scale_up', sa.Float(), nullable=False),
    sa.Column('c2c_scale_out', sa.Float(), nullable=False),
    sa.Column('c2c_class', sa.String(length=40), nullable=False),
    sa.Column('recommended_fabric', sa.String(length=40), nullable=False),
    sa.Column('mfu', sa.Float(), nullable=False),
    sa.Column('hw_tflops_per_gpu', sa.Float(), nullable=False),
    sa.Column('model_tflops_per_gpu', sa.Float(), nullable=False),
    sa.Column('memory_gib_per_gpu', sa.Float(), nullable=False),
    sa.Column('fits', sa.Boolean(), nullable=False),
    sa.Column('time_to_train_days', sa.Float(), nullable=True),
    sa.Column('result_json', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_c2c_result_dataset_version_id_dataset_version')),
    sa.ForeignKeyConstraint(['reused_from_id'], ['c2c_result.id'], name=op.f('fk_c2c_result_reused_from_id_c2c_result')),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenario.id'], name=op.f('fk_c2c_result_scenario_id_scenario')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_c2c_result')),
    sa.UniqueConstraint('scenario_id', 'dataset_version_id', name=op.f('uq_c2c_result_scenario_id_dataset_version_id'))
    )
    with op.batch_alter_table('c2c_result', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_c2c_result_inputs_sha256'), ['inputs_sha256'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('c2c_result', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_c2c_result_inputs_sha256'))

    op.drop_table('c2c_result')
    op.drop_table('scenario')
