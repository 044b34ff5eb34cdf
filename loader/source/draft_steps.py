"""How a drafted field reads its column's cells: the steps that turn sampled values into the
field's type (enum words mapped, dates read, text cleaned, numbers and booleans typed)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from loader.source.draft_words import LIST_SEPARATORS, STATUS_WORDS
from loader.source.readers import WHITESPACE


def is_number(value: Any) -> bool:
    """A cell holding a number (true/false are not numbers here)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def separator(values: Sequence[Any]) -> str:
    """The first list separator any of the column's texts holds (`;` when none does)."""
    texts = [v for v in values if isinstance(v, str)]
    for candidate in LIST_SEPARATORS:
        if any(candidate in t for t in texts):
            return candidate
    return ";"


def _enum_spec(values: Sequence[Any], allowed: Sequence[str]) -> tuple[dict[str, Any] | None, str | None]:
    """Steps that turn the column's words into the allowed values, or a note saying which words do not fit."""
    words = sorted({str(v).strip(WHITESPACE) for v in values})
    if all(w.upper() in allowed for w in words):
        return {"transform": ["strip", "upper"]}, None
    mapped: dict[str, str] = {}
    unknown: list[str] = []
    for word in words:
        target = word.upper() if word.upper() in allowed else STATUS_WORDS.get(word.lower())
        if target is not None and target in allowed:
            mapped[word] = target
        else:
            unknown.append(word)
    if unknown:
        return None, f"values {', '.join(map(repr, unknown))} are none of {', '.join(allowed)}: add a `map`"
    return {"transform": ["strip"], "map": mapped}, None


def reading_steps(
    prop: Mapping[str, Any], values: Sequence[Any], exact: bool, is_ref: bool
) -> tuple[dict[str, Any] | None, str | None]:
    """How the column's cells become the field's type (None with a note when they cannot), after
    the schema property: enum words mapped, dates read, text cleaned, numbers and booleans typed."""
    kind = prop.get("type")
    if "enum" in prop:
        return ({}, None) if exact else _enum_spec(values, prop["enum"])
    if prop.get("format") == "date":
        if any(isinstance(v, str) for v in values):
            return {"type": "date"}, "dates written as text: 2027-02-28 and 28/02/2027 are read; check the others"
        return {"type": "date"}, None
    if kind in ("string", "array", None) or is_ref:
        steps: dict[str, Any] = {}
        if any(is_number(v) for v in values) and kind != "array":
            steps["type"] = "string"  # codes stored as numbers keep their digits, no trailing .0
        if not exact:
            steps["transform"] = _text_steps(values, prop)
        return steps, None
    if kind in ("integer", "number", "boolean"):
        return {"type": kind}, None
    return {}, None


_INNER_SPACE = re.compile(r"\s\s|[^\S ]")  # two whitespace characters, or one that is not a space


def _text_steps(values: Sequence[Any], prop: Mapping[str, Any]) -> list[str]:
    """`strip` for text (and `lower` for e-mail), `collapse_spaces` when a value holds line breaks,
    tabs or runs of spaces inside."""
    steps = ["strip", "lower"] if prop.get("format") == "email" else ["strip"]
    if any(isinstance(v, str) and _INNER_SPACE.search(v.strip(WHITESPACE)) for v in values):
        steps.append("collapse_spaces")
    return steps
