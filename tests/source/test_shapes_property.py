"""Properties of repeat and collect, through real workbooks, read_sources and the pure planner:
a long sheet (one credential a row) and the same data wide (Qual 1..3 groups read with `repeat`)
give identical plans; offering rows shuffled (each subject's rows kept in their order, which
`collect` follows) give identical plans."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from helpers.mapping import messages, read, write_mapping, write_workbook
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.plan.diff import PlanHeader, plan_changes
from loader.plan.model import Plan
from loader.profile import load_profile

PROFILE = load_profile()
APPLICANTS = ["A1", "A2", "A3"]
LIVE_APPLICANTS = [{"id": f"id-{a}", "external_id": a} for a in APPLICANTS]
TYPES = ["Tertiary", "Subject", "Employment"]
NAMES = ["TAFE NSW", "Hill High", "Acme"]

WIDE = """\
version: 1
source: wide.xlsx
entities:
  credentials:
    entity: credential
    header_row: auto
    repeat: {n: [1, 2, 3]}
    where: {column: "Qual {n} Type", not_empty: true}
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Student ID}
      type: {column: "Qual {n} Type", transform: [upper]}
      name: "Qual {n} Institution"
      institutionCode: {column: "Qual {n} Code", when: {column: "Qual {n} Type", not_equals: Employment}}
      completionDate: {column: "Qual {n} Completed", type: date, format: ["%d/%m/%Y", serial]}
"""

LONG = """\
version: 1
source: long.xlsx
entities:
  credentials:
    entity: credential
    key: [applicant_id, type, name]
    fields:
      applicant_id: {ref: applicant, column: Student ID}
      type: {column: Type, transform: [upper]}
      name: Institution
      institutionCode: {column: Code, when: {column: Type, not_equals: Employment}}
      completionDate: {column: Completed, type: date, format: ["%d/%m/%Y", serial]}
"""

quals = st.tuples(st.sampled_from(TYPES), st.sampled_from(NAMES), st.sampled_from(["X1", "Y2"]),
                  st.sampled_from([None, "03/07/2005", 38536, "30/06/2026"]))
people = st.dictionaries(st.sampled_from(APPLICANTS),
                         st.lists(quals, max_size=3, unique_by=lambda q: (q[0], q[1])), min_size=1)


def _normal(plan: Plan) -> list[tuple[Any, ...]]:
    """A plan without where each record came from (the cells differ between the two layouts)."""
    return sorted(
        (r.ref, r.action.value, repr(sorted(r.payload.items())), repr(r.changes), r.status_path, r.blocked,
         tuple(f.message for f in r.findings))
        for r in plan.records()
    )


def _plan(mapping: Path) -> Plan:
    sources = read([mapping], PROFILE)
    assert not sources.has_errors, messages(sources)  # warnings (a date on a SUBJECT credential) are fine
    live = {"applicant": LIVE_APPLICANTS, "credential": []}
    return plan_changes(sources.blocks, live, PROFILE, header=PlanHeader("sandbox"))


@settings(max_examples=25, deadline=None)
@given(people)
def test_a_long_sheet_and_the_same_data_wide_with_repeat_give_identical_plans(data: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        wide = [["Credentials export"], [],
                ["Student ID", *(f"Qual {n} {c}" for n in (1, 2, 3) for c in ("Type", "Institution", "Code",
                                                                               "Completed"))]]
        long = [["Student ID", "Type", "Institution", "Code", "Completed"]]
        for person, held in data.items():
            row: list[Any] = [person]
            for qual in held:
                row += list(qual)
                long.append([person, *qual])
            wide.append(row + [None] * (13 - len(row)))
        write_workbook(root / "wide.xlsx", {"Export": wide})
        write_workbook(root / "long.xlsx", {"Export": long})
        wide_plan = _plan(write_mapping(root / "wide.yaml", WIDE))
        long_plan = _plan(write_mapping(root / "long.yaml", LONG))
        assert _normal(wide_plan) == _normal(long_plan)
        assert len(list(wide_plan.records())) == sum(len(q) for q in data.values())


OFFERINGS = """\
version: 1
source: offerings.xlsx
entities:
  subjects:
    entity: subject
    key: [code]
    fields:
      code: {column: Subject Code, type: string, pad: {width: 5}}
      name: Subject Title
      custom_attributes:
        Campus: {column: Campus, collect: join}
"""

offerings = st.dictionaries(st.sampled_from([4101, 4102, 48024]),
                            st.lists(st.sampled_from(["Albury", "Online", "Bathurst"]), min_size=1, max_size=4),
                            min_size=1)


@settings(max_examples=25, deadline=None)
@given(offerings, st.randoms(use_true_random=False))
def test_offering_rows_shuffled_within_each_subject_s_order_give_identical_plans(
    data: dict[int, list[str]], random: Any
) -> None:
    rows: list[list[Any]] = [
        [code, f"Subject {code}", campus] for code, campuses in data.items() for campus in campuses
    ]
    shuffled_positions = list(range(len(rows)))
    random.shuffle(shuffled_positions)
    # Each subject keeps its rows in their order (collect follows first-seen order) at shuffled places.
    queues = {code: [r for r in rows if r[0] == code] for code in data}
    shuffled = [queues[rows[i][0]].pop(0) for i in shuffled_positions]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plans = []
        for version in (rows, shuffled):
            write_workbook(root / "offerings.xlsx", {"Offerings": [["Subject Code", "Subject Title", "Campus"],
                                                                  *version]})
            plans.append(_normal(_plan(write_mapping(root / "m.yaml", OFFERINGS))))
        assert plans[0] == plans[1]
        campuses = {r[0]: r[2] for r in plans[0]}
        for code, listed in data.items():
            assert f"'Campus': '{', '.join(dict.fromkeys(listed))}'" in campuses[f"subjects/{code:05d}"]
