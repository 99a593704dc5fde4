"""a source kind for one person's published notes, ranked below the press

A figure from someone's own notes page or blog is not press: nobody but its author stands
behind it. It gets its own kind, `personal_notes`, ranked after `secondary_press` and before
`derived` (models/resolve.py), so that two figures of one date no longer tie between a
published guide and a personal page and get decided by which was recorded last.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0015'
down_revision: str | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD_KINDS = ('standard_body', 'vendor_datasheet', 'measurement', 'dataset', 'vendor_press',
              'analyst', 'secondary_press', 'derived')
_NEW_KINDS = (*_OLD_KINDS, 'personal_notes')
# The shipped sources that are one person's notes pages (data/sources/rack_power.yaml): a
# ledger that ingested them before this revision filed them as secondary press.
_SHIPPED_NOTES = ('manishklach-gb300-notes', 'regantih-vera-rubin-notes')


def _vocabulary(values: tuple[str, ...]) -> None:
    """Replace the CHECK constraint that lists source.kind's allowed values."""
    with op.batch_alter_table('source') as batch:
        batch.drop_constraint(op.f('ck_source_kind'), type_='check')
        batch.create_check_constraint(
            'kind', "kind IN (" + ", ".join(f"'{v}'" for v in values) + ")")


def upgrade() -> None:
    _vocabulary(_NEW_KINDS)
    op.execute(sa.text("UPDATE source SET kind = 'personal_notes' WHERE kind = "
                       "'secondary_press' AND key IN :keys")
               .bindparams(sa.bindparam('keys', _SHIPPED_NOTES, expanding=True)))


def downgrade() -> None:
    # The old rule has no such kind: personal notes go back to being filed as press.
    op.execute("UPDATE source SET kind = 'secondary_press' WHERE kind = 'personal_notes'")
    _vocabulary(_OLD_KINDS)
