"""decisions.yaml: reviewers' skips and defers, read and written deterministically, and matched to changes."""

from __future__ import annotations

import os
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loader.history.decisions import (
    CREATE,
    Decision,
    Decisions,
    Kind,
    ProposedChange,
    decisions_text,
    match_decisions,
    read_decisions,
    write_decisions,
)
from loader.history.errors import HistoryError

TODAY = date(2026, 11, 25)


def decision(entity: str = "school", key: str = '["ENG"]', field: str = "name", *, kind: Kind = Kind.SKIP,
             refused: str = "x5hYBiwTF2bp", until: date | None = None, environment: str = "sandbox",
             reason: str = "the faculty renames itself in March") -> Decision:
    return Decision(environment, entity, key, field, refused, kind, reason, "ana", TODAY, until)


def change(field: str = "name", digest: str = "x5hYBiwTF2bp", *, environment: str = "sandbox") -> ProposedChange:
    return ProposedChange(environment, "school", '["ENG"]', field, digest)


def test_a_skip_holds_while_the_sheet_proposes_the_refused_value_and_lets_it_go_when_the_sheet_differs() -> None:
    skip = decision()
    decisions = Decisions((skip,))
    assert match_decisions(decisions, change(), TODAY) == skip
    assert match_decisions(decisions, change(digest="another-value"), TODAY) is None
    assert match_decisions(decisions, change(field="code"), TODAY) is None  # another field
    assert match_decisions(decisions, change(environment="production"), TODAY) is None  # decided on another


def test_a_defer_holds_until_its_date_and_the_change_is_proposed_again_on_that_date() -> None:
    defer = decision(kind=Kind.DEFER, until=date(2026, 12, 1))
    decisions = Decisions((defer,))
    assert match_decisions(decisions, change(), date(2026, 11, 30)) == defer
    assert match_decisions(decisions, change(digest="whatever the sheet says"), date(2026, 11, 30)) == defer
    assert match_decisions(decisions, change(), date(2026, 12, 1)) is None
    assert match_decisions(decisions, change(), date(2027, 1, 1)) is None


def test_a_conflict_decided_for_the_sheet_holds_while_the_sheet_proposes_that_value() -> None:
    sheet = decision(kind=Kind.SHEET)
    assert match_decisions(Decisions((sheet,)), change(), TODAY) == sheet
    assert match_decisions(Decisions((sheet,)), change(digest="new"), TODAY) is None


def test_a_plans_digest_covers_a_matched_decision_but_not_its_reason() -> None:
    assert decision(reason="one").digest_part == decision(reason="another").digest_part
    assert decision().digest_part != decision(refused="other").digest_part
    assert decision().digest_part != decision(kind=Kind.DEFER, until=TODAY).digest_part


@given(refused=st.text(max_size=12), proposed=st.text(max_size=12),
       until=st.dates(), today=st.dates())
def test_a_skip_holds_exactly_while_the_digests_agree_and_a_defer_exactly_before_its_date(
    refused: str, proposed: str, until: date, today: date
) -> None:
    skip, defer = decision(refused=refused), decision(kind=Kind.DEFER, until=until, refused=refused)
    assert (match_decisions(Decisions((skip,)), change(digest=proposed), today) is not None) == (refused == proposed)
    assert (match_decisions(Decisions((defer,)), change(digest=proposed), today) is not None) == (today < until)


def test_the_file_is_sorted_by_entity_key_field_whatever_order_the_decisions_came_in(tmp_path: Path) -> None:
    entries = [decision("subject", '["MATH1"]', "name"), decision("school", '["LAW"]', CREATE),
               decision("school", '["ENG"]', "status", kind=Kind.DEFER, until=date(2027, 2, 1)),
               decision("school", '["ENG"]', "name")]
    forwards, backwards = Decisions(tuple(entries)), Decisions(tuple(reversed(entries)))
    assert decisions_text(forwards) == decisions_text(backwards)
    write_decisions(tmp_path / "decisions.yaml", forwards)
    read = read_decisions(tmp_path / "decisions.yaml")
    assert [(d.entity, d.key, d.field) for d in read.entries] == [
        ("school", '["ENG"]', "name"), ("school", '["ENG"]', "status"), ("school", '["LAW"]', CREATE),
        ("subject", '["MATH1"]', "name")]
    assert set(read.entries) == set(entries)
    text = (tmp_path / "decisions.yaml").read_text(encoding="utf-8")
    assert 'until: "2027-02-01"' in text and text.count("until:") == 1  # only the defer has a date


