"""Skip decisions for what an applied revert undid, so the next plan does not redo it.

After `loader apply --plan revert.json` (a plan whose `revert_of` names the apply it undoes),
each field the revert wrote back gets a `skip` decision in decisions.yaml: the sheet still proposes
the value the reverted apply wrote, and the decision holds that change back while the sheet proposes
that very value (`loader.history.decisions`); once the sheet changes, the change is proposed again.
A decision names the value refused the way a review row does: the history's digest of the value the
sheet proposed, which is the value live held when the revert was planned (the reverted apply's), and
for a status the first step the next plan would take back towards it.

    record_revert_decisions(plan, results, profile, project_dir=config.root, by="Ann", today=date.today())

(`loader apply --plan` calls it after applying a saved plan; it does nothing for a plan that is no
revert). It turns apply's results into decisions, so it sits above apply, with the command.

An apply killed midway gives no results, so before its first write the decisions of every change
the revert plans are recorded (`record_planned_revert_decisions`): a change whose write never
landed leaves live holding what the sheet proposes, so its decision holds nothing back. Once the
apply ends, the decisions of records it did not update are taken out again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from loader.apply.results import Outcome, Results
from loader.history.decisions import (
    Decision,
    Decisions,
    Kind,
    decisions_path,
    read_decisions,
    write_decisions,
)
from loader.history.digests import Digester
from loader.plan.model import Plan, RecordPlan
from loader.profile import Profile


def record_revert_decisions(plan: Plan, results: Results, profile: Profile, *, project_dir: Path, by: str,
                            today: date) -> int:
    """Record in the project's decisions.yaml the skip decisions of what an applied revert undid,
    and take out those recorded before its writes (`record_planned_revert_decisions`) of records it
    did not update; how many it undid (0, and no file touched, for a plan that is no revert)."""
    done = revert_decisions(plan, results, profile, by=by, today=today)
    planned = _decisions(plan, plan.records(), profile, by=by, today=today)
    path = decisions_path(project_dir)
    if not path.exists() or not planned:
        return save_decisions(project_dir, done)
    current = read_decisions(path)
    kept = {d.identity for d in done}
    stale = {d.identity for d in planned if d.identity not in kept and current.get(d.identity) == d}
    if stale:
        write_decisions(path, Decisions(tuple(d for d in current.entries if d.identity not in stale)))
    return save_decisions(project_dir, done)


def record_planned_revert_decisions(plan: Plan, profile: Profile, *, project_dir: Path, by: str,
                                    today: date) -> int:
    """Record, before a revert plan's first write, the skip decisions of every change it plans (an
    apply killed midway leaves them: see the module docstring); how many (0 for a plan that is no revert)."""
    planned = _decisions(plan, plan.records(), profile, by=by, today=today)
    if not planned:
        return 0
    current = read_decisions(decisions_path(project_dir))  # a person's decision about a change stays as it is
    return save_decisions(project_dir, [d for d in planned if current.get(d.identity) is None])


def revert_decisions(plan: Plan, results: Results, profile: Profile, *, by: str,
                     today: date) -> list[Decision]:
    """The skip decisions of the changes a revert plan's apply made (records updated in full; none
    for a plan that is not a revert)."""
    done = {r.ref for r in results.records if r.outcome is Outcome.UPDATED}
    return _decisions(plan, (record for record in plan.records() if record.ref in done), profile, by=by, today=today)


def _decisions(plan: Plan, records: Iterable[RecordPlan], profile: Profile, *, by: str,
               today: date) -> list[Decision]:
    reverted = plan.revert_of
    if not reverted:
        return []
    reason = f"reverted: `loader revert` of apply {reverted}"
    digester = Digester()  # a revert plan holds no entity with personal fields: plain digests
    return [Decision(environment=plan.env_name, entity=record.entity,
                     key=digester.key_token(record.entity, record.key), field=name, refused=refused,
                     decision=Kind.SKIP, reason=reason, by=by, decided_on=today)
            for record in records for name, refused in _refused(record, digester, profile)]


def _refused(record: RecordPlan, digester: Digester, profile: Profile) -> Iterator[tuple[str, str]]:
    """(field, digest of the value the next plan would propose again) of each change of `record`."""
    digests = digester.record(record.entity, record.key)
    rule = profile.entity(record.entity).status
    for change in record.changes:
        if rule is not None and change.field == rule.field:
            # The next plan walks back from the reverted state; its first step is what is refused.
            path = rule.path(str(change.new), str(change.old)) or (change.old,)
            yield change.field, digests.value(change.field, path[0])
        else:
            yield change.field, digests.value(change.field, change.old)


def save_decisions(project_dir: Path, decisions: Iterable[Decision]) -> int:
    """Add `decisions` to the project's decisions.yaml (each replacing one about the same change);
    how many were recorded."""
    new = list(decisions)
    if new:
        path = decisions_path(project_dir)
        write_decisions(path, read_decisions(path).with_decisions(new))
    return len(new)
