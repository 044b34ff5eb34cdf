"""The planner honours reviewers' decisions (`loader.plan.decisions_pass`): skips and defers hold their
changes, a skipped create holds its dependents, a skipped status step the steps after it; decisions
about what the plan no longer has are warnings; the digest changes with decisions, not with reasons."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

from helpers.report import review_plan
from helpers.review import plan_with_conflict

from loader.history.decisions import CREATE, Decision, Decisions, Kind
from loader.history.digests import Digester
from loader.plan.decisions_pass import DECIDED, STALE, with_decisions
from loader.plan.digest import plan_digest
from loader.plan.model import Action, Plan, RecordPlan
from loader.report.review_rows import review_rows

TODAY = date(2026, 11, 25)
DIGESTER = Digester(frozenset({"applicant"}), b"k" * 32)


def decision(record: str, field: str, kind: Kind = Kind.SKIP, *, reason: str = "not now",
             until: date | None = None, step: str | None = None) -> Decision:
    """A decision about the review row of `record` and `field` (of the status step `step`), as decide records it."""
    row = next(r for r in review_rows(review_plan(), DIGESTER)
               if (r.record, r.field) == (record, field) and (step is None or r.sheet == step))
    return Decision("sandbox", row.entity, row.key_token, field, row.digest, kind, reason, "Ana Reviewer", TODAY,
                    until)


def decided(*entries: Decision, today: date = TODAY) -> Plan:
    return with_decisions(review_plan(), Decisions(entries), DIGESTER, today)


def records(plan: Plan) -> dict[str, RecordPlan]:
    return {r.ref: r for r in plan.records()}


def test_a_skipped_update_is_not_proposed_and_says_who_why_and_when() -> None:
    eng = records(decided(decision("ENG", "name", reason="keep the old name")))["schools/ENG"]
    assert eng.action is Action.UNCHANGED and not eng.payload and not eng.changes and not eng.written_after
    assert [f.message for f in eng.findings if f.code == DECIDED] == [
        "name: skipped by decision (keep the old name, Ana Reviewer, 2026-11-25)"]
    assert all(f.severity == "warning" for f in eng.findings)


def test_a_skipped_personal_change_is_named_by_the_keyed_digest() -> None:
    a1 = records(decided(decision("A1", "email_address")))["applicants/A1"]
    assert a1.action is Action.UNCHANGED and not a1.payload


def test_a_skipped_create_holds_its_dependents_and_is_not_an_error() -> None:
    plan = decided(decision("LAW", CREATE, reason="the law school is not ready"))
    law, goodc = records(plan)["schools/LAW"], records(plan)["courses/GOODC"]
    assert law.action is Action.UNCHANGED and not law.payload and not law.blocked
    assert "new record: skipped by decision (the law school is not ready" in law.findings[-1].message
    assert goodc.action is Action.UNCHANGED and not goodc.payload
    assert goodc.findings[-1].message == "skipped (depends on schools/LAW, skipped by decision)"
    assert len(plan.errors()) == len(review_plan().errors())  # nothing new is an error


def test_a_skipped_status_step_holds_it_and_the_steps_after_it() -> None:
    first = records(decided(decision("ART1", "status", step="READY")))["arrangements/ART1"]
    assert first.status_path == () and first.action is Action.UNCHANGED and not first.changes
    assert "status READY → ACTIVE: skipped by decision" in first.findings[-1].message
    second = records(decided(decision("ART1", "status", step="ACTIVE")))["arrangements/ART1"]
    assert second.status_path == ("READY",) and second.action is Action.UPDATE
    assert [(c.field, c.new) for c in second.changes] == [("status", "READY")]


def test_a_skip_ends_when_the_sheet_proposes_another_value() -> None:
    other = replace(decision("ENG", "name"), refused=DIGESTER.value("school", ("ENG",), "name", "Other"))
    plan = decided(other)
    assert records(plan)["schools/ENG"].action is Action.UPDATE and plan.decisions == ()


def test_a_defer_holds_until_its_date() -> None:
    tomorrow = TODAY + timedelta(days=1)
    defer = decision("ENG", "name", Kind.DEFER, until=tomorrow)
    held = records(decided(defer))["schools/ENG"]
    assert held.action is Action.UNCHANGED and "until 2026-11-26" in held.findings[-1].message
    for later in (tomorrow, tomorrow + timedelta(days=30)):
        assert records(decided(defer, today=later))["schools/ENG"].action is Action.UPDATE


def test_decisions_of_another_environment_change_nothing() -> None:
    plan = review_plan()
    other = replace(decision("ENG", "name"), environment="production")
    assert with_decisions(plan, Decisions((other,)), DIGESTER, TODAY) is plan


def test_the_digest_changes_with_decisions_and_not_with_their_reasons() -> None:
    plain = plan_digest(review_plan())
    skip = decision("ENG", "name", reason="keep the old name")
    with_skip = plan_digest(decided(skip))
    assert with_skip != plain
    assert plan_digest(decided(replace(skip, reason="a reason reworded"))) == with_skip
    assert plan_digest(decided(replace(skip, by="someone else"))) != with_skip
    unmatched = replace(skip, refused=DIGESTER.value("school", ("ENG",), "name", "Other"))
    assert plan_digest(decided(unmatched)) == plain  # a decision that holds nothing is not covered


def test_a_decision_naming_a_record_or_field_no_longer_there_is_one_warning_each() -> None:
    base = decision("ENG", "name")
    gone = replace(base, key='["GONE"]')
    field = replace(base, field="nickname")
    elsewhere = replace(base, entity="unit", key='["U1"]')  # an entity this plan does not load: not told
    plan = decided(gone, field, elsewhere)
    stale = [f for f in plan.findings if f.code == STALE]
    assert len(stale) == 2 and all(f.severity == "warning" for f in stale)
    assert '["GONE"] name' in stale[0].message and "no record with that key" in stale[0].message
    assert "nickname" in stale[1].message and "no longer set that field" in stale[1].message
    assert not plan.has_errors or len(plan.errors()) == len(review_plan().errors())


def test_a_conflict_decided_for_the_platform_is_skipped_by_decision_not_a_conflict() -> None:
    conflicted = plan_with_conflict()
    row = next(r for r in review_rows(conflicted, DIGESTER) if r.kind == "conflict" and r.record == "SCI")
    platform = Decision("sandbox", row.entity, row.key_token, "name", row.digest, Kind.SKIP, "staff know", "Ana",
                        TODAY)
    plan = with_decisions(conflicted, Decisions((platform,)), DIGESTER, TODAY)
    sci = records(plan)["schools/SCI"]
    assert not sci.conflicts
    assert [f.message for f in sci.findings if f.code == DECIDED] == [
        "name (a conflict: the platform's value kept): skipped by decision (staff know, Ana, 2026-11-25)"]
    assert plan.decisions == (platform.digest_part,)
    other_value = replace(platform, refused="sha256:" + "0" * 64)  # the sheet proposes another value now
    assert records(with_decisions(conflicted, Decisions((other_value,)), DIGESTER, TODAY))["schools/SCI"].conflicts


def test_a_decision_for_the_sheet_never_holds_a_change() -> None:
    sheet = replace(decision("ENG", "name"), decision=Kind.SHEET)
    eng = records(decided(sheet))["schools/ENG"]
    assert eng.action is Action.UPDATE and "name" in eng.payload
