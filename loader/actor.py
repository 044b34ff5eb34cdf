"""Who is acting, for the history's journals and the decisions a reviewer records: the name given
(`--by`), else the CI system's actor, else git's `user.name`, else the OS user."""

from __future__ import annotations

import getpass
import subprocess
from collections.abc import Mapping
from pathlib import Path

CI_ACTORS = ("GITHUB_ACTOR", "GITLAB_USER_LOGIN", "BUILD_REQUESTEDFOR", "BITBUCKET_STEP_TRIGGERER_UUID")


def acting(given: str | None, environ: Mapping[str, str], folder: Path | None = None) -> str | None:
    """Who acts, or None when nothing names anyone. `folder`: where git is asked."""
    if given and given.strip():
        return given.strip()
    for variable in CI_ACTORS:
        if environ.get(variable, "").strip():
            return environ[variable].strip()
    try:
        git = subprocess.run(["git", "config", "user.name"], cwd=folder, capture_output=True, text=True,
                             timeout=5, check=False)
        if git.returncode == 0 and git.stdout.strip():
            return git.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return None
