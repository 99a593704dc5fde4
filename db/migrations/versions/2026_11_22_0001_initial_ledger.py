"""initial ledger

Revision ID: 0001
Revises: 
Create Date: 2026-11-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    
    op.create_table('ingest_run',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('rows_read', sa.Integer(), nullable=False),
    sa.Column('rows_accepted', sa.Integer(), nullable=False),
    sa.Column('rows_unchanged', sa.Integer(), nullable=False),
    sa.Column('rows_rejected', sa.Integer(), nullable=False),
    sa.Column('code_version', sa.String(length=40), nullable=False),
    sa.CheckConstraint('rows_read = rows_accepted + rows_unchanged + rows_rejected', name=op.f('ck_ingest_run_rows_add_up')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ingest_run'))
    )
    op.create_table('item',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('name', sa.String(length=300), nullable=False),
    sa.Column('kind', sa.String(length=50), nullable=False),
    sa.Column('vendor', sa.String(length=100), nullable=True),
    sa.Column('family', sa.String(length=100), nullable=True),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_item')),
    sa.UniqueConstraint('key', name=op.f('uq_item_key'))
    )
    op.create_table('metric',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=100), nullable=False),
    sa.Column('unit', sa.String(length=50), nullable=False),
    sa.Column('counts', sa.String(length=10), nullable=True),
    sa.Column('scope', sa.String(length=30), nullable=False),
    sa.Column('direction', sa.String(length=20), nullable=False),
    sa.Column('min_value', sa.Float(), nullable=True),
    sa.Column('max_value', sa.Float(), nullable=True),
    sa.Column('description', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_metric')),
    sa.UniqueConstraint('key', name=op.f('uq_metric_key'))
    )
    op.create_table('raw_file',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('sha256', sa.String(length=64), nullable=False),
    sa.Column('file_name', sa.String(length=500), nullable=False),
    sa.Column('size_bytes', sa.Integer(), nullable=False),
    sa.Column('content', sa.LargeBinary(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_raw_file')),
    sa.UniqueConstraint('sha256', name=op.f('uq_raw_file_sha256'))
    )
    op.create_table('source',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('title', sa.String(length=500), nullable=False),
    sa.Column('publisher', sa.String(length=200), nullable=True),
    sa.Column('url', sa.String(length=1000), nullable=True),
    sa.Column('kind', sa.String(length=30), nullable=False),
    sa.Column('published_on', sa.Date(), nullable=True),
    sa.Column('retrieved_on', sa.Date(), nullable=True),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("kind IN ('standard_body', 'vendor_datasheet', 'measurement', 'dataset', 'vendor_press', 'analyst', 'secondary_press', 'derived')", name=op.f('ck_source_kind')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_source')),
    sa.UniqueConstraint('key', name=op.f('uq_source_key'))
    )
    op.create_table('dataset_version',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cutoff_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('content_hash', sa.String(length=64), nullable=False),
    sa.Column('observation_count', sa.Integer(), nullable=False),
    sa.Column('ingest_run_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['ingest_run_id'], ['ingest_run.id'], name=op.f('fk_dataset_version_ingest_run_id_ingest_run')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_dataset_version'))
    )
    with op.batch_alter_table('dataset_version', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_dataset_version_content_hash'), ['content_hash'], unique=False)

    op.create_table('ingest_file',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('ingest_run_id', sa.Integer(), nullable=False),
    sa.Column('raw_file_id', sa.Integer(), nullable=False),
    sa.Column('path', sa.String(length=1000), nullable=False),
    sa.Column('outcome', sa.String(length=20), nullable=False),
    sa.Column('rows_read', sa.Integer(), nullable=False),
    sa.Column('rows_accepted', sa.Integer(), nullable=False),
    sa.Column('rows_unchanged', sa.Integer(), nullable=False),
    sa.Column('rows_rejected', sa.Integer(), nullable=False),
    sa.CheckConstraint('rows_read = rows_accepted + rows_unchanged + rows_rejected', name=op.f('ck_ingest_file_rows_add_up')),
    sa.ForeignKeyConstraint(['ingest_run_id'], ['ingest_run.id'], name=op.f('fk_ingest_file_ingest_run_id_ingest_run')),
    sa.ForeignKeyConstraint(['raw_file_id'], ['raw_file.id'], name=op.f('fk_ingest_file_raw_file_id_raw_file')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_ingest_file'))
    )
    with op.batch_alter_table('ingest_file', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ingest_file_ingest_run_id'), ['ingest_run_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_ingest_file_raw_file_id'), ['raw_file_id'], unique=False)

    op.create_table('observation',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.Integer(), nullable=False),
    sa.Column('metric_id', sa.Integer(), nullable=False),
    sa.Column('source_id', sa.Integer(), nullable=False),
    sa.Column('value', sa.Float(), nullable=False),
    sa.Column('low', sa.Float(), nullable=False),
    sa.Column('high', sa.Float(), nullable=False),
    sa.Column('value_written', sa.String(length=100), nullable=False),
    sa.Column('unit_written', sa.String(length=50), nullable=False),
    sa.Column('value_kind', sa.String(length=20), nullable=False),
    sa.Column('status', sa.String(length=1), nullable=False),
    sa.Column('quote', sa.Text(), nullable=True),
    sa.Column('as_of', sa.Date(), nullable=False),
    sa.Column('as_of_precision', sa.String(length=5), nullable=False),
    sa.Column('valid_to', sa.Date(), nullable=True),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('superseded_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ingest_run_id', sa.Integer(), nullable=False),
    sa.Column('raw_file_id', sa.Integer(), nullable=False),
    sa.Column('line', sa.Integer(), nullable=True),
    sa.Column('content_sha256', sa.String(length=64), nullable=False),
    sa.CheckConstraint("status IN ('C', 'S', 'U')", name=op.f('ck_observation_status')),
    sa.CheckConstraint("value_kind IN ('reported', 'estimate', 'derived', 'measured')", name=op.f('ck_observation_value_kind')),
    sa.CheckConstraint('low <= high', name=op.f('ck_observation_low_le_high')),
    sa.ForeignKeyConstraint(['ingest_run_id'], ['ingest_run.id'], name=op.f('fk_observation_ingest_run_id_ingest_run')),
    sa.ForeignKeyConstraint(['item_id'], ['item.id'], name=op.f('fk_observation_item_id_item')),
    sa.ForeignKeyConstraint(['metric_id'], ['metric.id'], name=op.f('fk_observation_metric_id_metric')),
    sa.ForeignKeyConstraint(['raw_file_id'], ['raw_file.id'], name=op.f('fk_observation_raw_file_id_raw_file')),
    sa.ForeignKeyConstraint(['source_id'], ['source.id'], name=op.f('fk_observation_source_id_source')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_observation'))
    )
    with op.batch_alter_table('observation', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_observation_ingest_run_id'), ['ingest_run_id'], unique=False)
        batch_op.create_index('ix_observation_item_metric_clocks', ['item_id', 'metric_id', 'recorded_at', 'as_of'], unique=False)
        batch_op.create_index(batch_op.f('ix_observation_raw_file_id'), ['raw_file_id'], unique=False)
        batch_op.create_index('ix_observation_source_live', ['source_id', 'superseded_at'], unique=False)

    op.create_table('rejected_row',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('ingest_run_id', sa.Integer(), nullable=False),
    sa.Column('ingest_file_id', sa.Integer(), nullable=False),
    sa.Column('raw_file_id', sa.Integer(), nullable=False),
    sa.Column('line', sa.Integer(), nullable=True),
    sa.Column('field', sa.String(length=100), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('raw_text', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['ingest_file_id'], ['ingest_file.id'], name=op.f('fk_rejected_row_ingest_file_id_ingest_file')),
    sa.ForeignKeyConstraint(['ingest_run_id'], ['ingest_run.id'], name=op.f('fk_rejected_row_ingest_run_id_ingest_run')),
    sa.ForeignKeyConstraint(['raw_file_id'], ['raw_file.id'], name=op.f('fk_rejected_row_raw_file_id_raw_file')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rejected_row'))
    )
    with op.batch_alter_table('rejected_row', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_rejected_row_ingest_file_id'), ['ingest_file_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_rejected_row_ingest_run_id'), ['ingest_run_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_rejected_row_raw_file_id'), ['raw_file_id'], unique=False)

    


def downgrade() -> None:
    
    with op.batch_alter_table('rejected_row', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_rejected_row_raw_file_id'))
        batch_op.drop_index(batch_op.f('ix_rejected_row_ingest_run_id'))
        batch_op.drop_index(batch_op.f('ix_rejected_row_ingest_file_id'))

    op.drop_table('rejected_row')
    with op.batch_alter_table('observation', schema=None) as batch_op:
        batch_op.drop_index('ix_observation_source_live')
        batch_op.drop_index(batch_op.f('ix_observation_raw_file_id'))
        batch_op.drop_index('ix_observation_item_metric_clocks')
        batch_op.drop_index(batch_op.f('ix_observation_ingest_run_id'))

    op.drop_table('observation')
    with op.batch_alter_table('ingest_file', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_ingest_file_raw_file_id'))
        batch_op.drop_index(batch_op.f('ix_ingest_file_ingest_run_id'))

    op.drop_table('ingest_file')
    with op.batch_alter_table('dataset_version', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_dataset_version_content_hash'))

    op.drop_table('dataset_version')
    op.drop_table('source')
    op.drop_table('raw_file')
    op.drop_table('metric')
    op.drop_table('item')
    op.drop_table('ingest_run')
    
