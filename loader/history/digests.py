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
import binascii
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

from loader.source.equality import normalise, set_form

DIGEST_BYTES = 9  # 72 bits, 12 characters: a chance collision with a platform edit is negligible
ELEMENT_BYTES = 6  # 48 bits, 8 characters: an element is told apart from the few others of its set
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SEP = b"\x1f"
_URLSAFE = bytes.maketrans(b"+/", b"-_")

Key = tuple[Any, ...]
Written = str | frozenset[str]  # W: one digest, or for a set-like list one digest per element


def canonical_json(value: Any) -> str:
    """The one text of a normalised value: sorted keys, no spaces, non-JSON values as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def key_text(key: Key) -> str:
    """A record key as one line of text (the key's parts normalised; control characters escaped)."""
    if len(key) == 1:  # the usual key
        part = normalise(key[0])
        if type(part) is str:
            return "[" + encode_basestring(part) + "]"
    parts = [normalise(part) for part in key]
    if all(type(part) is str for part in parts):  # the usual key: its JSON without an encoder made for it
        return "[" + ",".join(encode_basestring(part) for part in parts) + "]"
    return canonical_json(parts)


def compact_id(live_id: str) -> str:
    """A live id in few bytes: a UUID as 22 characters of base64url, any other id marked with '='
    (or as JSON after '~' when it holds a tab, a line break or another control character)."""
    if not _UUID.fullmatch(live_id):
        return "=" + live_id if live_id.isprintable() else "~" + canonical_json(live_id)
    return _urlsafe(bytes.fromhex(live_id.replace("-", ""))).rstrip("=")


def expand_id(token: str) -> str:
    """The live id `compact_id` made `token` from."""
    if token.startswith("="):
        return token[1:]
    if token.startswith("~"):
        return str(json.loads(token[1:]))
    return str(uuid.UUID(bytes=base64.urlsafe_b64decode(token + "==")))


@dataclass(frozen=True)
class Digester:
    """Digests for one history: plain, or keyed under `data_key` for the entities in `personal`."""

    personal: frozenset[str] = frozenset()
    data_key: bytes | None = None
    # per entity, the hash (or HMAC) over its name made once, copied for each record: a new HMAC
    # costs more than the record's whole digest (`init=False`: a `replace` starts afresh)
    _bases: dict[str, Any] = field(default_factory=dict, init=False, compare=False, repr=False)
    # per field, the bytes the digest of its value starts with after the record's
    _prefixes: dict[str, bytes] = field(default_factory=dict, init=False, compare=False, repr=False)

    def is_personal(self, entity: str) -> bool:
        return entity in self.personal

    def record(self, entity: str, key: Key) -> RecordDigests:
        """The digests of one record's fields (the entity and key hashed once for all of them)."""
        return self._record(entity, key_text(key))

    def identity(self, entity: str, key: Key) -> tuple[str, RecordDigests]:
        """(`key_token`, `record`) of one record, its key made text once for both."""
        text = key_text(key)
        digests = self._record(entity, text)
        if self.is_personal(entity):
            return digests._digest("k", "", "", DIGEST_BYTES), digests
        return text, digests

    def _record(self, entity: str, key: str) -> RecordDigests:
        base = self._bases.get(entity)
        if base is None:
            if self.is_personal(entity):
                if self.data_key is None:
                    raise ValueError(f"{entity} has personal fields: its digests need the history key")
                base = hmac.new(self.data_key, digestmod=hashlib.sha256)
            else:
                base = hashlib.sha256()
            base.update(entity.encode() + _SEP)
            self._bases[entity] = base
        record = base.copy()
        record.update(key.encode() + _SEP)  # over entity SEP key SEP, as one update over the three
        return RecordDigests(record, self._prefixes)

    def value(self, entity: str, key: Key, field: str, value: Any) -> str:
        """W of one value of `field` in the record `key` of `entity`."""
        return self.record(entity, key).value(field, value)

    def element(self, entity: str, key: Key, field: str, item: Any) -> str:
        """W of one element of a set-like list (the item as `set_form` normalises it)."""
        return self.record(entity, key).element(field, item)

    def elements(self, entity: str, key: Key, field: str, items: Iterable[Any] | None) -> frozenset[str]:
        """W of a set-like list: one digest per element."""
        return self.record(entity, key).elements(field, items)

    def written(self, entity: str, key: Key, field: str, value: Any, *, as_set: bool = False) -> Written:
        """W of a field's value: per element for a set-like list, else one digest."""
        return self.record(entity, key).written(field, value, as_set=as_set)

    def key_token(self, entity: str, key: Key) -> str:
        """What stands for a record key in the files: its text, or a keyed digest for personal entities."""
        if self.is_personal(entity):
            return self.record(entity, key)._digest("k", "", "", DIGEST_BYTES)
        return key_text(key)

    def id_token(self, entity: str, live_id: str) -> str:
        """What stands for a live id in the files: compact, or a keyed digest for personal entities."""
        if self.is_personal(entity):
            return self.record(entity, ())._digest("i", "", live_id, DIGEST_BYTES)
        return compact_id(live_id)


class RecordDigests:
    """The digests of one record: SHA-256 (or HMAC) over entity, key, kind, field and value."""

    __slots__ = ("_base", "_prefixes")

    def __init__(self, base: Any, prefixes: dict[str, bytes] | None = None) -> None:
        self._base = base
        self._prefixes = {} if prefixes is None else prefixes

    def value(self, field: str, value: Any) -> str:
        # `_digest("v", field, _value_text(normalise(value)), DIGEST_BYTES)`, written out: an apply
        # digests every field it writes as the answer arrives
        if type(value) is str and value and (len(value) < 10 or value[4] != "-"):
            text = "s" + value  # text `normalise` leaves as it is (not empty, not a date)
        else:
            normalised = normalise(value)
            text = "s" + normalised if type(normalised) is str else _value_text(normalised)
        prefix = self._prefixes.get(field)
        if prefix is None:
            name = canonical_json(field) if "\x1f" in field else field
            prefix = self._prefixes[field] = f"v\x1f{name}\x1f".encode()
        h = self._base.copy()
        h.update(prefix + text.encode())
        return binascii.b2a_base64(h.digest()[:DIGEST_BYTES], newline=False).translate(_URLSAFE).decode("ascii")

    def element(self, field: str, item: Any) -> str:
        return self._digest("e", field, _value_text(item), ELEMENT_BYTES)

    def elements(self, field: str, items: Iterable[Any] | None) -> frozenset[str]:
        return frozenset(self.element(field, item) for item in set_form(items))

    def written(self, field: str, value: Any, *, as_set: bool = False) -> Written:
        return self.elements(field, value) if as_set else self.value(field, value)

    def _digest(self, kind: str, field: str, text: str, size: int) -> str:
        h = self._base.copy()
        name = canonical_json(field) if "\x1f" in field else field
        h.update(f"{kind}\x1f{name}\x1f{text}".encode())
        return _urlsafe(h.digest()[:size])


def _urlsafe(data: bytes) -> str:
    """`base64.urlsafe_b64encode(data)` as text, without the module's layers of calls."""
    return binascii.b2a_base64(data, newline=False).translate(_URLSAFE).decode("ascii")


def _value_text(normalised: Any) -> str:
    """A normalised value as text: a string as itself (tagged), anything else as canonical JSON."""
    if normalised is None:
        return "jnull"
    return "s" + normalised if type(normalised) is str else "j" + canonical_json(normalised)
