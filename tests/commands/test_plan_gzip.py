"""plan.json.gz: `loader plan --out plan.json.gz` writes gzip (0600, the same bytes for the same plan),
`loader show` and `loader apply --plan` read it by its first bytes; a gzip bomb, a truncated file and
an invalid plan are refused naming the file, and nothing is written."""

from __future__ import annotations

import gzip
import json
import shutil
import stat
from pathlib import Path

import pytest
from helpers.plan import SAMPLE_MAPPINGS, copy_samples
from helpers.report import review_plan

from loader.cli import main
from loader.errors import PlanError
from loader.plan.plan_file import plan_json_text, read_plan_json, write_plan_json


@pytest.fixture
def fresh_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy_samples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _changes(capsys: pytest.CaptureFixture[str]) -> str:
    return next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Plan: "))


def test_a_gzip_plan_goes_through_plan_show_and_apply(fresh_checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *SAMPLE_MAPPINGS, "--out", "plan.json.gz"]) == 0
    planned = _changes(capsys)
    packed = (fresh_checkout / "plan.json.gz").read_bytes()
    assert packed[:2] == b"\x1f\x8b" and stat.S_IMODE((fresh_checkout / "plan.json.gz").stat().st_mode) == 0o600
    assert packed[3] == 0 and packed[4:8] == b"\0\0\0\0"  # no file name, no time in the header
    text = gzip.decompress(packed).decode("utf-8")
    assert text == plan_json_text(read_plan_json(fresh_checkout / "plan.json.gz"))
    shutil.copyfile(fresh_checkout / "plan.json.gz", fresh_checkout / "reviewed.plan")  # told by its bytes
    assert main(["show", "reviewed.plan"]) == 0
    assert _changes(capsys) == planned
    assert main(["apply", "--plan", "plan.json.gz", "--yes"]) == 0
    capsys.readouterr()
    assert main(["plan", *SAMPLE_MAPPINGS, "--detailed-exitcode"]) == 0  # all applied: nothing left to do


def test_the_same_plan_gives_the_same_gzip_bytes(tmp_path: Path) -> None:
    plan = review_plan()
    write_plan_json(plan, tmp_path / "a.json.gz")
    write_plan_json(plan, tmp_path / "b.JSON.GZ")
    assert (tmp_path / "a.json.gz").read_bytes() == (tmp_path / "b.JSON.GZ").read_bytes()
    assert gzip.decompress((tmp_path / "a.json.gz").read_bytes()).decode("utf-8") == plan_json_text(plan)
    write_plan_json(plan, tmp_path / "plain.json")
    assert (tmp_path / "plain.json").read_text(encoding="utf-8") == plan_json_text(plan)


def test_a_gzip_bomb_is_refused_once_it_unpacks_past_the_limit(tmp_path: Path) -> None:
    bomb = tmp_path / "plan.json.gz"
    with gzip.open(bomb, "wb") as out:
        out.write(b'{"format": 1, "blocks": [' + b" " * (64 << 20) + b"]}")
    assert bomb.stat().st_size < 200_000
    with pytest.raises(PlanError) as refused:
        read_plan_json(bomb, limit=16 << 20)
    assert str(bomb) in str(refused.value)
    assert "gzip data that unpacks to more than the 16,777,216 bytes allowed" in str(refused.value)


def test_a_truncated_or_damaged_gzip_plan_is_refused_naming_the_file_and_nothing_is_written(
    fresh_checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", *SAMPLE_MAPPINGS, "--out", "plan.json.gz"]) == 0
    planned = _changes(capsys)
    packed = (fresh_checkout / "plan.json.gz").read_bytes()
    (fresh_checkout / "cut.json.gz").write_bytes(packed[: len(packed) // 2])
    assert main(["apply", "--plan", "cut.json.gz", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "cut.json.gz" in err and "ends early: the file is truncated" in err and "Traceback" not in err
    damaged = bytearray(packed)
    damaged[len(damaged) // 2] ^= 0xFF
    (fresh_checkout / "damaged.json.gz").write_bytes(bytes(damaged))
    assert main(["show", "damaged.json.gz"]) == 1
    err = capsys.readouterr().err
    assert "damaged.json.gz" in err and "damaged" in err and "Traceback" not in err
    assert main(["plan", *SAMPLE_MAPPINGS]) == 0
    assert _changes(capsys) == planned  # nothing was applied


def test_an_invalid_gzip_plan_writes_nothing(fresh_checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", *SAMPLE_MAPPINGS, "--out", "plan.json.gz"]) == 0
    planned = _changes(capsys)
    data = json.loads(gzip.decompress((fresh_checkout / "plan.json.gz").read_bytes()))
    data["blocks"][-1]["records"][-1]["action"] = "delete"
    del data["seal"]  # with its seal left, it is refused as edited (tests/plan/test_plan_seal_refused.py)
    (fresh_checkout / "edited.json.gz").write_bytes(gzip.compress(json.dumps(data, indent=2).encode("utf-8")))
    assert main(["apply", "--plan", "edited.json.gz", "--yes"]) == 1
    err = capsys.readouterr().err
    assert "edited.json.gz" in err and "not a valid plan" in err and "'delete' is not one of" in err
    assert main(["plan", *SAMPLE_MAPPINGS]) == 0
    assert _changes(capsys) == planned
