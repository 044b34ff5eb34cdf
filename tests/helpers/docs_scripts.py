"""The scripts of docs/ (page generators, the screenshots) loaded as modules for their tests, with
docs/ on the import path as running `python docs/NAME.py` puts it (they share docs/generated_part.py)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

DOCS = Path(__file__).resolve().parents[2] / "docs"


def docs_script(name: str) -> ModuleType:
    """docs/`name`.py as a module."""
    if str(DOCS) not in sys.path:
        sys.path.append(str(DOCS))
    return importlib.import_module(name)
