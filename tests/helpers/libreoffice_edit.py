"""Edit a review workbook in LibreOffice itself, as a reviewer would, and save it as xlsx.

Run by the system Python (which has LibreOffice's `uno` module), never imported by the tests:

    python3 libreoffice_edit.py IN.xlsx OUT.xlsx PROFILE_DIR

Sorts the `Review` sheet's rows by record (column B) descending, deletes its rows 3 and 4, and
stores the workbook with Calc's Excel 2007 filter.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import uno
from com.sun.star.beans import PropertyValue


def _property(name: str, value: Any) -> Any:
    prop = PropertyValue()
    prop.Name, prop.Value = name, value
    return prop


def _connect(pipe: str) -> Any:
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
    for _ in range(120):
        try:
            return resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
        except Exception:  # not listening yet
            time.sleep(0.5)
    raise SystemExit("LibreOffice did not start")


def edit(source: Path, target: Path, profile: Path) -> None:
    pipe = f"loader-test-{uuid.uuid4().hex}"
    office = subprocess.Popen(["soffice", "--headless", "--invisible", "--norestore", "--nologo",
                               f"-env:UserInstallation={profile.as_uri()}", f"--accept=pipe,name={pipe};urp;"])
    try:
        context = _connect(pipe)
        desktop = context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
        document = desktop.loadComponentFromURL(source.as_uri(), "_blank", 0, (_property("Hidden", True),))
        sheet = document.Sheets.getByName("Review")
        cursor = sheet.createCursor()
        cursor.gotoEndOfUsedArea(False)
        last = cursor.RangeAddress.EndRow + 1
        rows = sheet.getCellRangeByName(f"A2:M{last}")
        field = uno.createUnoStruct("com.sun.star.table.TableSortField")
        field.Field, field.IsAscending = 1, False
        descriptor = rows.createSortDescriptor()
        for prop in descriptor:
            if prop.Name == "SortFields":
                prop.Value = uno.Any("[]com.sun.star.table.TableSortField", (field,))
        uno.invoke(rows, "sort", (uno.Any("[]com.sun.star.beans.PropertyValue", tuple(descriptor)),))
        sheet.Rows.removeByIndex(2, 2)  # sheet rows 3 and 4
        document.storeToURL(target.as_uri(), (_property("FilterName", "Calc MS Excel 2007 XML"),))
        document.close(True)
        try:
            desktop.terminate()
        except Exception:  # the bridge closes as the office quits
            pass
    finally:
        try:
            office.wait(timeout=60)
        except subprocess.TimeoutExpired:
            office.kill()


if __name__ == "__main__":
    edit(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
