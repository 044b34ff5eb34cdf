"""One entity's live records and history lines, indexed once for a three-way plan.

A snapshot keeps its lines as text; this index parses a line only when a record needs it (most
records are looked up once, and a line's text tells its key and id tokens without parsing), and
makes each live record's id a history token once: the checks (`loader.plan.history_checks`) and the
pass (`loader.plan.history_pass`) then look records and lines up in dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.history.lines import HistoryLine
from loader.history.store import History


class EntityIndex:
    """`by_id`: live records by id; `by_token`: the same by the history's id token; `line(token)`:
    the history's line of a key token (parsed once); `line_keys`: every key token with a line;
    `line_of`: the key token of the line of each live id that has one."""

    def __init__(self, history: History, entity: str, records: Sequence[Mapping[str, Any]]) -> None:
        self.entity = entity
        self._snapshot = history.snapshot
        self._parsed: dict[str, HistoryLine | None] = {}
        self.by_id = {str(rec.get("id")): rec for rec in records}
        token = history.digester.id_token
        self.by_token = {token(entity, live_id): rec for live_id, rec in self.by_id.items()}
        self.line_keys = self._snapshot.key_tokens(entity)
        self.line_of: dict[str, str] = {}
        for id_token, rec in self.by_token.items():
            key = self._snapshot.key_for_id(entity, id_token)
            if key is not None:
                self.line_of[str(rec.get("id"))] = key

    def line(self, key: str) -> HistoryLine | None:
        """The history's line of the record whose key token is `key` (None: it has none)."""
        if key not in self.line_keys:
            return None
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = self._parsed[key] = self._snapshot.get(self.entity, key)
        return parsed


def indexes(history: History, live: Mapping[str, Sequence[Mapping[str, Any]]],
            entities: Iterable[str]) -> dict[str, EntityIndex]:
    """An index per entity of `entities` (each fetched whole in `live`)."""
    return {entity: EntityIndex(history, entity, live.get(entity, ())) for entity in sorted(set(entities))}
