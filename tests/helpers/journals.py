"""The journals read whole: the reference the text-tested reading of last-loaded values is held to."""

from __future__ import annotations

from typing import Any

from loader.history.store import History

Wanted = tuple[str, str, str]  # entity, key token, field


def newest_values_read_whole(history: History, wanted: set[Wanted]) -> dict[Wanted, Any]:
    """Per field of `wanted`, the value after of its newest journal entry that has one: every journal
    read whole (`History.journals`), newest entry first."""
    found: dict[Wanted, Any] = {}
    for journal in reversed(history.journals()):
        for entry in reversed(journal.entries):
            for name, field in entry.fields.items():
                at = (entry.entity, entry.key, name)
                if field.has_after and at in wanted and at not in found:
                    found[at] = field.after
    return found
