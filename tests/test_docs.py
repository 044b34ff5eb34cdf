"""The docs name only what exists, and the README stays a front door.

Every `loader/...` file path and every dotted `loader.<package>.<module>` name in the README, the changelog, the
pages under docs/ and the docstrings under loader/ must resolve: a path to a file or folder of the
project, a dotted name to a module or package (and, past the module, to a name the module defines).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "loader"
README_MAX_LINES = 300
INSTALL_AND_PLAN = "pip install -e . && loader plan mappings/curriculum.yaml"
INSTALL_AND_TEST = "pip install -e '.[test]' && pytest"

# `loader/` then path segments; a trailing `/` or a file name with its suffix.
PATH_NAME = re.compile(r"(?<![\w./-])loader/(?:[\w-]+/)*(?:[\w-]+\.\w+|[\w-]+/?)")
# `loader.` then identifiers; `loader.yaml` and other file names are not module names.
DOTTED_NAME = re.compile(r"(?<![\w./-])loader(?:\.[A-Za-z_]\w*)+")
FILE_SUFFIXES = {"yaml", "yml", "json", "py", "md", "txt", "toml", "xlsx", "csv", "sqlite3", "html", "log"}


def prose_files() -> list[Path]:
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *pages]


def docstrings(path: Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield text


def texts() -> Iterator[tuple[str, str]]:
    for path in prose_files():
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted(PACKAGE.rglob("*.py")):
        for text in docstrings(path):
            yield f"{path.relative_to(ROOT).as_posix()} (docstring)", text


def path_exists(name: str) -> bool:
    return (ROOT / name.rstrip("/")).exists()


def defined_names(module_file: Path) -> set[str]:
    """Top-level names a module defines or imports (what `module.name` can refer to)."""
    names: set[str] = set()
    for node in ast.parse(module_file.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


@cache
def package_dirs() -> dict[str, str]:
    """Packages kept outside loader/ (`loader.schemas` is schemas/), as pyproject.toml maps them."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    dirs: dict[str, str] = pyproject["tool"]["setuptools"].get("package-dir", {})
    return dirs


def module_file(parts: list[str]) -> Path | None:
    mapped = package_dirs().get(".".join(parts))
    base = ROOT / mapped if mapped else ROOT.joinpath(*parts)
    if mapped and base.is_dir():
        return base / "__init__.py" if (base / "__init__.py").is_file() else None
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


@cache
def names_spelled_in_code() -> set[str]:
    """Dotted names the package itself spells as strings: loggers (`loader.http`), not modules."""
    spelled: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED_NAME.fullmatch(node.value):
                spelled.add(node.value)
    return spelled


def dotted_name_resolves(name: str) -> bool:
    """`loader.a.b.c`: the longest prefix that is a module or package, then a name it defines;
    or a name the code spells as a string (a logger's)."""
    if name in names_spelled_in_code():
        return True
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        found = module_file(parts[:end])
        if found is None:
            continue
        rest = parts[end:]
        return not rest or rest[0] in defined_names(found)
    return False


def is_file_name(name: str) -> bool:
    return name.count(".") == 1 and name.rsplit(".", 1)[1] in FILE_SUFFIXES


def stale_names(text: str) -> list[str]:
    stale = [m.group() for m in PATH_NAME.finditer(text) if not path_exists(m.group())]
    for match in DOTTED_NAME.finditer(text):
        name = match.group()
        if not is_file_name(name) and not dotted_name_resolves(name):
            stale.append(name)
    return stale


def test_every_loader_path_and_module_named_in_docs_and_docstrings_exists() -> None:
    stale = {where: names for where, text in texts() if (names := stale_names(text))}
    assert not stale, f"names of files or modules that do not exist: {stale}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see `loader/plan/incremental/parts.py`", []),
        ("see `loader/plan/no_such_module.py`", ["loader/plan/no_such_module.py"]),
        ("`loader.records` holds them", ["loader.records"]),
        ("`loader.event_loop.run` runs it", []),
        ("`loader.event_loop.no_such_function`", ["loader.event_loop.no_such_function"]),
        ("a `loader.yaml` and `loader/profile.yaml`", []),
        ("`loader.sandbox.server.serve_in_thread`", []),
        ("under `loader/sandbox/`", []),
        ("under `loader/nowhere/`", ["loader/nowhere/"]),
        ("`loader.schemas.entities` holds them", []),
        ("the `loader.http` logger", []),
    ],
)
def test_the_name_check_tells_existing_names_from_stale_ones(text: str, expected: list[str]) -> None:
    assert stale_names(text) == expected


def test_the_readme_is_a_front_door_with_both_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    assert INSTALL_AND_PLAN in readme and INSTALL_AND_TEST in readme


def test_ci_runs_the_readme_test_command_and_builds_the_site_strictly() -> None:
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert INSTALL_AND_TEST in script
    assert "mkdocs build --strict" in script


def test_every_environment_variable_the_loader_reads_is_on_the_environment_page() -> None:
    """docs/environment.md lists every variable named in the loader's code (limits, LOADER_*, CI
    actors, colour): a variable added without its row fails here."""
    import re

    from loader.actor import CI_ACTORS

    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    named = set(CI_ACTORS) | {"NO_COLOR", "FORCE_COLOR", "GITHUB_STEP_SUMMARY"}
    for module in (ROOT / "loader").rglob("*.py"):
        if "sandbox" not in module.parts:
            named |= set(re.findall(r"\"(LOADER_[A-Z_]+)\"", module.read_text(encoding="utf-8")))
    assert sorted(name for name in named if f"`{name}`" not in page) == []
