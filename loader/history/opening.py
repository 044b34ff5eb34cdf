"""Stand-in: the history of an environment, as the commands open it (the CLI helper's module replaces it)."""

from __future__ import annotations

from collections.abc import Iterable

from loader.config import Config
from loader.environments import sandbox_files
from loader.history.keys import SANDBOX_KEY
from loader.history.store import History


def open_history(config: Config, env_name: str, personal: Iterable[str]) -> History | None:
    personal = frozenset(personal)
    if config.is_builtin_sandbox(env_name):
        folder = sandbox_files(config)[0].parent / "history"
        return History.open(folder, history_key=SANDBOX_KEY, personal=personal)
    if personal:  # no key can be configured until loader.yaml's `history:` exists
        return None
    return History.open(config.root / ".loader" / "history" / env_name, personal=personal)
