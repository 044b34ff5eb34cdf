"""The shared strings of a workbook, as far as calamine cannot be trusted with them.

calamine reads the shared strings itself; this pass bounds them first (the longest string,
`limits.STRING_CHARS`) and finds the rich texts (runs of differently formatted text) whose runs
begin or end with whitespace, which calamine trims ("Example " + "richtext" reads
"Examplerichtext"). Byte searches decide whether a parse is needed at all; most workbooks need none.
"""

from __future__ import annotations

from xml.parsers import expat

from loader.errors import SheetError
from loader.safe_cells import unescape_xlsx_text
from loader.source.readers import limits
from loader.source.readers.xlsx_package import Package, expat_parser


class Runs:
    """The runs of one rich text (`<r><t>…</t></r>…`), their text as written (phonetic runs left out)."""

    def __init__(self) -> None:
        self.inside = False
        self.pieces: list[str] = []
        self.texts: list[list[str]] = []
        self.in_run = self.in_phonetic = self.had_run = False

    def start(self, local: str) -> None:
        if local == "r":
            self.in_run = self.had_run = True
        elif local == "rPh":
            self.in_phonetic = True
        elif local == "t" and not self.in_phonetic:
            self.pieces = []
            self.texts.append(self.pieces)

    def end(self, local: str) -> None:
        if local == "r":
            self.in_run = False
        elif local == "rPh":
            self.in_phonetic = False

    def text(self, data: str) -> None:
        if not self.in_phonetic:
            self.pieces.append(data)

    def trimmed(self) -> bool:
        """True for rich text a run of which begins or ends with whitespace (calamine trims it)."""
        return self.had_run and any(t != t.strip() for t in map("".join, self.texts))

    def joined(self) -> str:
        return unescape_xlsx_text("".join(map("".join, self.texts)))


def _strings_at_a_glance(package: Package, part: str, limit: int) -> tuple[bool, bool]:
    """By byte searches in one pass over the part: (no string can hold `limit` characters, some string
    has runs of rich text). Short: every `limit // 2` bytes hold an <si> or </si> tag (a character is
    at least a byte, and "<" never stands raw in text); prefixed tags (<x:si>) or one long gap leave
    the answer to the parser."""
    window = max(limit // 2, 1)
    since = 0  # bytes since the last tag, carried across blocks
    short, runs = True, False
    for block in package.chunks(part):
        runs = runs or b"<r>" in block or b":r>" in block
        at = 0
        while short and at < len(block):
            end = min(at + window - since, len(block))
            found = max(block.rfind(b"<si>", at, end + 3), block.rfind(b"</si>", at, end + 4))
            if found < 0:
                since += end - at
                short = since < window
            else:
                since = 0
                end = found + 4
            at = end
    return short, runs


def read_strings(package: Package, part: str) -> dict[int, str]:
    """Bound the shared strings before calamine holds them all (the part's size and each string's
    length), and find those with runs calamine would trim: index -> text (see `Runs`)."""
    if not package.has(part):
        return {}
    where = f"{package.display} › {part}"
    limit = limits.STRING_CHARS.value()
    short, runs = _strings_at_a_glance(package, part, limit)
    if short and not runs:
        return {}
    parser = expat_parser(where)
    found: dict[int, str] = {}
    index, length = -1, 0
    rich = Runs()

    def start(name: str, _: dict[str, str]) -> None:
        nonlocal index, length, rich
        local = name.rpartition("}")[2]
        if local == "si":
            index, length, rich = index + 1, 0, Runs()
            rich.inside = True
        elif rich.inside:
            rich.start(local)

    def end(name: str) -> None:
        local = name.rpartition("}")[2]
        if local == "si":
            rich.inside = False
            if rich.trimmed():
                found[index] = rich.joined()
        elif rich.inside:
            rich.end(local)

    def text(data: str) -> None:
        nonlocal length
        length += len(data)
        if length > limit:
            raise limits.STRING_CHARS.refuse(f"a shared string holds more than {limit:,} characters", where)
        if rich.inside:
            rich.text(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        for block in package.chunks(part):
            parser.Parse(block, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise SheetError(f"the shared strings XML is not well-formed ({expat.errors.messages[exc.code]})",
                         where=where, hint="the file is damaged; open and save it in Excel or LibreOffice") from exc
    return found
