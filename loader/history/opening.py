"""The history a command works with: from loader.yaml's `history:` and the chosen environment.

    open_history(config, "test", personal={"applicants"})   History, or None for `history: false`

The built-in sandbox keeps its history beside its data file (`.loader/history/`) under a fixed key
of its own, so it needs no setup and `rm -rf .loader` resets both. Any other environment keeps its
history in `<history path>/<environment>/` beside loader.yaml, under the key read from the variable
`history: {key: {env: NAME}}` names. The key is a secret: registered with `loader.redaction` the
moment it is read, never printed. A missing or wrong key is refused here, before any planning.
An entity the history already keeps under keyed digests stays keyed whatever mappings a command
was given, so planning one mapping file never takes another's keyed records for missing ones.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from loader.config import Config
from loader.history.errors import HistoryError
from loader.history.location import history_folder, history_key
from loader.history.store import HEAD, History
from loader.redaction import register_secret


def history_place(config: Config, env_name: str | None) -> tuple[Path, bytes | None, str | None] | None:
    """(folder, key, the key's variable) of the environment `env_name` (default: the configured
    one), or None when the history is off. Reads the key's variable; opens nothing."""
    if config.history is None:
        return None
    name = config.default_environment if env_name is None else env_name
    builtin = config.is_builtin_sandbox(name)
    if not builtin:
        config.spec(name)  # an unknown environment is named as such, not as a missing folder
    setting = config.history.as_setting()
    folder = history_folder(setting, project_dir=config.root, environment=name,
                            sandbox_data=_sandbox_data(config) if builtin else None)
    assert folder is not None
    key, variable = history_key(setting, environ=os.environ, builtin_sandbox=builtin)
    if key is not None and variable is not None:
        register_secret(key.decode())
    return folder, key, variable


def open_history(config: Config, env_name: str | None, personal: Iterable[str]) -> History | None:
    """The history of the environment `env_name`, opened (a leftover journal folded in), or None
    when loader.yaml says `history: false`. `personal` names the entities with personal fields (the
    profile's `personal:`, or a `pii: true` field): their keys, ids and values are kept only as keyed
    digests. Without a key named in loader.yaml and no history started yet, mappings with personal
    fields keep none (a note says so). Raises the history package's errors for a missing or wrong
    key, and ConfigError for a key variable that is not set."""
    place = history_place(config, env_name)
    if place is None:
        return None
    folder, key, variable = place
    personal = frozenset(personal)
    if key is None and variable is None and personal and not (folder / HEAD).exists():
        # No key named and no history yet: keep none rather than refuse the plan. A history already
        # started is never passed over (History.open refuses, naming what to set).
        print(f"note: no history is kept: {', '.join(sorted(personal))} hold personal fields, which the history "
              "keeps only as keyed digests, and loader.yaml names no key (history: {key: {env: NAME}}); "
              "see docs/history.md", file=sys.stderr)
        return None
    history = History.open(folder, history_key=key, key_variable=variable, personal=personal)
    keyed = keyed_entities(history)
    refuse_plain_personal(history, personal - keyed, env_name or config.default_environment)
    if not keyed <= history.digester.personal:
        # Once keyed, always keyed: an entity the history keeps under keyed digests is looked up
        # and written so, whichever mapping files this command was given.
        history.digester = replace(history.digester, personal=history.digester.personal | keyed)
    return history


def refuse_plain_personal(history: History, personal: frozenset[str], env_name: str) -> None:
    """Refuse a history that keeps records of a personal entity under plain keys (written by a
    release that kept an entity in plain text when no mapping marked a field `pii`): read with
    keyed digests its lines would be missed, and the plan compared two-way; its files hold personal
    values in plain text, which only a reset removes."""
    plain = sorted(entity for entity in personal if history.snapshot.count(entity))
    if plain:
        entity = plain[0]
        raise HistoryError(
            f"the history keeps {entity} records with plain keys and values, but {entity} has personal fields: "
            "it is kept only as keyed digests now", where=str(history.snapshot.source(entity)),
            hint=f"run `loader history reset --env {env_name}`, then `loader history baseline MAPPING... --env "
                 f"{env_name}` (live becomes what the loader last wrote), and commit the history")


def keyed_entities(history: History) -> frozenset[str]:
    """The entities whose records the history keeps under keyed tokens (a plain key token is the
    key's JSON text, `[...]`; a keyed one is a digest)."""
    keyed = set()
    for entity in history.snapshot.entities():
        _, lines = history.snapshot.raw_items(entity)
        first = next(iter(lines), None)
        if first is not None and not first.startswith("["):
            keyed.add(entity)
    return frozenset(keyed)


def _sandbox_data(config: Config) -> Path:
    from loader.environments import sandbox_files

    return sandbox_files(config)[0]
