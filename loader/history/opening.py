"""Stand-in: the history of an environment, as the commands open it (the CLI helper's module replaces it)."""

from __future__ import annotations

import os
from collections.abc import Iterable

from loader.config import Config
from loader.environments import sandbox_files
from loader.history.location import history_folder, history_key
from loader.history.store import History


def open_history(config: Config, env_name: str, personal: Iterable[str]) -> History | None:
    builtin = config.is_builtin_sandbox(env_name)
    data = sandbox_files(config)[0] if builtin else None
    folder = history_folder(None, project_dir=config.root, environment=env_name, sandbox_data=data)
    key, variable = history_key(None, environ=os.environ, builtin_sandbox=builtin)
    return None if folder is None else History.open(folder, history_key=key, key_variable=variable, personal=personal)
