"""One entity's live records and history lines, indexed once for a three-way plan.

Each history line is parsed once here (a snapshot keeps its lines as text until asked), and each
live record's id made a history token once: the checks (`loader.plan.history_checks`) and the
pass (`loader.plan.history_pass`) then look records and lines up in dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loader.history.lines import HistoryLine
from loader.history.store import History


class EntityIndex:
    """`by_id`: live records by id; `by_token`: the same by the history's id token; `lines`: the
    history's lines by key token; `line_of`: the line of each live id that has one."""

    def __init__(self, history: History, entity: str, records: Sequence[Mapping[str, Any]]) -> None:
        self.entity = entity
        self.by_id = {str(rec.get("id")): rec for rec in records}
        token = history.digester.id_token
        self.by_token = {token(entity, live_id): rec for live_id, rec in self.by_id.items()}
        self.lines: dict[str, HistoryLine] = {line.key: line for line in history.snapshot.lines(entity)}
        self.line_of: dict[str, HistoryLine] = {}
        for line in self.lines.values():
            rec = self.by_token.get(line.live_id)
            if rec is not None:
                self.line_of[str(rec.get("id"))] = line


def indexes(history: History, live: Mapping[str, Sequence[Mapping[str, Any]]],
            entities: Iterable[str]) -> dict[str, EntityIndex]:
    """An index per entity of `entities` (each fetched whole in `live`)."""
    return {entity: EntityIndex(history, entity, live.get(entity, ())) for entity in sorted(set(entities))}
