"""A `sources:` entry's options read as values a Source can hold: text, `{env: NAME}`, maps.

A Source is hashable (it keys the reads of one run), so a map an entry gives is held as its
(key, value) pairs sorted by key, and `{env: NAME}` as an `EnvRef`. Anything of the wrong shape is
a MappingError naming the source and the option (`named_sources` makes it a finding at its place).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loader.config import EnvRef
from loader.errors import MappingError
from loader.source.readers.kinds import Source


def text(name: str, entry: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    """The option `key` as text (None when it is not given and not required)."""
    value = entry.get(key)
    if value is None and not required:
        return None
    if value is None:
        raise MappingError(f"source {name!r} needs {key}:", hint=f"add {key}: to the source's entry")
    if not isinstance(value, str) or not value.strip():
        raise MappingError(f"source {name!r}: {key}: must be text", hint=f"e.g. {key}: \"...\"")
    return value


def text_or_env(name: str, entry: dict[str, Any], key: str, *, required: bool = False) -> str | EnvRef | None:
    """The option `key` as text, or as `{env: NAME}`: the variable read when the source is read."""
    value = entry.get(key)
    if isinstance(value, dict):
        return env_ref(name, key, value)
    return text(name, entry, key, required=required)


def env_ref(name: str, key: str, value: Any) -> EnvRef:
    """`{env: NAME}` as an EnvRef; anything else is an error (secrets are never written in a mapping)."""
    if isinstance(value, dict) and set(value) == {"env"} and isinstance(value["env"], str) and value["env"]:
        return EnvRef(value["env"])
    raise MappingError(f"source {name!r}: {key}: must be {{env: NAME}}",
                       hint="a secret is read from an environment variable, never written in the mapping")


def pairs(name: str, entry: dict[str, Any], key: str) -> tuple[tuple[str, Any], ...]:
    """The map option `key` as its (key, value) pairs sorted by key (none when it is not given)."""
    value = entry.get(key)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise MappingError(f"source {name!r}: {key}: must be a map", hint=f"e.g. {key}: {{name: value}}")
    return tuple(sorted((str(k), v) for k, v in value.items()))


def flag(name: str, entry: dict[str, Any], key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise MappingError(f"source {name!r}: {key}: must be true or false")
    return value


def base_of(source: Source) -> Path:
    """The folder a source's relative paths are relative to: its mapping file's."""
    return Path(source.option("base", "."))
