"""`loader history`: the applies, one record's loads, baseline, reset, rekey, through `main([...])`.

Against the built-in sandbox (a real server) in a fresh checkout; where an apply's journal is
needed, it is written by the History API in the test.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from helpers.output_schema import output_document
from helpers.plan import copy_samples

from loader.cli import main
from loader.config import load_config
from loader.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE
from loader.history.journal import FieldWrite
from loader.history.lines import Owner
from loader.history.opening import open_history
from loader.history.store import History

MAPPINGS = ["mappings/curriculum.yaml", "mappings/applicants.yaml"]
OWNER = Owner("mappings/curriculum.yaml", "courses")
APPLICANT = Owner("mappings/applicants.yaml", "applicants")
PERSON = {"first_name": "Wilhelmina", "email_address": "wilhelmina@example.org"}


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_samples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sandbox_history(personal: tuple[str, ...] = ()) -> History:
    history = open_history(load_config(None), "sandbox", personal)
    assert history is not None
    return history


def write_two_applies(history: History) -> None:
    """Two applies as the apply side journals them: a course created then renamed, an applicant updated."""
    first = history.begin_apply("sandbox", plan_digest="sha256:aaa", by="alice", apply_id="20260101T000000Z-aaaaaa")
    first.record("create", "course", ("C-9",), "id-c9", [FieldWrite("name", OWNER, after="Old name")],
                 updated=(1, "u-loader"))
    first.record("update", "applicant", ("A-7",), "id-a7",
                 [FieldWrite("first_name", APPLICANT, after=PERSON["first_name"], before="Mina"),
                  FieldWrite("email_address", APPLICANT, after=PERSON["email_address"],
                             before=PERSON["email_address"])], updated=(1, "u-loader"))
    history.finish_apply(first, {"created": 1, "updated": 1})
    second = history.begin_apply("sandbox", plan_digest="sha256:bbb", by="bob", apply_id="20260102T000000Z-bbbbbb")
    second.record("update", "course", ("C-9",), "id-c9",
                  [FieldWrite("name", OWNER, after="New name", before="Old name")], updated=(2, "u-loader"))
    history.finish_apply(second, {"updated": 1})


def test_a_fresh_sandbox_has_no_history_yet(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history"]) == EXIT_OK
    assert "no history of sandbox yet" in capsys.readouterr().out
    assert not (checkout / ".loader" / "history" / "head.json").exists()


def test_the_applies_newest_first_as_text_and_json(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    assert main(["history"]) == EXIT_OK
    out = capsys.readouterr().out
    assert out.index("20260102T000000Z-bbbbbb") < out.index("20260101T000000Z-aaaaaa")
    assert "by bob  plan sha256:bbb  update 1, updated 1" in out and "serial 2" in out
    assert main(["history", "--format", "json"]) == EXIT_OK
    document = output_document(capsys.readouterr().out)
    assert document["command"] == "history" and document["ok"] and document["started"]
    assert [a["id"] for a in document["applies"]] == ["20260102T000000Z-bbbbbb", "20260101T000000Z-aaaaaa"]
    assert document["applies"][1]["counts"] == {"create": 1, "created": 1, "update": 1, "updated": 1}
    assert document["head"]["last_apply"] == "20260102T000000Z-bbbbbb"


def test_one_records_loads_field_by_field(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    assert main(["history", "--entity", "course", "--key", "code=C-9"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "course code=C-9: 2 loads" in out
    assert 'name: null → "Old name"' in out  # the create's value after is the next load's value before
    assert 'name: "Old name" → (kept only as a digest)' in out
    assert main(["history", "--entity", "course", "--key", "code=C-9", "--format", "json"]) == EXIT_OK
    loads = output_document(capsys.readouterr().out)["loads"]
    assert [load["by"] for load in loads] == ["alice", "bob"]
    assert loads[0]["fields"][0] == {"field": "name", "owner": "mappings/curriculum.yaml › courses",
                                     "changed": True, "before": None, "after": "Old name", "after_known": True,
                                     "after_is_live": False}


def test_personal_fields_say_only_whether_they_changed(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    for output in ("text", "json"):
        assert main(["history", "--entity", "applicant", "--key", "external_id=A-7", "--format", output]) == EXIT_OK
        out = capsys.readouterr().out
        assert "Mina" not in out and all(value not in out for value in PERSON.values())
        if output == "text":
            assert "first_name: changed" in out and "email_address: unchanged" in out
    history_bytes = b"".join(p.read_bytes() for p in (checkout / ".loader" / "history").rglob("*") if p.is_file())
    for value in ("Mina", *PERSON.values(), "A-7", "id-a7"):
        assert not _holds(history_bytes, str(value)), value


def test_a_record_without_loads_is_said_so(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    assert main(["history", "--entity", "course", "--key", "code=NOPE"]) == EXIT_OK
    assert "holds no load of course code=NOPE" in capsys.readouterr().out


def test_baseline_asks_then_records_live_without_moving_the_head(
        checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "baseline", *MAPPINGS]) == EXIT_ERROR  # stdin is not a terminal: not asked
    captured = capsys.readouterr()
    assert "mappings/curriculum.yaml › courses: 5 course records" in captured.err
    assert "stdin is not a terminal; nothing was recorded" in captured.err
    assert not (checkout / ".loader" / "history" / "head.json").exists()
    assert main(["history", "baseline", *MAPPINGS, "--yes", "--by", "carol"]) == EXIT_OK
    assert "recorded 39 records" in capsys.readouterr().out
    history = sandbox_history(("applicant", "credential"))
    assert history.head.serial == 0 and history.head.last_apply is None  # a baseline writes no record
    assert history.snapshot.count("course") == 5 and history.snapshot.count("applicant") == 6
    seed_data = json.loads((checkout / "samples" / "sandbox-seed.json").read_text())["institution-a"]
    course = next(c for c in seed_data["courses"] if c["code"] == "BA")
    line, digester = history.line("course", ("BA",)), history.digester
    assert line is not None and line.live_id == digester.id_token("course", course["id"])
    assert line.fields["name"].written == digester.value("course", ("BA",), "name", "Bachelor of Arts")
    assert line.fields["parent"].written == digester.value("course", ("BA",), "parent", course["parent"]["id"])
    assert line.updated_time == course["metadata"]["updated"]["time"]
    assert line.updated_user == course["metadata"]["updated"]["user"]["id"]
    assert main(["history", "--format", "json"]) == EXIT_OK
    (row,) = json.loads(capsys.readouterr().out)["applies"]
    assert row["kind"] == "baseline" and row["by"] == "carol" and row["counts"]["baseline"] == 39
    assert main(["history", "--entity", "course", "--key", "code=BA"]) == EXIT_OK
    assert 'name: recorded as loaded "Bachelor of Arts"' in capsys.readouterr().out
    seed = (checkout / "samples" / "sandbox-seed.json").read_text()
    applicants = json.loads(seed)["institution-a"]["applicants"]
    history_bytes = b"".join(p.read_bytes() for p in (checkout / ".loader" / "history").rglob("*") if p.is_file())
    for applicant in applicants:
        for field in ("external_id", "first_name", "last_name", "email_address", "date_of_birth"):
            assert not _holds(history_bytes, str(applicant[field])), field


def test_reset_says_what_it_removes_and_asks(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    assert main(["history", "reset"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "2 journals, records: applicant 1, course 1" in err and "nothing was removed" in err
    assert (checkout / ".loader" / "history" / "head.json").exists()
    assert main(["history", "reset", "--yes"]) == EXIT_OK
    assert not (checkout / ".loader" / "history" / "head.json").exists()
    assert not (checkout / ".loader" / "history" / "journal").exists()
    assert main(["history", "reset", "--yes"]) == EXIT_OK
    assert "no history to reset" in capsys.readouterr().out


KEYED = """\
history: {path: memory, key: {env: MY_HISTORY_KEY}}
environments:
  test:
    base_url: http://127.0.0.1:9/institution-api
    auth_url: http://127.0.0.1:9
    realm: advance
    client_id: loader
    client_secret: {env: MY_CLIENT_SECRET}
