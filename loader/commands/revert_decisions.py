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
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from loader.apply.results import Outcome, Results
from loader.history.decisions import Decision, Kind, decisions_path, read_decisions, write_decisions
from loader.history.digests import Digester
from loader.plan.model import Plan, RecordPlan
from loader.profile import Profile


def record_revert_decisions(plan: Plan, results: Results, profile: Profile, *, project_dir: Path, by: str,
                            today: date) -> int:
    """Record in the project's decisions.yaml the skip decisions of what an applied revert undid;
    how many (0, and no file touched, for a plan that is no revert or an apply that changed nothing)."""
    return save_decisions(project_dir, revert_decisions(plan, results, profile, by=by, today=today))


def revert_decisions(plan: Plan, results: Results, profile: Profile, *, by: str,
                     today: date) -> list[Decision]:
    """The skip decisions of the changes a revert plan's apply made (records updated in full; none
    for a plan that is not a revert)."""
    reverted = plan.revert_of
    if not reverted:
        return []
    done = {r.ref for r in results.records if r.outcome is Outcome.UPDATED}
    reason = f"reverted: `loader revert` of apply {reverted}"
    digester = Digester()  # a revert plan holds no entity with personal fields: plain digests
    return [Decision(environment=plan.env_name, entity=record.entity,
                     key=digester.key_token(record.entity, record.key), field=name, refused=refused,
                     decision=Kind.SKIP, reason=reason, by=by, decided_on=today)
            for record in plan.records() if record.ref in done
            for name, refused in _refused(record, digester, profile)]


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
