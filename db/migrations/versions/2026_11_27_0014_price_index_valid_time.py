"""the price index in valid time: each row's price dates and its composition changes

A version's price index is now its market on its date (models/market/valid_time.py): its
week-over-week and 90-day changes compare the offers priced on both dates, and offers added
or dropped are composition, reported apart. Each row gains the dates of its offers' prices
(price_from, price_to: the oldest and newest as_of) and the composition changes in words
(wow_composition, d90_composition). Rows stored before keep NULL there, and their changes
as computed then (version against version by recording date).

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0014'
down_revision: str | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (('price_from', sa.Date()), ('price_to', sa.Date()),
            ('wow_composition', sa.Text()), ('d90_composition', sa.Text()))


def upgrade() -> None:
    with op.batch_alter_table('price_index') as batch:
        for name, kind in _COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('price_index') as batch:
        for name, _ in reversed(_COLUMNS):
            batch.drop_column(name)
