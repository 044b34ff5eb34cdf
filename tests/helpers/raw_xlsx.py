"""Workbooks written as zip + XML by the test itself, in the spellings real programs use.

openpyxl always writes Transitional XML, unprefixed, with parts named xl/worksheets/sheet1.xml. Real
files also come as Strict Open XML (Excel's "Strict Open XML Spreadsheet"), with prefixed elements
(`<x:c>`, the .NET Open XML SDK) and with other part names; these builders write those shapes.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

TRANSITIONAL = {
    "main": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "rel": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
}
STRICT = {
    "main": "http://purl.oclc.org/ooxml/spreadsheetml/main",
    "r": "http://purl.oclc.org/ooxml/officeDocument/relationships",
    "rel": "http://purl.oclc.org/ooxml/officeDocument/relationships",
}
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "http://schemas.openxmlformats.org/package/2006/content-types"


def _prefixed(xml: str, prefix: str) -> str:
    """Put `prefix:` before every element name of unprefixed XML."""
    if not prefix:
        return xml
    return re.sub(r"<(/?)([A-Za-z]\w*)(?=[\s/>])", rf"<\1{prefix}:\2", xml)


def cells(rows: Sequence[Sequence[object]]) -> str:
    """<sheetData> for rows of plain values: numbers as numbers, text as inline strings, None skipped."""
    out = []
    for r, row in enumerate(rows, start=1):
        out.append(f'<row r="{r}">')
        for c, value in enumerate(row):
            ref = f"{chr(65 + c)}{r}"
            if value is None:
                continue
            if isinstance(value, (int, float)):
                out.append(f'<c r="{ref}"><v>{value}</v></c>')
            else:
                out.append(f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>')
        out.append("</row>")
    return "<sheetData>" + "".join(out) + "</sheetData>"


def workbook_parts(
    sheets: Sequence[tuple[str, str | None]],
    *,
    strict: bool = False,
    prefix: str = "",
    folder: str = "xl",
    sheet_part: str = "worksheets/sheet{n}.xml",
    styles: str | None = None,
    shared_strings: Sequence[str] | None = None,
    date1904: bool = False,
    workbook_head: str = "",
) -> dict[str, str]:
    """The parts of a workbook: `sheets` are (name, worksheet body XML) or (name, None) for a chart sheet.

    The body is the worksheet's inner XML (`<sheetData>…</sheetData><mergeCells>…`), unprefixed;
    `prefix` spells every element with that namespace prefix, as the .NET Open XML SDK does.
    """
    ns = STRICT if strict else TRANSITIONAL
    p = f"{prefix}:" if prefix else ""
    xmlns = f'xmlns{":" + prefix if prefix else ""}="{ns["main"]}" xmlns:r="{ns["r"]}"'
    parts: dict[str, str] = {}
    rels = []
    entries = []
    overrides = []
    for n, (name, body) in enumerate(sheets, start=1):
        if body is None:
            target = f"chartsheets/sheet{n}.xml"
            parts[f"{folder}/{target}"] = f'<{p}chartsheet {xmlns}><{p}drawing r:id="rId1"/></{p}chartsheet>'
            kind = "chartsheet"
        else:
            target = sheet_part.format(n=n)
            parts[f"{folder}/{target}"] = f"<{p}worksheet {xmlns}>{_prefixed(body, prefix)}</{p}worksheet>"
            kind = "worksheet"
        rels.append(f'<Relationship Id="rId{n}" Type="{ns["rel"]}/{kind}" Target="{target}"/>')
        entries.append(f'<{p}sheet name="{name}" sheetId="{n}" r:id="rId{n}"/>')
        overrides.append(f'<Override PartName="/{folder}/{target}" ContentType="application/xml"/>')
    extra = len(sheets) + 1
    if styles is not None:
        parts[f"{folder}/styles.xml"] = f"<{p}styleSheet {xmlns}>{_prefixed(styles, prefix)}</{p}styleSheet>"
        rels.append(f'<Relationship Id="rId{extra}" Type="{ns["rel"]}/styles" Target="styles.xml"/>')
        extra += 1
    if shared_strings is not None:
        items = "".join(f"<{p}si><{p}t>{s}</{p}t></{p}si>" for s in shared_strings)
        parts[f"{folder}/sharedStrings.xml"] = f"<{p}sst {xmlns}>{items}</{p}sst>"
        rels.append(f'<Relationship Id="rId{extra}" Type="{ns["rel"]}/sharedStrings" Target="sharedStrings.xml"/>')
    props = f'<{p}workbookPr date1904="1"/>' if date1904 else ""
    parts[f"{folder}/workbook.xml"] = (
        f"{workbook_head}<{p}workbook {xmlns}>{props}<{p}sheets>{''.join(entries)}</{p}sheets></{p}workbook>"
    )
    parts[f"{folder}/_rels/workbook.xml.rels"] = f'<Relationships xmlns="{_PKG}">{"".join(rels)}</Relationships>'
    parts["_rels/.rels"] = (
        f'<Relationships xmlns="{_PKG}"><Relationship Id="rId1" Type="{ns["rel"]}/officeDocument" '
        f'Target="{folder}/workbook.xml"/></Relationships>'
    )
    main_type = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    parts["[Content_Types].xml"] = (
        f'<Types xmlns="{_CT}"><Default Extension="rels" '
        f'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        f'<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/{folder}/workbook.xml" ContentType="{main_type}"/>{"".join(overrides)}</Types>'
    )
    return parts


def write_package(path: Path, parts: Mapping[str, str | bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in parts.items():
            archive.writestr(name, data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def write_raw_workbook(path: Path, sheets: Sequence[tuple[str, str | None]], **options: object) -> Path:
    return write_package(path, workbook_parts(sheets, **options))  # type: ignore[arg-type]
