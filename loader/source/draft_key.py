"""Which column a drafted key reads (`loader init`): the natural key, or what is unique instead.

The entity's key field keeps its column when that column's values are unique on every row. When
only a few of its values repeat, they are mistakes in the data: the draft keeps the natural key and
names each repeated value with its rows, as errors to fix. When most of them repeat (a catalogue of
one row per offering), the key reads another column whose values are unique, else a template of
two columns whose pairs are; else nothing is unique and the user must choose.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from loader.source.draft_sample import Sample
from loader.words import plural

# A key column keeps the natural key unless most of its values repeat (a catalogue of one row per
# offering): then a few repeats are mistakes in the data, not a sign of another key.
MOST_REPEAT = 0.5
SHOWN_DUPLICATES = 5  # repeated values named one by one; the rest are counted


@dataclass(frozen=True)
class KeyChoice:
    """What the key field reads instead of its matched column: another `column`, or a `template` of
    two columns; `note` says why; `unresolved` when nothing is unique (the user must choose)."""

    column: str
    template: str | None = None
    note: str | None = None
    unresolved: bool = False


def key_choice(sample: Sample, column: str, field: str) -> KeyChoice | None:
    """What key field `field`, matched to `column`, reads; None when the column serves as it is."""
    if sample.rows < 2 or column in sample.unique:
        return None
    texts = sample.filled.get(column)
    if texts is not None and not most_repeat(texts):
        few = f"the column {column!r} of key field {field} repeats only a few values"
        return KeyChoice(column, note=f"{few}: keyed on it, the natural key; fix the repeated values (init names them)")
    repeats = f"the column {column!r} of key field {field} repeats"
    if texts is None:
        return _unique_column(sample, repeats) or _unresolved(column, repeats)
    counted = f"{plural(len(set(texts)), 'value')} on {plural(len(texts), 'row')}"
    repeats += f" most of its values ({counted}, one row per offering?)"
    return _unique_column(sample, repeats) or _unique_pair(sample, column, texts, repeats) \
        or _unresolved(column, repeats)


def _unique_column(sample: Sample, repeats: str) -> KeyChoice | None:
    """The first column whose values are unique on every row."""
    single = next((c for c in sample.headers if c in sample.unique), None)
    if single is None:
        return None
    return KeyChoice(single, note=f"{repeats}; keyed on {single!r}, whose values are unique: check it")


def _unique_pair(sample: Sample, column: str, texts: Sequence[str], repeats: str) -> KeyChoice | None:
    """`{column}-{other}` for the first other filled column whose pairs with `column` are unique."""
    other = next((name for name, others in sample.filled.items()
                  if name != column and len(set(zip(texts, others, strict=True))) == sample.rows), None)
    if other is None:
        return None
    template = f"{{{column}}}-{{{other}}}"
    return KeyChoice("", template, f"{repeats}; keyed on the template {template}, whose values are unique: check it")


def _unresolved(column: str, repeats: str) -> KeyChoice:
    return KeyChoice(column, note=f"CHOOSE THE KEY: {repeats} and no column or pair of columns is unique",
                     unresolved=True)


def most_repeat(texts: Sequence[str]) -> bool:
    """True when more than MOST_REPEAT of the distinct values occur on several rows."""
    counts = Counter(texts)
    repeated = sum(1 for n in counts.values() if n > 1)
    return bool(counts) and repeated > MOST_REPEAT * len(counts)


def repeated_values(sample: Sample, column: str) -> tuple[str, ...]:
    """The values a natural key's `column` repeats (only a few repeat): each as "'CODE' on rows 5 and
    41", the first SHOWN_DUPLICATES and a count of the rest."""
    texts = sample.filled.get(column)
    if texts is None or most_repeat(texts) or len(sample.row_numbers) != len(texts):
        return ()
    rows: dict[str, list[int]] = {}
    for text, number in zip(texts, sample.row_numbers, strict=True):
        rows.setdefault(text, []).append(number)
    repeated = [(text, numbers) for text, numbers in rows.items() if len(numbers) > 1]
    shown = [f"{text!r} on rows {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"
             for text, numbers in repeated[:SHOWN_DUPLICATES]]
    rest = len(repeated) - len(shown)
    return (*shown, f"and {rest} more") if rest else tuple(shown)
