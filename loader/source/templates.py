"""A field's `template` ("{First Name} {Last Name}"): its text parsed into literal parts and columns."""

from __future__ import annotations


def parse_template(text: str) -> tuple[tuple[str, bool], ...]:
    """"{First Name} {Last Name}" -> parts; {{ and }} are literal braces. Raises ValueError."""
    parts: list[tuple[str, bool]] = []
    literal = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{}" and text[i:i + 2] in ("{{", "}}"):
            literal += ch
            i += 2
        elif ch == "{":
            end = text.find("}", i)
            if end < 0:
                raise ValueError(f"unclosed '{{' at character {i + 1}")
            name = text[i + 1:end].strip()
            if not name or "{" in name:
                raise ValueError(f"expected a column name between braces at character {i + 1}")
            if literal:
                parts.append((literal, False))
                literal = ""
            parts.append((name, True))
            i = end + 1
        elif ch == "}":
            raise ValueError(f"unmatched '}}' at character {i + 1} (write }}}} for a literal brace)")
        else:
            literal += ch
            i += 1
    if literal:
        parts.append((literal, False))
    if not any(is_column for _, is_column in parts):
        raise ValueError("a template names at least one column, like {Course Code}")
    return tuple(parts)
