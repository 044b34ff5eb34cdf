"""What apply needs of the history before its first write: which entities are personal, who is
applying, and whether a saved plan's records still have the history lines it was made against.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loader.actor import acting
from loader.errors import PlanError
from loader.history.lines import line_digest
from loader.history.personal import personal_entities
from loader.history.store import History
from loader.plan.model import Plan, RecordPlan
from loader.profile import Profile
from loader.source.mapping_file import read_mapping

MAPPING_SUFFIXES = (".yaml", ".yml")


def personal_entities_of_plan(plan: Plan, profile: Profile) -> frozenset[str]:
    """The personal entities of a saved plan, by the rule its planning used (`loader.history.personal`)
    on its mapping files (their fingerprints were checked already), and any entity a change marks personal."""
    mappings = []
    for name in plan.fingerprints:
        path = Path(name)
        if path.suffix.lower() in MAPPING_SUFFIXES and path.is_file():
            try:
                mappings.append(read_mapping(path, profile))
            except (OSError, UnicodeDecodeError):
                continue
    marked = {r.entity for r in plan.records() if any(c.pii for c in r.changes)}
    return personal_entities(mappings, profile) | marked


def applied_by(given: str | None, environ: Mapping[str, str], folder: Path) -> str | None:
    """Who applies, for the journal: `--by`, else the CI actor, else the git user, else the OS user."""
    return acting(given, environ, folder)


def planned_line(record: RecordPlan) -> str:
    """The digest of the history line a record was planned against ("none": it had none)."""
    return record.history_line or "none"


def current_line(history: History, record: RecordPlan) -> str:
    """The digest of the record's history line now (found by its key, as the plan found it: by its
    old key for a record the plan renumbers)."""
    return line_digest(history.line(record.entity, record.renamed_from or record.key))


def check_history_lines(plan: Plan, history: History | None) -> None:
    """Refuse, before any write, a saved plan some of whose records' history lines changed since it
    was made: another apply touched them, so what the plan compared against is gone."""
    if history is None:
        return
    moved = sum(1 for record in plan.records() if planned_line(record) != current_line(history, record))
    if moved:
        raise PlanError(
            f"another apply touched {moved} of this plan's records since the plan was made; nothing was applied",
            hint="plan again (`loader plan ... --out plan.json`), review it, and apply the new plan",
        )
