"""The sources' shapes the last apply (or `history baseline`) recorded, beside the history.

    history/test/                 the history of environment `test` (its head, snapshot, journals)
    history/test.shapes.json      the shape of each source, as the last apply read it

The file sits beside the history folder, outside its serial: recording a shape never makes an
open plan stale, and it holds nothing personal (column names, counts, and only the values of
fields a mapping lists in `drift: values:`, which may not be personal). Each apply replaces the
shapes of the sources it read and keeps the others (another mapping file's sources). A plan
compares against it (`loader.source.drift`). With `history: false` nothing is kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loader.config import Config
from loader.history.location import history_folder

SUFFIX = ".shapes.json"
VERSION = 1


def shapes_path(config: Config, env_name: str | None) -> Path | None:
    """The shapes file of the environment `env_name` (default: the configured one); None when the
    history is off."""
    if config.history is None:
        return None
    name = config.default_environment if env_name is None else env_name
    sandbox_data = None
    if config.is_builtin_sandbox(name):
        from loader.environments import sandbox_files

        sandbox_data = sandbox_files(config)[0]
    folder = history_folder(config.history.as_setting(), project_dir=config.root, environment=name,
                            sandbox_data=sandbox_data)
    return None if folder is None else folder.parent / f"{folder.name}{SUFFIX}"


def read_shapes(path: Path | None) -> dict[str, Any] | None:
    """The shapes recorded at `path`, by source; None when none were recorded (or the file is not
    one this version wrote: drift is then not compared, rather than compared wrongly)."""
    if path is None or not path.is_file():
        return None
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return None
    sources = document.get("sources")
    return sources if isinstance(sources, dict) else None


def record_shapes(path: Path | None, shapes: Mapping[str, Any]) -> None:
    """Replace the shapes of these sources at `path`, keeping the others; written whole, then moved
    into place, so a reader never sees half a file."""
    if path is None or not shapes:
        return
    sources = dict(read_shapes(path) or {})
    sources.update(shapes)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text(json.dumps({"version": VERSION, "sources": dict(sorted(sources.items()))}, indent=1,
                                  sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
