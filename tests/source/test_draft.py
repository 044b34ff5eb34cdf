"""The mapping draft: names normalised, columns matched one to one, status words mapped or left out."""

from __future__ import annotations

from loader.profile import load_profile
from loader.source.draft import draft_block, guess_entity, normalise
from loader.source.draft_sample import Sample

PROFILE = load_profile()


def test_headers_are_normalised_before_matching() -> None:
    assert normalise("E-mail addr.") == "email addr"
    assert normalise("Given name(s)") == "given name"
    assert normalise("D.O.B.") == "dob"
    assert normalise("institutionCode") == "institution code"


def test_a_column_is_matched_to_one_field_only_and_the_best_match_wins() -> None:
    sample = Sample("Sheet1", 1, ("Code", "Name", "Title"), {})
    block = draft_block(sample, PROFILE, "school")
    assert {f.name: f.column for f in block.fields} == {"code": "Code", "name": "Name"}
    assert block.unmatched == ("Title",)


def test_status_words_become_a_map_and_unknown_ones_leave_the_field_out_with_a_note() -> None:
    known = Sample("Arrangements", 1, ("Arrangement Code", "Status"), {"Status": ("Live", "Draft", "Retired")})
    block = draft_block(known, PROFILE, "arrangement")
    status = next(f for f in block.fields if f.name == "status")
    assert status.spec["map"] == {"Draft": "DRAFT", "Live": "ACTIVE", "Retired": "INACTIVE"}
    unknown = Sample("Arrangements", 1, ("Arrangement Code", "Status"), {"Status": ("Live", "Paused")})
    block = draft_block(unknown, PROFILE, "arrangement")
    assert "status" not in {f.name for f in block.fields}
    assert any("'Paused'" in note for note in block.notes)


def test_the_entity_is_guessed_from_headers_and_sheet_name() -> None:
    assert guess_entity(Sample("Courses", 1, ("Course Code", "Course Title", "School Code")), PROFILE) == "course"
    assert guess_entity(Sample("Export", 1, ("Applicant ID", "Credential Type", "Credential Name")), PROFILE) == \
        "credential"