"""


@pytest.fixture
def keyed(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (checkout / "loader.yaml").write_text(textwrap.dedent(KEYED), encoding="utf-8")
    monkeypatch.setenv("MY_HISTORY_KEY", "first-history-key-0123456789")
    monkeypatch.setenv("MY_CLIENT_SECRET", "client-secret-0123")
    history = open_history(load_config(checkout / "loader.yaml"), "test", ("applicant",))
    assert history is not None
    write_two_applies(history)
    return checkout


def test_rekey_moves_the_history_to_the_new_key_and_never_prints_a_key(
        keyed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MY_NEW_KEY", "second-history-key-9876543210")
    assert main(["history", "rekey", "--env", "test", "--new-key-env", "MY_NEW_KEY"]) == EXIT_OK
    captured = capsys.readouterr()
    assert "now opens with the key in MY_NEW_KEY" in captured.out
    assert "first-history-key" not in captured.out + captured.err and "second-history-key" not in captured.out
    assert main(["history", "--env", "test"]) == EXIT_ERROR  # the old key no longer opens it
    assert "the history key does not match this history" in capsys.readouterr().err
    monkeypatch.setenv("MY_HISTORY_KEY", "second-history-key-9876543210")
    assert main(["history", "--env", "test", "--entity", "applicant", "--key", "external_id=A-7"]) == EXIT_OK
    assert "first_name: changed" in capsys.readouterr().out


def test_a_wrong_key_is_refused_before_planning(keyed: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MY_HISTORY_KEY", "not-the-key-it-was-written-with")
    # The environment's address answers nothing: had it planned, the error would be a connection's.
    assert main(["history", "baseline", *MAPPINGS, "--env", "test", "--yes"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "loader: error:" in err and "the history key does not match this history" in err
    assert "set MY_HISTORY_KEY to the key it was written with" in err
    assert "not-the-key" not in err


def test_the_sandbox_cannot_be_rekeyed(checkout: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MY_NEW_KEY", "second-history-key-9876543210")
    assert main(["history", "rekey", "--new-key-env", "MY_NEW_KEY"]) == EXIT_ERROR
    assert "fixed key of its own" in capsys.readouterr().err


def test_history_false(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (checkout / "loader.yaml").write_text("history: false\n", encoding="utf-8")
    assert main(["history"]) == EXIT_ERROR
    assert "the history is off in loader.yaml" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["history", "frob"],
    ["history", "--entity", "course"],
    ["history", "--key", "code=X"],
    ["history", "--entity", "course", "--key", "code"],
    ["history", "baseline"],
    ["history", "baseline", "m.yaml", "--new-key-env", "K"],
    ["history", "reset", "--entity", "course", "--key", "code=X"],
    ["history", "rekey"],
    ["history", "rekey", "--new-key-env", "not a name"],
    ["history", "reset", "--format", "json"],
    ["history", "mappings/curriculum.yaml"],
])
def test_usage_errors(checkout: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == EXIT_USAGE
    assert "loader: error:" in capsys.readouterr().err


PLAN_OPENS_THE_HISTORY = "open_history" in (Path(__file__).parents[2] / "loader/commands/plan.py").read_text()


@pytest.mark.skipif(not PLAN_OPENS_THE_HISTORY, reason="`loader plan` opens no history yet (the plan side)")
def test_loader_plan_refuses_a_wrong_key_before_planning(keyed: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MY_HISTORY_KEY", "not-the-key-it-was-written-with")
    assert main(["plan", *MAPPINGS, "--env", "test"]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert "the history key does not match this history" in err and "not-the-key" not in err


@pytest.mark.skipif(not PLAN_OPENS_THE_HISTORY, reason="`loader plan` opens no history yet (the plan side)")
def test_the_readme_tour_plans_against_the_sandbox_history_with_no_key(
        checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "baseline", *MAPPINGS, "--yes"]) == EXIT_OK
    assert main(["plan", "mappings/curriculum.yaml"]) == EXIT_OK
    assert main(["plan", "mappings/applicants.yaml"]) == EXIT_OK


def test_the_value_after_is_read_live_where_live_still_holds_what_the_loader_wrote(
        checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed = json.loads((checkout / "samples" / "sandbox-seed.json").read_text())["institution-a"]
    course = next(c for c in seed["courses"] if c["code"] == "BA")
    history = sandbox_history()
    writer = history.begin_apply("sandbox", plan_digest="sha256:ccc", by="dora")
    writer.record("update", "course", ("BA",), course["id"],
                  [FieldWrite("name", OWNER, after=course["name"], before="Arts"),
                   FieldWrite("parent", OWNER, after=course["parent"]["id"], before=None),
                   FieldWrite("custom_attributes.Duration", OWNER, after="4 years", before="3 years")])
    history.finish_apply(writer)
    assert main(["history", "--entity", "course", "--key", "code=BA"]) == EXIT_OK
    out = capsys.readouterr().out
    assert f'name: "Arts" → "{course["name"]}" (live now)' in out
    assert f'parent: null → id {course["parent"]["id"]} (live now)' in out  # a school the history never loaded
    assert 'custom_attributes.Duration: "3 years" → (kept only as a digest)' in out  # changed since


def _holds(data: bytes, value: str) -> bool:
    """Whether `value` is in the history's bytes as a value of its own: a short one (a first name) can
    turn up by chance inside a keyed digest's base64url text, so it counts only standing alone."""
    if len(value) >= 8:
        return value.encode() in data
    return re.search(rb"(?<![A-Za-z0-9_-])" + re.escape(value.encode()) + rb"(?![A-Za-z0-9_-])", data) is not None


