"""Who applied, as the journal's header names it: `--by`, else the CI actor, else the git user,
else the OS user."""

from __future__ import annotations

import getpass
import subprocess
from pathlib import Path

import pytest

from loader.apply.history_checks import applied_by


def _repository(folder: Path, user: str | None) -> Path:
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if user is not None:
        subprocess.run(["git", "-C", str(folder), "config", "user.name", user], check=True)
    return folder


def test_by_given_wins_then_the_ci_actor_then_the_git_user(tmp_path: Path) -> None:
    folder = _repository(tmp_path, "Git User")
    ci = {"GITHUB_ACTOR": "octocat", "GITLAB_USER_LOGIN": "tanuki"}
    assert applied_by("  Release Bot ", ci, folder) == "Release Bot"
    assert applied_by(None, ci, folder) == "octocat"
    assert applied_by("", {"GITLAB_USER_LOGIN": "tanuki", "GITHUB_ACTOR": " "}, folder) == "tanuki"
    assert applied_by(None, {}, folder) == "Git User"


def test_without_a_git_user_the_os_user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "no-git"
    folder.mkdir()
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        monkeypatch.setenv(name, "/dev/null")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert applied_by(None, {}, folder) == getpass.getuser()
