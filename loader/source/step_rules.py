"""A field's value steps (`transform`, `type`, `pattern`, `replace`, `format`, ...) checked and built.

Reads the schema-valid data of one field and reports what it finds wrong through `fail`, as the
block-wide builders in `block_rules` do; `mapping_builder` builds the rest of the field.
"""

from __future__ import annotations

from typing import Any

from loader.source.block_rules import Fail
from loader.source.patterns import Pattern, compile_pattern
from loader.source.step_types import format_problem
from loader.source.steps import Steps, unknown_steps


def field_steps(data: Any, where: tuple[Any, ...], kind: str, fail: Fail) -> Steps | None:
    """A field's value steps, or None where one of them is wrong (each problem reported)."""
    problems = _Counted(fail)
    pattern = replace = None
    raw_pattern = data.get("pattern")
    if raw_pattern is not None:
        regex_text, at = ((raw_pattern["regex"], (*where, "pattern", "regex")) if isinstance(raw_pattern, dict)
                          else (raw_pattern, (*where, "pattern")))
        pattern = regex(regex_text, at, problems)
    if "replace" in data:
        compiled = regex(data["replace"]["pattern"], (*where, "replace", "pattern"), problems)
        replace = (compiled, data["replace"]["with"]) if compiled is not None else None
    steps = Steps(
        transform=tuple(data.get("transform", ())),
        type=kind,
        split=data.get("split"),
        map=dict(data["map"]) if "map" in data else None,  # keys keep their source text
        has_default="default" in data,
        default=data.get("default"),
        pattern=pattern,
        max_length=data.get("max_length"),
        pattern_message=raw_pattern.get("message") if isinstance(raw_pattern, dict) else None,
        replace=replace,
        pad=(data["pad"]["width"], data["pad"].get("with", "0")) if "pad" in data else None,
        formats=_formats(data, where, kind, problems),
    )
    for unknown in unknown_steps(steps):  # the schema lists the steps too: reached only if the two differ
        problems("bad-step", f"there is no {unknown}", (*where, unknown.split()[0]))
    return None if problems.count else steps


def regex(text: str, where: tuple[Any, ...], fail: Fail) -> Pattern | None:
    """The compiled pattern, or None and a finding where it is no regular expression."""
    try:
        return compile_pattern(text)
    except ValueError as exc:
        fail("bad-pattern", f"bad regular expression: {exc}", where)
        return None


def _formats(data: Any, where: tuple[Any, ...], kind: str, fail: Fail) -> tuple[str, ...]:
    formats = data.get("format", ())
    formats = (formats,) if isinstance(formats, str) else tuple(formats)
    if formats and kind not in ("date", "epoch_ms"):
        fail("bad-format", f"`format` is for `type: date` or `type: epoch_ms`; this field's type is {kind}",
             (*where, "format"), key=True)
    for index, fmt in enumerate(formats):
        problem = format_problem(fmt)
        if problem:
            fail("bad-format", problem, (*where, "format", index) if "format" in data and
                 isinstance(data["format"], list) else (*where, "format"))
    return formats


class _Counted:
    """`fail`, counting the problems it reports."""

    def __init__(self, fail: Fail):
        self.fail = fail
        self.count = 0

    def __call__(self, code: str, message: str, where: tuple[Any, ...], *, key: bool = False) -> None:
        self.count += 1
        self.fail(code, message, where, key=key)
