"""One entity's live records and history lines, indexed once for a three-way plan.

A snapshot keeps its lines as text; this index parses a line only when a record needs it (most
records are looked up once, and a line's text tells its key and id tokens without parsing), and
matches each line to the live record whose id it names once: the checks (`loader.plan.history_checks`)
and the pass (`loader.plan.history_pass`) then look records and lines up in dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.history.lines import HistoryLine
from loader.history.store import History


class EntityIndex:
    """`by_id`: live records by id; `line(token)`: the history's line of a key token (parsed once);
    `line_keys`: every key token with a line; `line_of`: the key token of the line of each live id
    that has one; `by_key`: the live record each line names (by the line's key token)."""

    def __init__(self, history: History, entity: str, records: Sequence[Mapping[str, Any]]) -> None:
        self.entity = entity
        self._snapshot = history.snapshot
        self._parsed: dict[str, HistoryLine | None] = {}
        self.by_id = {str(rec.get("id")): rec for rec in records}
        self.line_keys = self._snapshot.key_tokens(entity)
        self.line_of: dict[str, str] = {}
        self.by_key: dict[str, Mapping[str, Any]] = {}
        if not self.line_keys:
            return
        token = history.digester.id_token
        # each live id's token, only while the lines are matched to them (the tokens are not kept)
        id_of_token = {token(entity, live_id): live_id for live_id in self.by_id}
        for key, id_token in self._snapshot.id_tokens_by_key(entity):
            live_id = id_of_token.get(id_token)
            if live_id is not None:
                self.line_of[live_id] = key
                self.by_key[key] = self.by_id[live_id]

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
