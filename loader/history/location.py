"""Where a history lives and which key it uses, from plain configuration values.

    history: {path: history, key: {env: LOADER_HISTORY_KEY}}   one folder per environment under path
    history: false                                              no history
    (absent)                                                    as `{path: history}`

The built-in sandbox keeps its history beside its data (`.loader/history/`), so resetting the
sandbox's data resets both, and uses a fixed key of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loader.errors import ConfigError
from loader.history.keys import SANDBOX_KEY

DEFAULT_PATH = "history"


def history_folder(setting: object, *, project_dir: Path, environment: str,
                   sandbox_data: Path | None = None) -> Path | None:
    """The history folder of `environment`, or None when the history is off.

    `setting` is loader.yaml's `history:` value (None when absent); `sandbox_data` the built-in
    sandbox's data file when `environment` is the built-in sandbox.
    """
    if setting is False:
        return None
    if setting is not None and not isinstance(setting, Mapping):
        raise ConfigError("`history:` must be a mapping (`{path: history}`) or false", where="loader.yaml")
    if sandbox_data is not None:
        return sandbox_data.parent / "history"
    path = (setting or {}).get("path", DEFAULT_PATH)
    if not isinstance(path, str) or not path.strip():
        raise ConfigError("`history: path:` must be a folder name", where="loader.yaml",
                          hint="for example `history: {path: history}`")
    if not environment or "/" in environment or environment.startswith("."):
        raise ConfigError(f"environment name {environment!r} cannot name a history folder", where="loader.yaml")
    return project_dir / path / environment


def history_key(setting: object, *, environ: Mapping[str, str],
                builtin_sandbox: bool = False) -> tuple[bytes | None, str | None]:
    """(the history key, the name of its variable): the sandbox's fixed key, the variable's value
    from `history: {key: {env: NAME}}`, or (None, None) when no key is named."""
    if builtin_sandbox:
        return SANDBOX_KEY, None
    spec = setting.get("key") if isinstance(setting, Mapping) else None
    if spec is None:
        return None, None
    name = spec.get("env") if isinstance(spec, Mapping) else None
    if not isinstance(name, str) or not name:
        raise ConfigError("`history: key:` must name an environment variable: `{env: NAME}`", where="loader.yaml")
    value = environ.get(name)
    if not value:
        raise ConfigError(f"the history key's variable {name} is not set", where="loader.yaml",
                          hint=f"set {name} to the history key (a long random text kept as a secret)")
    return value.encode(), name
