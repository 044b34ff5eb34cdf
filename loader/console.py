"""Progress bars for long steps: rich bars on a terminal, nothing otherwise.

    with progress_bars() as bars:               # enabled only when stdout is a terminal
        bar = bars.add("fetching courses")      # total unknown: a counter with a rate
        bar.set_total(1_000)                    # known later? set it
        bar.advance(100)
        bar.done()                              # fills the bar (or just stops the counter)

`progress_bars(enabled=False)` (or a non-terminal stdout) gives bars whose methods do nothing, so
callers never branch. Bars are drawn on stdout, only when it is a terminal.

Colour, for every console made here: only on a terminal or with `FORCE_COLOR` (rich reads it),
never with `--no-color` (the commands run inside `colour_choice(no_color=True)`) or `NO_COLOR`.

    with block_progress({"schools": 3, "courses": 40}) as advance:   # apply: a bar per block
        if advance is not None:                                     # None: nothing drawn
            advance("schools")                                      # one record of the block done

`ask_yes(question)` asks on stderr and reads the answer from stdin (None when stdin is no terminal).

Text that reaches a terminal or a log holds names, keys and arguments the user (or a file) gave:
`clean` shows every control character in it as a visible escape (a carriage return, an escape
sequence, BEL, a line break, a bidirectional override), so nothing can clear the screen or forge a
line; `shown` does so for a whole error, keeping the line breaks of its own layout (a break before
an indented line) and cutting any run of more than ECHO_LIMIT characters without a space (an
echoed 100 KB argument, a 5,000-character path) to ECHO_LIMIT and "…".
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

# C0 and C1 controls, DEL, line/paragraph separators, bidi embeddings/overrides/isolates, and the
# lone surrogates a byte that is not UTF-8 becomes in a command-line argument or a file name.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\e"}
ECHO_LIMIT = 200
_LONG_RUN = re.compile(rf"\S{{{ECHO_LIMIT + 1},}}")


def clean(text: str) -> str:
    """`text` with every control character shown as an escape (`\\r`, `\\e`, `\\u202e`): inert anywhere."""
    if text.isprintable() or not _UNSAFE.search(text):  # isprintable: the fast common case
        return text
    return _UNSAFE.sub(lambda m: _NAMED.get(m.group(), f"\\u{ord(m.group()):04x}"), text)


def shown(text: str) -> str:
    """A message as it may be printed: `clean` but for the breaks of its own layout (each before an
    indented line), every run of more than ECHO_LIMIT non-blank characters cut (see the docstring)."""
    first, *rest = text.split("\n")
    pieces = [_short(clean(first))]
    for line in rest:
        pieces.append(("\n" if line.startswith("  ") else "\\n") + _short(clean(line)))
    return "".join(pieces)


def _short(text: str) -> str:
    if len(text) <= ECHO_LIMIT:
        return text
    return _LONG_RUN.sub(lambda m: m.group()[:ECHO_LIMIT] + "…", text)


class Bar(Protocol):
    def advance(self, amount: int = 1) -> None: ...
    def set_total(self, total: int) -> None: ...
    def done(self) -> None: ...


class Bars(Protocol):
    def add(self, description: str, total: int | None = None) -> Bar: ...


class _NoBar:
    def advance(self, amount: int = 1) -> None:
        pass

    def set_total(self, total: int) -> None:
        pass

    def done(self) -> None:
        pass


class _NoBars:
    def add(self, description: str, total: int | None = None) -> Bar:
        return _NoBar()


class _RichBar:
    def __init__(self, progress: Progress, task: TaskID):
        self._progress = progress
        self._task = task

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._task, amount)

    def set_total(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def done(self) -> None:
        task = next(t for t in self._progress.tasks if t.id == self._task)
        if task.total:  # a known total: fill the bar up to it
            self._progress.update(self._task, completed=task.total)
        else:  # a counter: what was counted is the total
            self._progress.update(self._task, total=task.completed)

    @property
    def counts(self) -> tuple[float, float | None]:
        """(completed, total) as drawn: for tests and for the caller's own summary."""
        task = next(t for t in self._progress.tasks if t.id == self._task)
        return task.completed, task.total


class _RichBars:
    def __init__(self, progress: Progress):
        self._progress = progress

    def add(self, description: str, total: int | None = None) -> Bar:
        return _RichBar(self._progress, self._progress.add_task(description, total=total))


_NO_COLOR: ContextVar[bool] = ContextVar("loader_no_color", default=False)


@contextmanager
def colour_choice(*, no_color: bool) -> Iterator[None]:
    """`--no-color` for what runs inside: every console then prints plain text (a context variable,
    set and reset around one command, so nothing outlives it)."""
    token = _NO_COLOR.set(no_color)
    try:
        yield
    finally:
        _NO_COLOR.reset(token)


def plain() -> bool:
    """No colour: `--no-color` given, or `NO_COLOR` set and not empty (no-color.org)."""
    return _NO_COLOR.get() or bool(os.environ.get("NO_COLOR"))


def console(stream: object | None = None, *, live: bool = False, soft_wrap: bool = False) -> Console:
    """A rich console on `stream` (default stdout), coloured as the module docstring says; user text
    is never read as emoji codes. `live`: for progress bars, still drawn on a terminal when colour is
    off. `soft_wrap`: lines printed whole, never wrapped."""
    file = stream if stream is not None else sys.stdout
    width = None if _isatty(file) else 160  # pipes and logs: long lines, never wrapped mid-place
    off = plain()
    return Console(file=file, force_terminal=False if off and not live else None, no_color=off,  # type: ignore[arg-type]
                   highlight=False, width=width, soft_wrap=soft_wrap, emoji=False)


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def is_terminal() -> bool:
    return sys.stdout.isatty()


def _progress(*columns: ProgressColumn, transient: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        *columns,
        console=console(live=True),
        transient=transient,
    )


@contextmanager
def progress_bars(enabled: bool | None = None) -> Iterator[Bars]:
    """Bars on stdout while the block runs; `enabled=None` means "when stdout is a terminal"."""
    if not (is_terminal() if enabled is None else enabled):
        yield _NoBars()
        return
    with _progress(TimeElapsedColumn(), transient=True) as progress:
        yield _RichBars(progress)


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "-/s")


BlockAdvance = Callable[[str], None]


@contextmanager
def block_progress(totals: Mapping[str, int], enabled: bool | None = None) -> Iterator[BlockAdvance | None]:
    """A bar per block (records done of `totals[block]`, rate, time left) on stdout while the block
    runs, left on screen after; yields `advance(block)`, or None when nothing is drawn (`enabled=None`
    means "when stdout is a terminal"), so a caller with nothing to show pays nothing per record."""
    if not (is_terminal() if enabled is None else enabled):
        yield None
        return
    progress = _progress(_RateColumn(), TimeRemainingColumn(), transient=False)
    tasks = {name: progress.add_task(name, total=total) for name, total in totals.items()}

    def advance(block: str) -> None:
        task = tasks.get(block)
        if task is not None:
            progress.advance(task)

    with progress:
        yield advance


def ask_yes(question: str) -> bool | None:
    """Ask `question [y/N]` on stderr (stdout may carry a JSON document) and read the answer from
    stdin: True for y or yes; None, without asking, when stdin is not a terminal."""
    if not sys.stdin.isatty():
        return None
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    return input().strip().lower() in ("y", "yes")
