"""The samples: generated deterministically, readable without errors, and a realistic sample plan."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from helpers.plan import REPO, SAMPLE_MAPPINGS, SAMPLE_SEED, plan_against

from loader.plan.model import Action, Plan, RecordPlan
from loader.profile import load_profile
from loader.sandbox.server import SandboxOptions, serve_in_thread
from loader.source.sources import read_sources


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_samples", REPO / "samples" / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_reproduces_the_committed_samples_byte_for_byte(tmp_path: Path) -> None:
    written = _generator().write_all(tmp_path)
    assert len(written) == 8
    for path in written:
        committed = REPO / "samples" / path.relative_to(tmp_path)
        assert path.read_bytes() == committed.read_bytes(), f"{committed} is stale: run samples/make_samples.py"


REAL_WORLD = ("mappings/real-world/offerings.yaml", "mappings/real-world/applicant-export.yaml",
              "mappings/real-world/legacy-applicants.yaml")


def test_the_real_world_sample_mappings_read_every_row_without_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    sources = read_sources([Path(m) for m in REAL_WORLD], load_profile())
    assert sources.findings == () and all(b.findings == () for b in sources.blocks)
    blocks = {b.block: b for b in sources.blocks}
    assert {name: len(b.records) for name, b in blocks.items()} == {
        "offered_subjects": 5, "exported_credentials": 8, "legacy_applicants": 4}
    subjects = {r.key[0]: r.fields for r in blocks["offered_subjects"].records}
    assert subjects["48024"]["custom_attributes"] == {
        "Campus": "City, Online, Albury", "Subject Status": "Active", "Faculty": "Faculty of Engineering and IT"}
    credentials = {r.key[1:]: r for r in blocks["exported_credentials"].records}
    assert credentials[("TERTIARY", "Foundation in Science")].fields["completionDate"] == "2026-06-30"  # a serial
    assert credentials[("TERTIARY", "Graduate Certificate in Data Science")].fields["completionDate"] == "2025-06-30"
    assert str(credentials[("EMPLOYMENT", "Barista")].row).endswith("Applicants 2027 › row 5 (n=2)")
    legacy = {r.key[0]: r.fields for r in blocks["legacy_applicants"].records}
    assert legacy["L-000454"]["last_name"] == "O\u2019Neill" and legacy["L-000452"]["first_name"] == "Jürgen"
    assert legacy["L-000452"]["date_of_birth"] == "2005-11-02"


def test_the_sample_mappings_read_every_row_without_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    sources = read_sources([Path(m) for m in SAMPLE_MAPPINGS], load_profile())
    assert sources.findings == () and all(b.findings == () for b in sources.blocks)
    built = {b.block: len(b.records) for b in sources.blocks}
    assert built == {"schools": 5, "courses": 7, "programs": 10, "subjects": 14, "applicants": 8,
                     "credentials": 7, "arrangements": 4}
    subjects = next(b for b in sources.blocks if b.block == "subjects")
    codes = [r.key[0] for r in subjects.records]
    assert "48024" in codes  # stored as a number in the workbook
    assert next(r for r in subjects.records if r.key == ("MATH1001",)).fields["name"] == "Calculus I"


@pytest.fixture(scope="module")
def sample_plan() -> Plan:
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        with serve_in_thread(SandboxOptions(seed=SAMPLE_SEED)) as sandbox:
            return plan_against(sandbox, SAMPLE_MAPPINGS).plan


def _record(plan: Plan, ref: str) -> RecordPlan:
    return next(r for r in plan.records() if r.ref == ref)


def test_the_sample_plan_has_creates_updates_unchanged_and_warnings_but_no_errors(sample_plan: Plan) -> None:
    assert not sample_plan.has_errors
    actions = {r.action for r in sample_plan.records()}
    assert actions == {Action.CREATE, Action.UPDATE, Action.UNCHANGED}
    warnings = {f.code for r in sample_plan.records() for f in r.warnings}
    assert warnings == {"near-duplicate-key", "read-only-field"}
    assert [b.not_in_source for b in sample_plan.blocks if b.name == "courses"] == [2]


def test_the_sample_plan_shows_last_cycles_differences(sample_plan: Plan) -> None:
    eng = _record(sample_plan, "schools/ENG")
    changes = [(c.field, c.old, c.new) for c in eng.changes]
    assert changes == [("name", "Faculty of Engineering", "School of Engineering")]
    sci = _record(sample_plan, "schools/SCI")
    assert sci.action is Action.UNCHANGED  # its unmanaged "Legacy ID" label is no difference
    stat = _record(sample_plan, "subjects/STAT1001")
    assert stat.action is Action.CREATE and stat.warnings[0].code == "near-duplicate-key"
    math = _record(sample_plan, "subjects/MATH2001")
    assert math.action is Action.UNCHANGED and math.warnings[0].code == "read-only-field"
    it = _record(sample_plan, "arrangements/ART-TAFE-IT")
    assert it.action is Action.UPDATE and it.status_path == ("ACTIVE",)
    dip = _record(sample_plan, "arrangements/ART-DIP-SCI")
    assert dip.action is Action.CREATE and dip.status_path == ("READY",) and "status" not in dip.payload
    assert dip.depends_on == ("subjects/STAT1001",)
    assert _record(sample_plan, "arrangements/ART-CERT-HLTH").status_path == ("READY", "ACTIVE")
    mia = _record(sample_plan, "applicants/A1000125")
    assert [(c.field, c.pii) for c in mia.changes] == [("email_address", True)]
    aisha = _record(sample_plan, "credentials/A1000129/TERTIARY/Higher Secondary Certificate")
    assert aisha.depends_on == ("applicants/A1000129",)
    olivia = _record(sample_plan, "credentials/A1000123/TERTIARY/Diploma of Information Technology")
    assert olivia.action is Action.UPDATE and olivia.payload == {"result": "6.2"}


def _mapping_lines(path: Path) -> int:
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.lstrip().startswith("#"))


def test_the_applicant_export_with_repeat_means_what_six_blocks_meant_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(REPO)
    after = Path("mappings/real-world/applicant-export.yaml")
    before = Path("tests/source/applicant-export-without-repeat.yaml")
    read = {path: read_sources([path], load_profile()) for path in (after, before)}

    def records(path: Path) -> list[tuple[object, ...]]:
        assert read[path].findings == () and all(b.findings == () for b in read[path].blocks)
        return sorted((repr(r.key), repr(sorted(r.fields.items()))) for b in read[path].blocks for r in b.records)

    assert records(after) == records(before) and len(records(after)) == 8
    assert (_mapping_lines(before), _mapping_lines(after)) == (96, 22)  # lines that are not comments (2: checks)
