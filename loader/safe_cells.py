"""Neutralise spreadsheet formula injection in every workbook and CSV the loader writes, and keep
every text the service can hold exact in a workbook.

A text cell beginning with `= + - @` (or a tab or carriage return, which some spreadsheet
programs strip before looking) can be run as a formula when the file is opened or re-saved.
Such text is prefixed with a single quote, as OWASP recommends: the value stays readable and
can never become a formula. Numbers, dates and booleans are never touched. Text that already
begins with quotes followed by such a character (`'=1+1`) gets one quote more, so that the
loader's readers, which drop exactly one quote before `'*[=+-@\\t\\r]` (`unneutralised`), give
back what the service holds: writing then reading is the identity on every text.

An xlsx cannot hold most control characters as they are (XML 1.0 forbids them, and an XML parser
reads a carriage return as a line feed), so workbook text is escaped as the format defines it
(ECMA-376 Part 1, 22.9.2.19, ST_Xstring): a control character or carriage return becomes
`_xHHHH_`, and an underscore that would start such an escape is itself escaped as `_x005F_`.
calamine (the loader's reader) decodes them; the openpyxl reading path decodes them with
`unescape_xlsx_text`.

Use `safe_value` for one value, `safe_row` for a row of a CSV, `xlsx_row` for a row of a
workbook, and `set_safe_cell` to write an openpyxl cell (it also pins the cell type to text, so
openpyxl never stores it as a formula).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

DANGEROUS_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
# Text a reader of the loader's own workbooks takes as neutralised: quotes, then a dangerous prefix.
QUOTED_PREFIX = re.compile(r"'+[=+\-@\t\r]")
_NEEDS_QUOTE = re.compile(r"'*[=+\-@\t\r]")
# What ST_Xstring escapes: characters XML 1.0 cannot hold (or turns into a line feed, as \r), the
# two non-characters U+FFFE and U+FFFF, and an underscore that would read as the start of an escape.
_XLSX_ESCAPED = re.compile(r"[\x00-\x08\x0b-\x0c\x0d\x0e-\x1f\ufffe\uffff]|_(?=x[0-9A-Fa-f]{4})")
_XLSX_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def is_dangerous(value: Any) -> bool:
    """True for text a spreadsheet program could read as a formula."""
    return isinstance(value, str) and value.startswith(DANGEROUS_PREFIXES)


def safe_value(value: Any) -> Any:
    """`value`, or the text prefixed with a quote when it could be read as a formula (or, already
    quoted, would lose a quote when the loader reads it back)."""
    if isinstance(value, str) and _NEEDS_QUOTE.match(value) is not None:
        return QUOTE + value
    return value


def safe_row(values: Iterable[Any]) -> list[Any]:
    return [safe_value(v) for v in values]


def escape_xlsx_text(text: str) -> str:
    """`text` as an xlsx cell holds it: control characters as `_xHHHH_`, an underscore that would
    start such an escape as `_x005F_` (so a literal "_x000D_" stays literal)."""
    return _XLSX_ESCAPED.sub(_escaped, text) if _needs_escape(text) else text


def _needs_escape(text: str) -> bool:
    return "_" in text or not text.isprintable()


def _escaped(match: re.Match[str]) -> str:
    return f"_x{ord(match.group(0)):04X}_"


def unescape_xlsx_text(text: str) -> str:
    """The text an xlsx cell's `_xHHHH_` escapes stand for (one pass, left to right, as Excel reads them)."""
    if "_x" not in text:
        return text
    return _XLSX_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text)


def xlsx_value(value: Any) -> Any:
    """`value` as a workbook cell must hold it: neutralised, and its text escaped (`escape_xlsx_text`)."""
    value = safe_value(value)
    return escape_xlsx_text(value) if isinstance(value, str) else value


def xlsx_row(values: Iterable[Any]) -> list[Any]:
    return [xlsx_value(v) for v in values]


def set_safe_cell(worksheet: Any, row: int, column: int, value: Any) -> Any:
    """Write `value` to an openpyxl worksheet cell, neutralised and escaped; returns the cell."""
    cell = worksheet.cell(row=row, column=column)
    value = xlsx_value(value)
    cell.value = value
    if isinstance(value, str):
        cell.data_type = "s"
    return cell
