"""Where the project is: its loader.yaml and its mapping files, found as git and dbt find theirs.

A command run anywhere below a project works on that project: `loader.yaml` is looked for in the
working directory and its parents up to the repository's root (the folder holding `.git`), or named
by `LOADER_CONFIG`. A project without a loader.yaml is rooted at the nearest folder holding the
loader's state (`.loader/`), else at the repository's root, else at the working directory, so that
a plan run from `mappings/` never starts a second, empty built-in sandbox beside the first.

A command given no mapping files takes the project's: every `*.yaml`/`*.yml` under `mappings/`
except `mappings/tests/` (the test cases of `loader test`). The pre-commit hook and the CI recipes
follow the same rule.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from loader.errors import ConfigError, UsageError

CONFIG_FILE_NAME = "loader.yaml"
CONFIG_VARIABLE = "LOADER_CONFIG"
STATE_FOLDER = ".loader"
MAPPINGS_FOLDER = "mappings"
TESTS_FOLDER = "tests"  # under mappings/: loader test's cases, never planned
MAPPING_SUFFIXES = (".yaml", ".yml")


def _upward(start: Path) -> Iterator[Path]:
    """`start` and its parents, up to and including the repository's root (or the file system's)."""
    for folder in (start, *start.parents):
        yield folder
        if (folder / ".git").exists():
            return


def find_config(start: Path | None = None) -> Path | None:
    """The loader.yaml this run uses: `LOADER_CONFIG` when set, else the nearest one upward."""
    named = os.environ.get(CONFIG_VARIABLE)
    if named is not None:
        if not named.strip():
            hint = f"name a loader.yaml, or unset {CONFIG_VARIABLE}"
            raise UsageError(f"{CONFIG_VARIABLE} is set but empty", hint=hint)
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"{CONFIG_VARIABLE} names {named!r}, which is not a file",
                hint=f"name an existing loader.yaml, or unset {CONFIG_VARIABLE} to look for one upward",
            )
        return path
    for folder in _upward((start or Path.cwd()).absolute()):
        candidate = folder / CONFIG_FILE_NAME
        if os.path.lexists(candidate):  # whatever it is: a FIFO or a device is refused, not passed over
            return candidate
    return None


def bare_root(start: Path | None = None) -> Path:
    """The root of a project without a loader.yaml: the nearest folder upward holding `.loader/`,
    else the repository's root, else `start` (the working directory)."""
    here = (start or Path.cwd()).absolute()
    last = here
    for folder in _upward(here):
        if (folder / STATE_FOLDER).is_dir():
            return folder
        last = folder
    return last if (last / ".git").exists() else here


def project_root(start: Path | None = None) -> Path:
    """The folder the project's relative paths start from (loader.yaml's, else `bare_root`)."""
    config = find_config(start)
    return config.parent if config is not None else bare_root(start)


def is_project_mapping(path: Path, root: Path) -> bool:
    """Whether `path` is one of the project's mapping files: YAML under mappings/, not in mappings/tests/."""
    try:
        parts = path.absolute().relative_to((root / MAPPINGS_FOLDER).absolute()).parts
    except ValueError:
        return False
    return bool(parts) and parts[0] != TESTS_FOLDER and path.suffix.lower() in MAPPING_SUFFIXES


def project_mappings(root: Path) -> tuple[Path, ...]:
    """The project's mapping files, sorted, as a command given none takes them; a usage error when
    there are none (naming where they were looked for)."""
    folder = root / MAPPINGS_FOLDER
    found = sorted(
        path for path in folder.rglob("*") if path.is_file() and is_project_mapping(path, root)
    ) if folder.is_dir() else []
    if not found:
        raise UsageError(
            f"no mapping files given, and none in {folder}",
            hint="name the mapping files (loader plan mappings/curriculum.yaml), or put them under mappings/",
        )
    cwd = Path.cwd().absolute()
    return tuple(_shown(path, cwd) for path in found)


def _shown(path: Path, cwd: Path) -> Path:
    """`path` relative to the working directory when below it (as a user would have typed it)."""
    try:
        return path.relative_to(cwd)
    except ValueError:
        return path


def mappings_given_or_project(given: list[str] | list[Path], config: str | None) -> tuple[Path, ...]:
    """The mapping files a command was given, else the project's (rooted at `--config`'s folder
    when one is named)."""
    if given:
        return tuple(Path(path) for path in given)
    return project_mappings(Path(config).parent if config else project_root())
