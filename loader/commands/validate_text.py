"""`loader validate`'s text: each problem with its place, the mapping line it names quoted with a
caret under the column, `error:` in red and `warning:` in yellow on a terminal.

Colour follows the conventions of `loader.console`: only on a terminal, never with `--no-color` or
`NO_COLOR` (plain text then), and with `FORCE_COLOR` where no terminal is (rich reads it).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.text import Text

from loader.console import console
from loader.files.inputs import InputRefused, read_regular_file
from loader.places import MappingPlace
from loader.report.finding_groups import ShownFinding

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow"}
QUOTED_WIDTH = 160  # a quoted line longer than this is cut around the column


def console_for(out: TextIO) -> Console:
    """The command line's console on `out`, lines printed whole."""
    return console(out, soft_wrap=True)


class MappingLines:
    """The lines of the mapping files quoted by one run, each file read once."""

    def __init__(self) -> None:
        self._files: dict[str, list[str]] = {}

    def of(self, file: str) -> list[str]:
        if file not in self._files:
            try:
                self._files[file] = read_regular_file(Path(file)).decode("utf-8").splitlines()
            except (OSError, InputRefused, UnicodeDecodeError):
                self._files[file] = []
        return self._files[file]


def print_finding(console: Console, finding: ShownFinding, lines: MappingLines) -> None:
    """`error: file:line:col: message`, then the line of the mapping file it names, with a caret."""
    line = Text()
    line.append(f"{finding.severity}:", style=SEVERITY_STYLES.get(finding.severity, ""))
    where = finding.place_text
    line.append(f" {where}: {finding.text}" if where else f" {finding.text}")
    console.print(line)
    if isinstance(finding.where, MappingPlace):
        for quoted in quoted_line(finding.where, lines.of(finding.where.file)):
            console.print(Text(quoted, style="dim" if quoted.lstrip().startswith("|") else ""))


def quoted_line(place: MappingPlace, lines: list[str]) -> list[str]:
    """The two lines that show `place` in a file of `lines`: its line (numbered) and a caret under
    its column; nothing when the line is not there."""
    if not 1 <= place.line <= len(lines):
        return []
    text = lines[place.line - 1]
    column = max(place.col - 1, 0)
    if len(text) > QUOTED_WIDTH:  # keep the column in view
        start = max(0, min(column - QUOTED_WIDTH // 2, len(text) - QUOTED_WIDTH))
        text, column = "…" + text[start + 1 : start + QUOTED_WIDTH - 1] + "…", column - start
    number = f"{place.line:>3}"
    return [f"{number} | {text}", f"{' ' * len(number)} | {' ' * column}^"]

