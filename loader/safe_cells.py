"""Neutralise spreadsheet formula injection in every workbook and CSV the loader writes.

A text cell beginning with `= + - @` (or a tab or carriage return, which some spreadsheet
programs strip before looking) can be run as a formula when the file is opened or re-saved.
Such text is prefixed with a single quote, as OWASP recommends: the value stays readable and
can never become a formula. Numbers, dates and booleans are never touched.

Use `safe_value` for one value, `safe_row` for a row, and `set_safe_cell` to write an openpyxl
cell (it also pins the cell type to text, so openpyxl never stores it as a formula).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

DANGEROUS_PREFIXES: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"
# Control characters an xlsx cannot hold (openpyxl refuses them); shown as U+FFFD instead.
_ILLEGAL_IN_XLSX = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f]")


def is_dangerous(value: Any) -> bool:
    """True for text a spreadsheet program could read as a formula."""
    return isinstance(value, str) and value.startswith(DANGEROUS_PREFIXES)


def safe_value(value: Any) -> Any:
    """`value`, or the text prefixed with a quote when it could be read as a formula."""
    if is_dangerous(value):
        return QUOTE + value
    return value



def safe_row(values: Iterable[Any]) -> list[Any]:
    return [safe_value(v) for v in values]


def set_safe_cell(worksheet: Any, row: int, column: int, value: Any) -> Any:
    """Write `value` to an openpyxl worksheet cell, neutralised; returns the cell."""
    cell = worksheet.cell(row=row, column=column)
    value = safe_value(value)
    if isinstance(value, str):
        cell.value = _ILLEGAL_IN_XLSX.sub("\ufffd", value)
        cell.data_type = "s"
    else:
        cell.value = value
    return cell
