"""The digest W of a value, and the tokens that stand for keys and ids in a history.

A value is digested in the form the planner compares (`loader.source.equality.normalise`), so
"6.0" and 6 have one W. Every digest is bound to its entity, record key and field: the same value
in another field or record has another W. Entities without personal fields get plain digests
(SHA-256) and keep their keys and ids readable; an entity with any `pii: true` field gets keyed
digests (HMAC-SHA-256 under the history's data key) for its values, its keys and its ids, so the
files reveal no person and cannot be searched for a guessed value without the key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from loader.source.equality import normalise, set_form

DIGEST_BYTES = 9  # 72 bits, 12 characters: a chance collision with a platform edit is negligible
ELEMENT_BYTES = 6  # 48 bits, 8 characters: an element is told apart from the few others of its set
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SEP = b"\x1f"

Key = tuple[Any, ...]
Written = str | frozenset[str]  # W: one digest, or for a set-like list one digest per element


def canonical_json(value: Any) -> str:
    """The one text of a normalised value: sorted keys, no spaces, non-JSON values as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def key_text(key: Key) -> str:
    """A record key as one line of text (the key's parts normalised; control characters escaped)."""
    return canonical_json([normalise(part) for part in key])


def compact_id(live_id: str) -> str:
    """A live id in few bytes: a UUID as 22 characters of base64url, any other id marked with '='."""
    if not _UUID.fullmatch(live_id):
        return "=" + live_id
    return base64.urlsafe_b64encode(bytes.fromhex(live_id.replace("-", ""))).decode("ascii").rstrip("=")


def expand_id(token: str) -> str:
    """The live id `compact_id` made `token` from."""
    if token.startswith("="):
        return token[1:]
    return str(uuid.UUID(bytes=base64.urlsafe_b64decode(token + "==")))


@dataclass(frozen=True)
class Digester:
    """Digests for one history: plain, or keyed under `data_key` for the entities in `personal`."""

    personal: frozenset[str] = frozenset()
    data_key: bytes | None = None

    def is_personal(self, entity: str) -> bool:
        return entity in self.personal

    def value(self, entity: str, key: Key, field: str, value: Any) -> str:
        """W of one value of `field` in the record `key` of `entity`."""
        return self._digest(entity, b"v", key_text(key), field, canonical_json(normalise(value)))

    def element(self, entity: str, key: Key, field: str, item: Any) -> str:
        """W of one element of a set-like list (the item as `set_form` normalises it)."""
        return self._digest(entity, b"e", key_text(key), field, canonical_json(item), ELEMENT_BYTES)

    def elements(self, entity: str, key: Key, field: str, items: Iterable[Any] | None) -> frozenset[str]:
        """W of a set-like list: one digest per element."""
        return frozenset(self.element(entity, key, field, item) for item in set_form(items))

    def written(self, entity: str, key: Key, field: str, value: Any, *, as_set: bool = False) -> Written:
        """W of a field's value: per element for a set-like list, else one digest."""
        if as_set:
            return self.elements(entity, key, field, value)
        return self.value(entity, key, field, value)

    def key_token(self, entity: str, key: Key) -> str:
        """What stands for a record key in the files: its text, or a keyed digest for personal entities."""
        text = key_text(key)
        return self._digest(entity, b"k", text, "", "") if self.is_personal(entity) else text

    def id_token(self, entity: str, live_id: str) -> str:
        """What stands for a live id in the files: compact, or a keyed digest for personal entities."""
        if self.is_personal(entity):
            return self._digest(entity, b"i", canonical_json(live_id), "", "")
        return compact_id(live_id)

    def _digest(self, entity: str, kind: bytes, key: str, field: str, value: str, size: int = DIGEST_BYTES) -> str:
        message = _SEP.join((kind, entity.encode(), key.encode(), field.encode(), value.encode()))
        if self.is_personal(entity):
            if self.data_key is None:
                raise ValueError(f"{entity} has personal fields: its digests need the history key")
            raw = hmac.new(self.data_key, message, hashlib.sha256).digest()
        else:
            raw = hashlib.sha256(message).digest()
        return base64.urlsafe_b64encode(raw[:size]).decode("ascii")
