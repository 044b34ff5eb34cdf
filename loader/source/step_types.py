"""What each `type:` makes of one value (`TYPE_STEPS`): text, numbers, yes/no, dates and
timestamps. Raises StepError saying what was expected.

`date` accepts date cells and text as 2027-02-28 or 28/02/2027 (day first), giving "2027-02-28";
`epoch_ms` accepts the same and date-times, taken as UTC, and whole numbers (already
milliseconds). `format` replaces the text forms by its `strptime` patterns, tried in order; with
`serial` a number cell is an Excel serial date.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Final

from loader.source.cell_values import StepError, text_of
from loader.source.readers import WHITESPACE

_TRUE = frozenset({"yes", "true", "y", "1"})
_FALSE = frozenset({"no", "false", "n", "0"})
_DMY = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})")
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
SERIAL: Final = "serial"
_SERIAL_BASE = datetime(1899, 12, 30)
_LAST_SERIAL = 2_958_466  # 10000-01-01
_SAMPLE = datetime(2027, 2, 28)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_INTEGER = re.compile(r"[+-]?\d+")


def _integer(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip(WHITESPACE)
        if _INTEGER.fullmatch(text):
            return int(text)
        try:
            number = float(text)
        except ValueError:
            number = math.nan
        if number.is_integer():
            return int(number)
    raise StepError("expected a whole number, got ", value)


def _number(value: Any) -> int | float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip(WHITESPACE))
        except ValueError:
            raise StepError("expected a number, got ", value) from None
    else:
        raise StepError("expected a number, got ", value)
    if not math.isfinite(number):
        raise StepError("expected a finite number, got ", value)
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = text_of(value).strip(WHITESPACE).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise StepError("expected yes/no, true/false, y/n or 1/0, got ", value)


def _date(value: Any, formats: tuple[str, ...] = ()) -> date:
    moment = _moment(value, formats)
    if moment is None:
        raise StepError(f"expected a date like {_examples(formats)} or a date cell, got ", value)
    if isinstance(moment, datetime):
        if moment.time() != time(0):
            raise StepError("expected a date, got a date and time ", value)
        return moment.date()
    return moment


def _moment(value: Any, formats: tuple[str, ...]) -> date | datetime | None:
    """The date or date-time a cell holds, read as `formats` say; None when it holds neither.

    Raises StepError when the text has the shape of a date the calendar does not have.
    """
    if isinstance(value, datetime | date):
        return value
    if SERIAL in formats and isinstance(value, int | float) and not isinstance(value, bool):
        return _serial(value)
    if not isinstance(value, str):
        return None
    text = value.strip(WHITESPACE)
    patterns = [f for f in formats if f != SERIAL]
    impossible = False
    if not patterns:
        found = _DMY.fullmatch(text) or _ISO.fullmatch(text)
        if found:
            day, month, year = (int(g) for g in (found.groups() if found.re is _DMY else reversed(found.groups())))
            try:
                return date(year, month, day)
            except ValueError:
                impossible = True
    for pattern in patterns:
        try:
            return datetime.strptime(text, pattern)
        except ValueError as exc:
            impossible = impossible or "out of range" in str(exc)
    if impossible:
        raise StepError("that date does not exist: ", value)
    return None


def _serial(value: float) -> datetime | None:
    """An Excel serial date (the 1900 date system): days since 1899-12-30; the fraction is the time."""
    if not (1 <= value < _LAST_SERIAL):
        return None
    if 60 <= value < 61:
        raise StepError("that date does not exist (Excel's serial 60 is 29 February 1900): ", value)
    base = _SERIAL_BASE if value >= 61 else _SERIAL_BASE + timedelta(days=1)
    return base + timedelta(microseconds=round(value * 86_400_000_000))


def format_problem(fmt: str) -> str | None:
    """Why a `format` entry cannot read dates, or None: it must be `serial` or name a day, month and year."""
    if fmt == SERIAL:
        return None
    has = {code for code in re.findall(r"%(.)", fmt.replace("%%", ""))}
    if not has & {"d", "j"} or not has & {"m", "b", "B", "j"} or not has & {"Y", "y"}:
        return (f"format {fmt!r} does not give a whole date: write a strptime pattern with a day, a month and "
                "a year, such as %d/%m/%Y or %d %b %Y, or `serial` for Excel serial numbers")
    try:
        datetime(2027, 2, 28).strftime(fmt)
    except ValueError as exc:
        return f"format {fmt!r} is not a strptime pattern: {exc}"
    return None


def _examples(formats: tuple[str, ...]) -> str:
    shown = [_SAMPLE.strftime(f) for f in formats if f != SERIAL] or ["2027-02-28", "28/02/2027"]
    if SERIAL in formats:
        shown.append("an Excel serial number")
    return " or ".join(shown) if len(shown) < 3 else ", ".join(shown[:-1]) + " or " + shown[-1]


def _epoch_ms(value: Any, formats: tuple[str, ...] = ()) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and SERIAL not in formats:
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip(WHITESPACE)):
        return int(value.strip(WHITESPACE))
    moment: date | datetime | None = None
    if isinstance(value, str) and not formats:
        try:
            moment = datetime.fromisoformat(value.strip(WHITESPACE))
        except ValueError:
            moment = None
    if moment is None:
        moment = _moment(value, formats)
    if moment is None:
        shown = _examples(formats) if formats else "2027-02-28T09:30"
        raise StepError(f"expected a date or date-time like {shown} or a date cell, got ", value)
    if not isinstance(moment, datetime):
        moment = datetime.combine(moment, time(0))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # Whole microseconds, rounded to the nearest millisecond: a float timestamp times 1000,
    # truncated, turns a cell holding 09:29:59.999999 (Excel's 09:30) into 09:29:59.999.
    milliseconds, rest = divmod((moment - _EPOCH) // _MICROSECOND, 1000)
    return milliseconds + (rest >= 500)


def _text(value: Any, formats: tuple[str, ...]) -> str:
    return text_of(value)


def _date_text(value: Any, formats: tuple[str, ...]) -> str:
    return _date(value, formats).isoformat()


TYPE_STEPS: Final[Mapping[str, Callable[[Any, tuple[str, ...]], Any]]] = {
    "string": _text,
    "integer": lambda value, formats: _integer(value),
    "number": lambda value, formats: _number(value),
    "boolean": lambda value, formats: _boolean(value),
    "date": _date_text,
    "epoch_ms": _epoch_ms,
    "list": _text,  # a list's items are text
}
"""Each `type` a mapping may name, as what it makes of one (non-null) value with the field's
`format`s; schemas/mapping.schema.json lists the same names (a test holds them equal)."""
