"""Old binary Excel workbooks (.xls, Excel 97-2003): recognised, and refused with what to do."""

from __future__ import annotations

from loader.errors import SheetError
from loader.source.readers.kinds import Source, SourceKind, Wanted
from loader.source.readers.rows import SheetData

SUFFIXES = frozenset({".xls", ".xlt"})
MESSAGE = "this is an old binary Excel workbook (.xls, Excel 97-2003 format), which the loader does not read"
HINT = "open it in Excel or LibreOffice and save as .xlsx: File › Save As… with the file type Excel Workbook (.xlsx)"


def _refuse(source: Source, display: str, sheet: str | None, wanted: Wanted) -> SheetData:
    raise SheetError(MESSAGE, where=display, hint=HINT)


KIND = SourceKind("old_excel", _refuse, SUFFIXES)
