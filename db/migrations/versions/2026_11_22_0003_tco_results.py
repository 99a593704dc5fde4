"""tco results: the TCO model's results per scenario and dataset version

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0003'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('tco_result',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=True),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('inputs_sha256', sa.String(length=64), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reused_from_id', sa.Integer(), nullable=True),
    sa.Column('mode', sa.String(length=20), nullable=False),
    sa.Column('scale_up_option', sa.String(length=200), nullable=True),
    sa.Column('scale_out_option', sa.String(length=200), nullable=True),
    sa.Column('break_even_speedup', sa.Float(), nullable=True),
    sa.Column('break_even_p10', sa.Float(), nullable=True),
    sa.Column('break_even_p50', sa.Float(), nullable=True),
    sa.Column('break_even_p90', sa.Float(), nullable=True),
    sa.Column('speedup', sa.Float(), nullable=True),
    sa.Column('cheaper_option', sa.String(length=200), nullable=True),
    sa.Column('total_cost_usd', sa.Float(), nullable=True),
    sa.Column('result_json', sa.Text(), nullable=False),
    sa.CheckConstraint("mode IN ('comparison', 'training-run')", name=op.f('ck_tco_result_mode')),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_tco_result_dataset_version_id_dataset_version')),
    sa.ForeignKeyConstraint(['reused_from_id'], ['tco_result.id'], name=op.f('fk_tco_result_reused_from_id_tco_result')),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenario.id'], name=op.f('fk_tco_result_scenario_id_scenario')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tco_result')),
    sa.UniqueConstraint('scenario_id', 'dataset_version_id', name=op.f('uq_tco_result_scenario_id_dataset_version_id'))
    )
    with op.batch_alter_table('tco_result', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_tco_result_inputs_sha256'), ['inputs_sha256'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('tco_result', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_tco_result_inputs_sha256'))

    op.drop_table('tco_result')
