"""Value steps: one cell value -> the value a record field holds.

The order (contract sections 4 and 4.1, documented for users in docs/mappings.md):
transform -> replace -> pad -> split -> map/lookup -> type -> default -> pattern -> max_length.

- `transform` works on the cell's text (a number's text never has a trailing ".0"); so do
  `replace` (a regular expression, bounded in time: `loader.source.patterns`) and `pad` (left-pad
  to a width: the code 4101 stored as a number becomes "04101").
- A cell that is empty, or only whitespace (non-breaking spaces included), is empty; so is a
  value that `transform` leaves empty. An empty value takes `default`, else the `empty:` mode
  decides (that is the caller's business: `apply_steps` returns EMPTY).
- `split` (or `type: list`, which splits on ",") makes a list; items are stripped and empty
  items dropped; `map`, the item type (string), `pattern` and `max_length` apply to each item.
- `map` looks the text up as written in the mapping (after transform); a value not listed
  passes through unchanged. The mapped value then goes through `type`, so
  `{type: boolean, map: {Oui: true}}` works. (The contract lists `type` before `map`; looking
  up the source text first is what users expect, and is the only difference.)
- `boolean` accepts yes/no/true/false/y/n/1/0 in any letter case. `date` accepts date cells and
  text as 2027-02-28 or 28/02/2027 (day first, as Australian users write it), giving
  "2027-02-28". `epoch_ms` accepts the same and date-times, taken as UTC, and whole numbers
  (already milliseconds); a time finer than a millisecond is rounded to the nearest one (a cell
  Excel shows as 09:30:00 may hold 09:29:59.999999). `format` replaces the text forms by its
  `strptime` patterns, tried in order; with `serial` a number cell is an Excel serial date (days
  since 1899-12-30, a fraction is the time of day). A date-time at midnight is a date; a day the
  month does not have (31/02/2005) is "that date does not exist".
- `pattern` may carry a `message`, which is what the error says was expected.
- `lookup` (beside `map`): the text is looked up in a table read from another sheet or file
  (`loader.source.lookups`); a miss takes `default` when there is one, else is an error naming
  the table and the closest key (not for a PII field).
- A field marked `pii: true` never has its value spelt out in a message (contract section 7): the
  message says what was expected and that the value is hidden.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from dataclasses import replace as with_changes
from functools import partial
from typing import Any, Final

from loader.source.cell_values import StepError, text_of
from loader.source.patterns import Pattern, PatternTimeout, full_match, substitute
from loader.source.readers import WHITESPACE, CellValue
from loader.source.step_types import SERIAL, TYPE_STEPS

__all__ = ["EMPTY", "SERIAL", "TRANSFORM_STEPS", "TYPE_STEPS", "StepError", "Steps", "UnknownStep", "apply_steps",
           "compile_steps", "gives_text", "plain_text", "text_of", "unknown_steps"]

LIST_SEPARATOR: Final = ","

_SPACES = re.compile(r"[\s\u00a0\u2007\u202f]+")


class _Empty:
    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Final = _Empty()


@dataclass(frozen=True)
class Steps:
    transform: tuple[str, ...] = ()
    type: str = "string"
    split: str | None = None
    map: Mapping[str, Any] | None = None
    has_default: bool = False
    default: Any = None
    pattern: Pattern | None = field(default=None, compare=False)
    max_length: int | None = None
    pattern_message: str | None = None  # what a value failing `pattern` was expected to be, for people
    replace: tuple[Pattern, str] | None = field(default=None, compare=False)  # (regex, replacement text)
    pad: tuple[int, str] | None = None  # (width, fill character)
    formats: tuple[str, ...] = ()  # strptime patterns for date/epoch_ms text, and/or "serial"
    lookup: Mapping[str, Any] | None = field(default=None, compare=False)  # a `lookup:` table, text -> value
    lookup_name: str = ""  # the table for messages: "a Code of codes.xlsx › Faculties"


_PLAIN_TEXT: Final = Steps()
_STRIPPED_TEXT: Final = Steps(transform=("strip",))


def _collapse_spaces(text: str) -> str:
    return _SPACES.sub(" ", text).strip(WHITESPACE)


def _strip(text: str) -> str:
    return text.strip(WHITESPACE)


TRANSFORM_STEPS: Final[Mapping[str, Callable[[str], str]]] = {
    "strip": _strip,
    "upper": str.upper,
    "lower": str.lower,
    "title": str.title,
    "collapse_spaces": _collapse_spaces,
}
"""Each `transform` a mapping may name; schemas/mapping.schema.json lists the same names (a test holds them equal)."""


def _transform(text: str, names: tuple[str, ...]) -> str:
    for name in names:
        step = TRANSFORM_STEPS.get(name)
        if step is None:
            raise UnknownStep(f"transform {name!r}")
        text = step(text)
    return text


def _is_empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip(WHITESPACE))


def apply_steps(value: CellValue | Any, steps: Steps, *, pii: bool = False) -> Any:
    """The field value for one cell, or EMPTY. Raises StepError saying what was expected.

    For a PII field (`pii=True`) the error does not show the value.
    """
    try:
        return _applied(value, steps)
    except StepError as refused:
        if not pii:
            raise
        raise refused.hidden() from None


def compile_steps(steps: Steps, *, pii: bool = False) -> Callable[[Any], Any]:
    """`apply_steps(value, steps, pii=pii)`, made once per field: a text field without steps (the
    most common), or with only `strip`, skips the general path; every other field takes it.

    Raises UnknownStep for a transform or type not in `TRANSFORM_STEPS` or `TYPE_STEPS` (the
    mapping file's checks report those at their place first: `unknown_steps`)."""
    unknown = unknown_steps(steps)
    if unknown:
        raise UnknownStep(unknown[0])
    if gives_text(steps):
        return plain_text if steps == _PLAIN_TEXT else _stripped_text
    if _plain_list(steps):
        return partial(_split_text, separator=steps.split or LIST_SEPARATOR)
    return partial(apply_steps, steps=steps, pii=pii)


class UnknownStep(ValueError):
    """A value step no table here has (a transform or type the mapping checks let through: a bug)."""


def unknown_steps(steps: Steps) -> list[str]:
    """The transforms and the type of `steps` that are not steps: what a mapping must not name."""
    unknown = [f"transform {name!r}" for name in steps.transform if name not in TRANSFORM_STEPS]
    return unknown + ([f"type {steps.type!r}"] if steps.type not in TYPE_STEPS else [])


def _plain_list(steps: Steps) -> bool:
    """True for a list of text without other steps (`split: ";"`, or `type: list`): each item the
    cell's text between separators, stripped, empty items left out (`_split_text`)."""
    plain = steps.pattern is None and steps.replace is None and steps.lookup is None
    bare = with_changes(steps, split=None, type="string")
    return plain and (steps.split is not None or steps.type == "list") and steps.type in ("string", "list") \
        and bare == _PLAIN_TEXT


def _split_text(value: CellValue | Any, separator: str) -> Any:
    """`apply_steps` for a plain list (`_plain_list`), which never raises, without the general
    steps' machinery. A blank cell has no item, so it gives EMPTY as there."""
    if value is None:
        return EMPTY
    kept = _items(value if type(value) is str else text_of(value), separator)
    return kept if kept else EMPTY


def _items(text: str, separator: str) -> list[str]:
    """A list cell's items: its text between separators, stripped, empty ones left out."""
    return [item for part in text.split(separator) if (item := part.strip(WHITESPACE))]


def gives_text(steps: Steps) -> bool:
    """True when the field's value is always text, never empty text (or EMPTY, or a StepError): a
    text field without steps but `strip`."""
    # pattern, replace and lookup do not take part in Steps' equality: they are looked at here
    plain = steps.pattern is None and steps.replace is None and steps.lookup is None
    return plain and steps in (_PLAIN_TEXT, _STRIPPED_TEXT)


def plain_text(value: CellValue | Any) -> Any:
    """A text field's value without steps: the cell's text, EMPTY for an empty cell."""
    if value is None:
        return EMPTY
    if isinstance(value, str):
        return value if value.strip(WHITESPACE) else EMPTY
    return text_of(value)


def _stripped_text(value: CellValue | Any) -> Any:
    if value is None:
        return EMPTY
    text = (value if isinstance(value, str) else text_of(value)).strip(WHITESPACE)
    return text if text else EMPTY


def _applied(value: CellValue | Any, steps: Steps) -> Any:
    if not _is_empty(value) and (steps.transform or steps.replace or steps.pad):
        original = value
        text = _transform(text_of(value), steps.transform)
        if steps.replace is not None:
            try:
                text = substitute(steps.replace[0], steps.replace[1], text)
            except PatternTimeout as exc:
                raise StepError(f"replace: {exc}; the cell holds ", original) from None
        if steps.pad is not None and text.strip(WHITESPACE):
            text = text.rjust(steps.pad[0], steps.pad[1])
        value = text
    if _is_empty(value):
        return _default(steps)
    if steps.split is not None or steps.type == "list":
        separator = steps.split or LIST_SEPARATOR
        kept = _items(text_of(value), separator)
        if not kept:
            return _default(steps)
        item_type = "string" if steps.type == "list" else steps.type
        return [_finish(_convert(_mapped(item, steps), item_type, steps.formats), steps) for item in kept]
    return _finish(_convert(_mapped(value, steps), steps.type, steps.formats), steps)


def _default(steps: Steps) -> Any:
    if not steps.has_default:
        return EMPTY
    if steps.type == "list" or steps.split is not None:
        items = steps.default if isinstance(steps.default, list) else [steps.default]
        kind = "string" if steps.type == "list" else steps.type
        return [_finish(_convert(item, kind, steps.formats), steps) for item in items]
    return _finish(_convert(steps.default, steps.type, steps.formats), steps)


def _mapped(value: Any, steps: Steps) -> Any:
    if steps.map:
        text = text_of(value)
        if text in steps.map:
            return steps.map[text]
    if steps.lookup is not None:
        text = text_of(value).strip(WHITESPACE)
        if text in steps.lookup:
            return steps.lookup[text]
        if steps.has_default:
            return steps.default
        close = difflib.get_close_matches(text, list(steps.lookup), n=1)
        raise _LookupMiss(steps.lookup_name, close[0] if close else None, value)
    return value


class _LookupMiss(StepError):
    """A value not in its `lookup:` table; says the closest key (not for PII fields)."""

    def __init__(self, table: str, close: str | None, found: Any, *, pii: bool = False) -> None:
        hint = f" (did you mean {close!r}?)" if close is not None and not pii else ""
        super().__init__(f"expected {table}{hint}, got ", found, pii=pii)
        self._table, self._close = table, close

    def hidden(self) -> StepError:
        return self if self.pii else _LookupMiss(self._table, self._close, self._found, pii=True)


def _finish(value: Any, steps: Steps) -> Any:
    if steps.pattern is not None and value is not None:
        try:
            matched = full_match(steps.pattern, text_of(value))
        except PatternTimeout as exc:
            raise StepError(f"pattern: {exc}; the cell holds ", value) from None
        if not matched:
            if steps.pattern_message:
                raise StepError(f"expected {steps.pattern_message}, got ", value)
            raise StepError(f"expected text matching pattern {steps.pattern.pattern!r}, got ", value)
    if steps.max_length is not None and isinstance(value, str) and len(value) > steps.max_length:
        raise StepError(f"expected at most {steps.max_length} characters, got {len(value)}: ", value)
    return value


def _convert(value: Any, kind: str, formats: tuple[str, ...] = ()) -> Any:
    if value is None:
        return None  # a mapped or default null means "clear"
    step = TYPE_STEPS.get(kind)
    if step is None:
        raise UnknownStep(f"type {kind!r}")
    return step(value, formats)
