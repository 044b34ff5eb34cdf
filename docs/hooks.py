"""MkDocs hooks (`hooks:` in mkdocs.yml): the tutorial's pictures taken before the build when one
is missing or older than the code, the sample project or the script that takes them.

`docs/screenshots.py` writes them to docs/screenshots/ (ignored by git); where Chromium or
LibreOffice is not installed it writes placeholders naming the tool, so a strict build never fails
for a missing tool. A build with every picture current takes none.
"""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import screenshots  # docs/screenshots.py: MkDocs loads a hook with its folder on the import path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
PICTURES = DOCS / "screenshots"
SCRIPT = Path(screenshots.__file__).resolve()
INPUTS = ("loader", "mappings", "samples", "schemas")  # what the pictures are made of, with SCRIPT
log = logging.getLogger("mkdocs.hooks.screenshots")


def _newest(paths: Iterable[Path]) -> float:
    return max((path.stat().st_mtime for path in paths if path.is_file()), default=0.0)


def stale(folder: Path = PICTURES) -> bool:
    """Whether a picture in `folder` is missing or older than what it is made of."""
    pictures = [folder / name for name in screenshots.PICTURES]
    if not all(picture.is_file() for picture in pictures):
        return True
    made = min(picture.stat().st_mtime for picture in pictures)
    inputs = [SCRIPT, *(path for name in INPUTS for path in (REPO / name).rglob("*")
                        if "__pycache__" not in path.parts and ".loader" not in path.parts)]
    return _newest(inputs) > made


def on_pre_build(config: Any) -> None:
    """Take the pictures again when they are stale (before MkDocs gathers the docs' files)."""
    if not stale():
        return
    log.info("taking the tutorial's pictures (docs/screenshots.py)")
    subprocess.run([sys.executable, str(SCRIPT), str(PICTURES)], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
