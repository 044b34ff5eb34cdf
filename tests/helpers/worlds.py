"""Random planning worlds: desired blocks and live collections that meet in every way the diff knows."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from helpers.plan import Block
from loader.places import CellRef
from loader.source.records import DesiredRecord, Ref

text = st.text(alphabet="ab ", min_size=0, max_size=2)


def desired(block: str, entity: str, row: int, key: tuple[Any, ...], fields: dict[str, Any]) -> DesiredRecord:
    return DesiredRecord(block, entity, key, fields, CellRef("gen.xlsx", block, None, row))


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[Block], dict[str, list[dict[str, Any]]]]:
    """Schools and courses (one unique group, courses refer to schools), a second school block that
    merges with the first, applicants with credentials (keyed by a reference, their parents credentials
    of the plan), arrangements; live records for some, with repeated keys and keys alike but for case
    and spaces now and then; blocks in any order, a block name repeated now and then."""
    live: dict[str, list[dict[str, Any]]] = {e: [] for e in ("school", "course", "applicant", "credential",
                                                             "subject", "arrangement")}
    blocks: list[Block] = []
    schools, more_schools, courses = [], [], []
    for n, code in enumerate(draw(st.lists(st.sampled_from(["S1", "S2", "s1", "C-S1"]), unique=True, max_size=3))):
        schools.append(desired("schools", "school", n + 2, (code,), {"code": code, "name": draw(text)}))
        if draw(st.booleans()):
            more_schools.append(desired("more-schools", "school", n + 2, (code,), {"code": code, "name": draw(text)}))
        if draw(st.booleans()):
            courses.append(desired("courses", "course", n + 2, (f"C-{code}",),
                                    {"code": f"C-{code}", "name": "c", "parent": Ref("school", (code,))}))
        for copy in range(draw(st.integers(0, 2))):
            live["school"].append({"id": f"s-{n}-{copy}", "code": code, "name": draw(text), "type": "SCHOOL"})
    if draw(st.booleans()):  # its parent a school's id, else (wrongly) the first subject's, else nobody's
        parent = draw(st.sampled_from(["s-0-0", "u-0-U1", "u-0-U3", "gone"]))
        live["course"].append({"id": "c-x", "code": "C-S1", "name": "c", "type": "COURSE", "parent": {"id": parent}})
    applicants, credentials = [], []
    for n, ext in enumerate(draw(st.lists(st.sampled_from(["A1", "A2", "A3"]), unique=True, max_size=3))):
        applicants.append(desired("applicants", "applicant", n + 2, (ext,),
                                   {"external_id": ext, "first_name": draw(text), "last_name": "x"}))
        if draw(st.booleans()):
            live["applicant"].append({"id": f"a-{n}", "external_id": ext, "first_name": draw(text), "last_name": "x"})
        if draw(st.booleans()):
            ref = Ref("applicant", (ext,), ("external_id",))
            kind = draw(st.sampled_from(["TERTIARY", "SUBJECT"]))
            credential: dict[str, Any] = {"applicant_id": ref, "type": kind, "name": "Diploma", "result": draw(text)}
            if draw(st.booleans()):  # a credential's parent: a credential of this plan (itself, or a cycle) or live
                credential["parent"] = Ref("credential", (draw(st.sampled_from(["Diploma", "Degree"])),), ("name",))
            credentials.append(desired("credentials", "credential", n + 2, (ref, kind, "Diploma"), credential))
        for copy in range(draw(st.integers(0, 2))):  # its live credentials, the first of a repeat the match
            live["credential"].append({"id": f"cr-{n}-{copy}", "applicant_id": f"a-{n}", "type": "TERTIARY",
                                       "name": draw(st.sampled_from(["Diploma", "Degree"])), "result": draw(text),
                                       "parent": {"id": draw(st.sampled_from(["cr-0-0", "cr-1-0", "gone"]))}})
    subjects = [desired("subjects", "subject", row, (code,), {"code": code, "name": "u"})
                for row, code in enumerate(draw(st.lists(st.sampled_from(["U1", "U2"]), unique=True)), start=2)]
    live_codes = draw(st.lists(st.sampled_from(["U1", "U3", "C-S1", "u1", "U 2"]), max_size=3))  # near U1, U2 too
    live["subject"] = [{"id": f"u-{n}-{code}", "code": code, "name": draw(text), "type": "SUBJECT"}
                       for n, code in enumerate(live_codes)]
    arrangements = []
    for row, code in enumerate(draw(st.lists(st.sampled_from(["R1", "R2"]), unique=True)), start=2):
        fields: dict[str, Any] = {"code": code, "name": "x"}
        if draw(st.booleans()):  # the only thing that joins arrangements to the curriculum
            awarded = draw(st.lists(st.sampled_from(["U1", "U2", "U3", "U4"]), unique=True, max_size=2))
            fields["subjects_awarded"] = [Ref("subject", (c,)) for c in awarded]
        arrangements.append(desired("arrangements", "arrangement", row, (code,), fields))
    live["arrangement"] = [{"id": f"r-{code}", "code": code, "name": draw(text)}
                           for code in draw(st.lists(st.sampled_from(["R1", "R3"]), unique=True))]
    blocks = [Block("schools", "school", ("code",), tuple(schools)),
              Block("more-schools", "school", ("code",), tuple(more_schools)),
              Block("courses", "course", ("code",), tuple(courses)),
              Block("applicants", "applicant", ("external_id",), tuple(applicants)),
              Block("credentials", "credential", ("applicant_id", "type", "name"), tuple(credentials)),
              Block("subjects", "subject", ("code",), tuple(subjects)),
              Block("arrangements", "arrangement", ("code",), tuple(arrangements))]
    blocks = draw(st.permutations(blocks))
    if draw(st.integers(0, 4)) == 0:  # a repeated block name: planned as one part
        first, second = draw(st.lists(st.integers(0, len(blocks) - 1), min_size=2, max_size=2, unique=True))
        old = blocks[second]
        blocks[second] = Block(blocks[first].block, old.entity, old.key_fields, old.records)
    return blocks, live
