"""serving results: each serving scenario's answer per dataset version, and serving as a
scenario kind

A serving scenario's answer (each option's curve and cost per million output tokens, the
cheaper option at the target interactivity with its margin and band) is stored once per
dataset version like the C2C and TCO results; the scenario table accepts the kind.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0012'
down_revision: str | None = '0011'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _kinds(kinds: tuple[str, ...]) -> None:
    with op.batch_alter_table('scenario') as batch:
        batch.drop_constraint(op.f('ck_scenario_kind'), type_='check')
        batch.create_check_constraint(
            'kind', 'kind IN (' + ', '.join(f"'{k}'" for k in kinds) + ')')


def upgrade() -> None:
    _kinds(('c2c', 'tco', 'serving'))
    op.create_table('serving_result',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('scenario_id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=True),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('inputs_sha256', sa.String(length=64), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('reused_from_id', sa.Integer(), nullable=True),
    sa.Column('target_tok_s_per_user', sa.Float(), nullable=False),
    sa.Column('cheaper_option', sa.Text(), nullable=True),
    sa.Column('margin', sa.Float(), nullable=True),
    sa.Column('margin_p10', sa.Float(), nullable=True),
    sa.Column('margin_p90', sa.Float(), nullable=True),
    sa.Column('result_json', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_serving_result_dataset_version_id_dataset_version')),
    sa.ForeignKeyConstraint(['reused_from_id'], ['serving_result.id'], name=op.f('fk_serving_result_reused_from_id_serving_result')),
    sa.ForeignKeyConstraint(['scenario_id'], ['scenario.id'], name=op.f('fk_serving_result_scenario_id_scenario')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_serving_result')),
    sa.UniqueConstraint('scenario_id', 'dataset_version_id', name=op.f('uq_serving_result_scenario_id_dataset_version_id'))
    )
    with op.batch_alter_table('serving_result', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_serving_result_inputs_sha256'), ['inputs_sha256'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('serving_result', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_serving_result_inputs_sha256'))
    op.drop_table('serving_result')
    op.execute("DELETE FROM scenario WHERE kind = 'serving'")
    _kinds(('c2c', 'tco'))