def test_deciding_a_change_again_replaces_its_entry() -> None:
    first = Decisions((decision(reason="first"),))
    again = first.with_decisions([decision(reason="second"), decision(field="code")])
    assert [(d.field, d.reason) for d in again.entries] == [("code", "the faculty renames itself in March"),
                                                            ("name", "second")]


_texts = st.text(st.characters(codec="utf-8"), max_size=40)


@given(reason=_texts, by=_texts, key=_texts)
def test_any_text_reads_back_as_it_was_written(reason: str, by: str, key: str) -> None:
    written = Decisions((Decision("sandbox", "school", key or "k", "name", "d1", Kind.SKIP, reason, by, TODAY),))
    import yaml

    document = yaml.safe_load(decisions_text(written))
    assert document["decisions"][0]["reason"] == reason
    assert document["decisions"][0]["by"] == by
    assert document["decisions"][0]["key"] == (key or "k")


def test_no_file_is_no_decisions_and_an_empty_file_writes_an_empty_list(tmp_path: Path) -> None:
    assert read_decisions(tmp_path / "decisions.yaml") == Decisions()
    write_decisions(tmp_path / "decisions.yaml", Decisions())
    assert read_decisions(tmp_path / "decisions.yaml") == Decisions()
    assert "decisions: []" in (tmp_path / "decisions.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(("text", "message"), [
    ("decisions: [\n", "invalid YAML"),
    ("decisions:\n  - entity: school\n    colour: red\n", "decision 1: unknown field 'colour'"),
    ('decisions:\n  - {entity: school, key: "[1]", field: name, environment: e, decision: defer, refused: d,'
     ' date: "2026-11-25"}\n', "decision 1: a defer needs `until: YYYY-MM-DD`"),
    ('decisions:\n  - {entity: school, key: "[1]", field: name, environment: e, decision: skipp, refused: d,'
     ' date: "2026-11-25"}\n', "decision 1: 'skipp' is not a valid Kind"),
    ("version: 7\ndecisions: []\n", "version 7"),
])
def test_a_broken_decisions_file_is_an_error_naming_the_entry(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "decisions.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(HistoryError) as raised:
        read_decisions(tmp_path / "decisions.yaml")
    assert message in str(raised.value)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_two_branches_deciding_about_different_records_merge_without_a_conflict(tmp_path: Path) -> None:
    base = Decisions((decision("school", '["ENG"]'), decision("subject", '["MATH1"]')))
    ours = base.with_decisions([decision("school", '["FIN"]')])
    theirs = base.with_decisions([decision("subject", '["ZZZ"]'), decision("program", '["P1"]', CREATE)])
    for name, decided in (("base", base), ("ours", ours), ("theirs", theirs)):
        write_decisions(tmp_path / name, decided)
    merged = subprocess.run(["git", "merge-file", "-p", str(tmp_path / "ours"), str(tmp_path / "base"),
                             str(tmp_path / "theirs")], capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stdout  # 0: no conflict
    (tmp_path / "merged").write_text(merged.stdout, encoding="utf-8")
    expected = ours.with_decisions(theirs.entries)
    assert read_decisions(tmp_path / "merged") == expected
    assert merged.stdout == decisions_text(expected)


@pytest.mark.timeout(30)
def test_a_decisions_file_that_is_a_fifo_or_a_link_is_refused_never_waited_on(tmp_path: Path) -> None:
    path = tmp_path / "decisions.yaml"
    os.mkfifo(path)
    with pytest.raises(HistoryError, match="a pipe"):
        read_decisions(path)
    path.unlink()
    path.symlink_to("/dev/zero")
    with pytest.raises(HistoryError, match="a device"):
        read_decisions(path)
