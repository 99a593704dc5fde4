"""Tables whose keys print whole at any width: the item, metric or scenario a user must type
next is never wrapped, folded or cut with an ellipsis.

A key column (and a number's) is as wide as its longest cell and never wraps; text (names,
messages) wraps. When the terminal is too narrow for that, the columns a table marks as
droppable go first (the caption says which, and `--json` has them all); when even the keys do
not fit, each row prints as one unwrapped line, which the terminal folds but never cuts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

# A wrapped text column is kept as wide as its longest word up to this, so that a name or a
# unit is not folded mid-word; a droppable column makes room for it first.
WORD_MAX = 20
_PADDING = 2  # a space either side of a cell (but the outer side of the first and last)


@dataclass(frozen=True)
class Column:
    """A column: `whole` (a key or a number: never wrapped) or text (wraps); `right`
    aligns it right; `drop` > 0 lets a narrow terminal leave it out, the highest first."""

    header: str
    whole: bool = False
    right: bool = False
    drop: int = 0


def print_table(console: Console, title: str, columns: Sequence[Column],
                rows: Sequence[Sequence[str]]) -> None:
    """Print `rows` under `title`, fitted to the console's width with every key whole."""
    widths = [_least_width(c, [row[n] for row in rows]) for n, c in enumerate(columns)]
    kept = _fitting(columns, widths, console.width)
    left_out = [c.header for n, c in enumerate(columns) if n not in kept]
    caption = (f"{', '.join(left_out)} left out at {console.width} columns; --json gives "
               "every field" if left_out else None)
    cells = [[row[n] for n in kept] for row in rows]
    if _needed(columns, widths, kept) > console.width:
        _print_lines(console, title, [columns[n] for n in kept], [widths[n] for n in kept],
                     cells, caption)
        return
    table = Table(title=title, title_justify="left", box=box.SIMPLE, caption=caption,
                  caption_justify="left", show_edge=False, pad_edge=False)
    for n in kept:
        column = columns[n]
        table.add_column(column.header, justify="right" if column.right else "left",
                         no_wrap=column.whole, overflow="fold", min_width=widths[n])
    for row in cells:
        table.add_row(*map(Text, row))
    console.print(table)


def _needed(columns: Sequence[Column], widths: Sequence[int], kept: Sequence[int]) -> int:
    """The narrowest the kept columns print in with their keys and numbers whole."""
    total = len(kept) - 1 - _PADDING  # the separators; no edge, no padding at the edges
    return total + sum(_PADDING + widths[n] for n in kept)


def _least_width(column: Column, cells: Sequence[str]) -> int:
    """A whole column's longest cell; a text column's longest word, up to WORD_MAX."""
    if column.whole:
        return max([len(column.header), *map(len, cells)])
    words = [len(word) for text in (column.header, *cells) for word in text.split()]
    return min(max(words, default=1), WORD_MAX)


def _fitting(columns: Sequence[Column], widths: Sequence[int], width: int) -> list[int]:
    """The indices of `columns` less the droppable ones (highest `drop` first) that a
    terminal `width` columns wide cannot hold."""
    kept = list(range(len(columns)))
    for n in sorted((n for n, c in enumerate(columns) if c.drop), key=lambda n: -columns[n].drop):
        if _needed(columns, widths, kept) <= width:
            break
        kept.remove(n)
    return kept


def _print_lines(console: Console, title: str, columns: Sequence[Column],
                 widths: Sequence[int], rows: Sequence[Sequence[str]],
                 caption: str | None) -> None:
    """One unwrapped line per row, in columns two spaces apart: for a key longer than the
    terminal is wide, which the terminal then folds but nothing cuts."""
    def line(cells: Sequence[str]) -> str:
        return "  ".join(cell.rjust(width) if column.right else cell.ljust(width)
                         for cell, width, column in zip(cells, widths, columns,
                                                        strict=True)).rstrip()

    console.print(title, highlight=False, soft_wrap=True)
    console.print(line([c.header for c in columns]), style="bold", highlight=False,
                  soft_wrap=True)
    for row in rows:
        console.print(line(row), highlight=False, soft_wrap=True)
    if caption:
        console.print(caption, style="dim", highlight=False, soft_wrap=True)
