"""What `loader history --entity` says of a record's identity besides its loads: the keys it had before
(renumbered, or a duplicate's key taken as its own) and, per field, who first changed it in the
platform and when, from its line of the history's snapshot; and its references by their targets' keys.

Offline the editors are the service's user ids the history records; with `--env` they are named as
`report: {editors: …}` says (`name`, the default, and `email` give first and last name: an e-mail
address is shown only in files written 0600, never on stdout; `id` keeps the ids), one request per user.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from loader.history.digests import compact_id
from loader.report.view import clean

if TYPE_CHECKING:
    from loader.config import Config
    from loader.history.store import History
    from loader.profile import EntityProfile


@dataclass(frozen=True)
class FieldEdit:
    """One field first changed in the platform since the loader wrote it: when, and by whom."""

    field: str
    at: int  # epoch milliseconds
    by_id: str | None  # the service user's id; None when the service named none
    by: str | None = None  # their name, where it was looked up

    def as_json(self) -> dict[str, Any]:
        return {"field": self.field, "at": _iso(self.at), "by_id": self.by_id, "by": self.by}

    def text(self) -> str:
        who = self.by or self.by_id or "someone"
        return clean(f"{self.field}: changed in the platform by {who} at {_iso(self.at)}")


@dataclass(frozen=True)
class RecordIdentity:
    """A record's former keys (as text, oldest first; none shown for an entity with personal fields,
    whose keys the history keeps only as digests) and its fields' platform edits."""

    former_keys: tuple[str, ...] = ()
    edits: tuple[FieldEdit, ...] = ()

    def named(self, names: Mapping[str, str]) -> RecordIdentity:
        """The edits with each user id of `names` named."""
        edits = tuple(replace(e, by=names[e.by_id]) if e.by_id is not None and e.by_id in names else e
                      for e in self.edits)
        return replace(self, edits=edits)

    def editor_ids(self) -> set[str]:
        return {e.by_id for e in self.edits if e.by_id}


def record_identity(history: History, entity: str, key: tuple[Any, ...], personal: bool) -> RecordIdentity:
    """The identity the snapshot's line of the record `key` holds (none when it has no line)."""
    if personal:
        return RecordIdentity()
    line = history.snapshot.get(entity, history.digester.key_token(entity, key))
    if line is None:
        return RecordIdentity()
    edits = tuple(FieldEdit(name, mark.edited[0], mark.edited[1])
                  for name, mark in sorted(line.fields.items()) if mark.edited is not None)
    return RecordIdentity(tuple(_key_shown(token) for token in line.former_keys), edits)


def _key_shown(token: str) -> str:
    """A key token of an entity without personal fields (the key's JSON) as a reviewer reads a key."""
    try:
        parts = json.loads(token)
    except ValueError:
        return token
    return "/".join(str(p) for p in parts) if isinstance(parts, list) else token


class ReferenceKeys:
    """A reference field's value as the text shows it: each target by its key as the history knows it
    (`school ENG`), or `id …` where it does not (a record the loader never loaded)."""

    def __init__(self, history: History, entity: EntityProfile) -> None:
        self._history, self._references = history, entity.references

    def shown(self, field: str, value: Any) -> str | None:
        """The text of `value` of `field` where the field holds references, else None."""
        reference = self._references.get(field)
        if reference is None or value is None:
            return None
        ids = value if isinstance(value, list) else [value]
        names = [self._name(reference.entities, v.get("id") if isinstance(v, dict) else v) for v in ids]
        return f"[{', '.join(names)}]" if isinstance(value, list) else names[0]

    def _name(self, entities: tuple[str, ...], live_id: Any) -> str:
        if not isinstance(live_id, str):
            return json.dumps(live_id, ensure_ascii=False, default=str)
        for target in entities:
            token = self._history.snapshot.key_for_id(target, compact_id(live_id))
            if token is not None:
                return f"{target} {_key_shown(token)}"
        return f"id {live_id}"


def _iso(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, UTC).isoformat(timespec="seconds")


def editor_names(config: Config, env_name: str | None, ids: set[str]) -> dict[str, str]:
    """The names of the users `ids`, read from the environment `env_name` (`report: {editors: id}`, or
    no ids: none read). A user the service does not know keeps their id."""
    if config.editors == "id" or not ids:
        return {}
    from loader import event_loop
    from loader.api.client import ApiClient
    from loader.api.users import fetch_users
    from loader.environments import open_environment

    async def names(env: Any) -> dict[str, str]:
        async with ApiClient(env, config.profile, concurrency=1) as client:
            return {user_id: user.name for user_id, user in (await fetch_users(client, ids)).items()}

    with open_environment(config, env_name) as env:
        return event_loop.run(names(env))
