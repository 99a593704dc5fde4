"""the price index stored per dataset version, and the recompute graph's stage records

The GPU-hour price index was rebuilt from the whole offer history wherever it was read; it is
now a stage of the recompute graph that stores each version's index once (price_index), with
a stage_run record naming the digest of the offers it read. Versions recorded before this
migration get theirs the next time the stage runs (any ingest, run or report).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0013'
down_revision: str | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('stage_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=False),
    sa.Column('stage', sa.String(length=20), nullable=False),
    sa.Column('inputs_sha256', sa.String(length=64), nullable=False),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.Column('computed_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('rows', sa.Integer(), nullable=False),
    sa.CheckConstraint("stage IN ('price_index')", name=op.f('ck_stage_run_stage')),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_stage_run_dataset_version_id_dataset_version')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_stage_run')),
    sa.UniqueConstraint('dataset_version_id', 'stage', name=op.f('uq_stage_run_dataset_version_id_stage'))
    )
    op.create_table('price_index',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('dataset_version_id', sa.Integer(), nullable=False),
    sa.Column('version_date', sa.Date(), nullable=False),
    sa.Column('gpu', sa.Text(), nullable=False),
    sa.Column('term', sa.String(length=20), nullable=False),
    sa.Column('median', sa.Float(), nullable=False),
    sa.Column('min', sa.Float(), nullable=False),
    sa.Column('p25', sa.Float(), nullable=False),
    sa.Column('p75', sa.Float(), nullable=False),
    sa.Column('n_offers', sa.Integer(), nullable=False),
    sa.Column('n_providers', sa.Integer(), nullable=False),
    sa.Column('cheapest_provider', sa.Text(), nullable=False),
    sa.Column('cheapest_region', sa.Text(), nullable=True),
    sa.Column('cheapest_price', sa.Float(), nullable=False),
    sa.Column('cheapest_source', sa.Text(), nullable=False),
    sa.Column('cheapest_as_of', sa.Date(), nullable=False),
    sa.Column('cheapest_observation_id', sa.Integer(), nullable=False),
    sa.Column('cheapest_gpus_per_instance', sa.Integer(), nullable=True),
    sa.Column('wow_change', sa.Float(), nullable=True),
    sa.Column('d90_change', sa.Float(), nullable=True),
    sa.ForeignKeyConstraint(['cheapest_observation_id'], ['observation.id'], name=op.f('fk_price_index_cheapest_observation_id_observation')),
    sa.ForeignKeyConstraint(['dataset_version_id'], ['dataset_version.id'], name=op.f('fk_price_index_dataset_version_id_dataset_version')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_price_index')),
    sa.UniqueConstraint('dataset_version_id', 'gpu', 'term', name=op.f('uq_price_index_dataset_version_id_gpu_term'))
    )


def downgrade() -> None:
    op.drop_table('price_index')
    op.drop_table('stage_run')
