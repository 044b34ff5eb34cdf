"""The pre-commit hook (.pre-commit-hooks.yaml), run by pre-commit's `try-repo` in a throwaway repository.

try-repo installs loader from this checkout into pre-commit's own virtualenv (from the package
registry), so it is slow; pre-commit's cache lives under the test's temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.plan import REPO

BIN = Path(sys.executable).parent


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_try_repo_runs_loader_validate_on_mapping_files_and_fails_on_a_broken_one(tmp_path: Path) -> None:
    pre_commit = shutil.which("pre-commit", path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    assert pre_commit, "pre-commit is not installed: pip install -e '.[test]'"
    project = tmp_path / "project"
    (project / "mappings").mkdir(parents=True)
    shutil.copytree(REPO / "samples" / "intake-2027", project / "samples" / "intake-2027")
    shutil.copy(REPO / "mappings" / "curriculum.yaml", project / "mappings" / "curriculum.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOADER_", "GIT_"))}
    env |= {"PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for argv in (["git", "init", "-q"], ["git", "add", "."]):
        assert _run(argv, project, env).returncode == 0

    done = _run([pre_commit, "try-repo", str(REPO), "loader-validate", "--all-files"], project, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "loader validate" in done.stdout and "Passed" in done.stdout

    broken = (project / "mappings" / "curriculum.yaml").read_text(encoding="utf-8")
    (project / "mappings" / "curriculum.yaml").write_text(broken.replace("School Code", "School Kode", 1),
                                                         encoding="utf-8")
    assert _run(["git", "add", "."], project, env).returncode == 0
    done = _run([pre_commit, "try-repo", str(REPO), "loader-validate", "--all-files"], project, env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout and "School Kode" in done.stdout