def test_control_characters_from_a_key_or_a_journal_reach_the_terminal_escaped(
        checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = "C-\x1b]0;owned\x07\x9b2J"  # a window-title escape and a C1 screen-clearing one
    history = sandbox_history()
    writer = history.begin_apply("sandbox", plan_digest=None, by="eve\x1b[2J", apply_id="20260101T000000Z-cccccc")
    writer.record("create", "course", (code,), "id-x", [FieldWrite("name", OWNER, after="Bell\x07 \u202egnp.exe")],
                  updated=(1, "u-loader"))
    history.finish_apply(writer)
    for argv in (["history", "--entity", "course", "--key", f"code={code}"], ["history"]):
        assert main(argv) == EXIT_OK
        out = capsys.readouterr().out
        assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", out), repr(out)
    assert main(["history", "--entity", "course", "--key", f"code={code}"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "code=C-\\e]0;owned\\u0007\\u009b2J: 1 load\n" in out and "by eve\\e[2J" in out


def test_reset_and_baseline_while_an_apply_writes_are_refused(checkout: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    write_two_applies(sandbox_history(("applicant",)))
    folder = checkout / ".loader" / "history"
    head = (folder / "head.json").read_bytes()
    running = sandbox_history(("applicant",)).begin_apply("sandbox", plan_digest=None, by="ann")  # holds the folder
    try:
        for argv in (["history", "reset", "--yes"], ["history", "baseline", *MAPPINGS, "--yes"]):
            assert main(argv) == EXIT_ERROR, argv
            assert "another apply is writing this history now" in capsys.readouterr().err
            assert (folder / "head.json").read_bytes() == head and running.path.exists()
    finally:
        running.close()
    assert main(["history", "reset", "--yes"]) == EXIT_OK  # once it has ended
    assert not (folder / "head.json").exists()
