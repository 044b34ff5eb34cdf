"""`loader init --pack NAME [--force]`: copy a tested pack into the project.

A pack (a folder of `loader/packs/`, package data) is laid out as the project it goes into: mapping files
under mappings/, a sample and its licence notice under samples/. Nothing is overwritten unless
--force (every file that exists is named, and nothing is written). The copied mappings are then
validated as `loader validate` would (offline: their samples are files), so a pack that plans
says so at once.
"""

from __future__ import annotations

import os

from loader.config import Config
from loader.errors import EXIT_ERROR, EXIT_OK, UsageError
from loader.files.package_data import pack_files, pack_names
from loader.files.safe_write import write_bytes
from loader.project import is_project_mapping
from loader.source.sources import read_sources
from loader.suggestions import did_you_mean


def copy_pack(name: str, config: Config, *, force: bool) -> int:
    """Copy the pack `name` into the project's folder; 0 when its mappings validate there, else 1."""
    known = pack_names()
    if name not in known:
        raise UsageError(f"no pack named {name!r}" + did_you_mean(name, known), hint=f"the packs: {', '.join(known)}")
    files = pack_files(name)
    root = config.root
    existing = [path for path in files if (root / path).exists()]
    if existing and not force:
        raise UsageError(f"not copying pack {name}: already in the project: {', '.join(existing)}",
                         hint="pass --force to replace them, or copy the pack into another folder")
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, data, private=False)  # never through a link planted where a file goes
    mappings = [root / path for path in files if is_project_mapping(root / path, root)]
    shown = " ".join(os.path.relpath(path) for path in mappings)
    print(f"copied pack {name}: {len(files)} files into {os.path.relpath(root)}")
    for path in files:
        print(f"  {path}")
    if read_sources(mappings, config.profile, online=False).has_errors:
        print(f"The pack's mappings do not validate here: run `loader validate {shown}`.")
        return EXIT_ERROR
    print(f"It validates. Next: `loader plan {shown}`, then point its sources at your own data.")
    return EXIT_OK
