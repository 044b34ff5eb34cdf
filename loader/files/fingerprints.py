"""Fingerprints of input files, so `apply --plan` can tell the inputs are the ones planned."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path


def display_path(path: Path) -> str:
    """The path relative to the working directory when it is inside it, else absolute."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def fingerprint_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def fingerprint_inputs(paths: Iterable[Path], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """display path -> "sha256:<hex>" for each distinct input file, sorted by path; the files in
    `known` (display path -> fingerprint, taken when they were read) are not opened again."""
    found = dict(known or {})
    for path in paths:
        shown = display_path(path)
        if shown not in found:
            try:
                found[shown] = fingerprint_file(path)
            except OSError:
                continue  # not readable: reading it was reported as an error at its place
    return dict(sorted(found.items()))
