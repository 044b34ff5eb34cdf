"""docs/sandbox.md's rehearsal of platform edits, run as written: the project's own sandbox served
from `.loader/sandbox.sqlite3` on a free port, examples/staff_edit.py editing a school as staff,
then `loader plan` keeping that edit as one made in the platform."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.project import SCHOOLS_MAPPING, write_schools

from loader.cli import main
from loader.sandbox.server import LISTENING_PREFIX

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "staff_edit.py"


def test_a_platform_edit_rehearsed_on_the_projects_own_sandbox_is_kept_by_the_next_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loader.yaml").write_text("", encoding="utf-8")
    (tmp_path / "schools.yaml").write_text(SCHOOLS_MAPPING, encoding="utf-8")
    write_schools(tmp_path / "schools.xlsx", [("SCI", "Science"), ("ENG", "Engineering")])
    assert main(["apply", "schools.yaml", "--yes"]) == 0
    serve = subprocess.Popen([sys.executable, "-m", "loader", "sandbox", "serve", "--data", ".loader/sandbox.sqlite3",
                              "--port", "0"], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert serve.stdout is not None
        line = serve.stdout.readline()
        assert line.startswith(LISTENING_PREFIX), line
        url = line.removeprefix(LISTENING_PREFIX).split()[0]
        edit = subprocess.run([sys.executable, str(EXAMPLE), url, "schools", "SCI", "name", "School of Sciences"],
                              capture_output=True, text=True, timeout=60)
        assert edit.returncode == 0, edit.stderr
    finally:
        serve.terminate()
        serve.communicate(timeout=30)  # reaped, its pipe read to the end and closed
    capsys.readouterr()
    assert main(["plan", "schools.yaml"]) == 0
    out = capsys.readouterr().out
    assert 'kept platform edit: name: live "School of Sciences" kept (sheet "Science")' in out
