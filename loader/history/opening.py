"""Stand-in: the history a command plans and applies against (the CLI helper writes the real one)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from loader.config import Config
from loader.history.store import History


def open_history(config: Config, env_name: str, personal: Iterable[str]) -> History | None:
    """`.loader/history/<env>` opened with no key; None when an entity is personal (no key here)."""
    if tuple(personal):
        return None
    return History.open(Path(".loader") / "history" / env_name)
