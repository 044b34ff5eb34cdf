"""Every file the loader writes goes through loader.files.safe_write: a fresh temporary file beside
the target, created exclusively without following a symlink, then renamed over it. Files with
values to send or personal data are readable by their owner only, from the first byte."""

from __future__ import annotations

import ast
import os
import stat
import tempfile
from pathlib import Path

import pytest

from loader.cli import write_crash_log
from loader.files.safe_write import replacing, temporary_name, write_text

PACKAGE = Path(__file__).resolve().parents[1] / "loader"


def test_a_new_file_is_created_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    old = os.umask(0o000)
    try:
        write_text(path, "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text(encoding="utf-8") == "{}"


def test_an_existing_readable_file_is_replaced_by_an_owner_only_one(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text("old and longer content", encoding="utf-8")
    path.chmod(0o644)
    with replacing(path) as handle:
        handle.write(b"new")
        assert path.read_text(encoding="utf-8") == "old and longer content"  # untouched until the end
    assert path.read_bytes() == b"new"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_file_meant_for_git_takes_the_umasks_mode(tmp_path: Path) -> None:
    path = tmp_path / "decisions.yaml"
    old = os.umask(0o022)
    try:
        write_text(path, "version: 1\n", private=False)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_an_error_while_writing_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "decisions.yaml"
    path.write_text("precious", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt), replacing(path) as handle:
        handle.write(b"half")
        raise KeyboardInterrupt
    assert path.read_text(encoding="utf-8") == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decisions.yaml"]


@pytest.mark.parametrize("name", ["decisions.yaml", "plan.json.gz", "review.xlsx", "x" * 250])
def test_a_symlink_planted_at_any_temporary_name_or_the_target_is_never_written_through(
    tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    target = project / name
    for planted in (f".{name}.tmp", f"{name}.tmp", f".{name}.swp"):  # every name an attacker could guess
        if len(planted) < 256:
            (project / planted).symlink_to(victim)
    target.symlink_to(victim)
    write_text(target, "new")
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not target.is_symlink() and target.read_text(encoding="utf-8") == "new"


def test_temporary_names_are_fresh_hidden_and_short_enough_for_any_target(tmp_path: Path) -> None:
    target = tmp_path / ("n" * 255)
    names = {temporary_name(target).name for _ in range(50)}
    assert len(names) == 50
    assert all(n.startswith(".") and n.endswith(".tmp") and len(n) < 255 for n in names)


def test_a_crash_log_is_owner_only_whatever_the_umask_and_through_a_symlinked_temp_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real-tmp"
    real.mkdir()
    link = tmp_path / "tmp-link"
    link.symlink_to(real, target_is_directory=True)
    monkeypatch.setattr(tempfile, "tempdir", str(link))
    old = os.umask(0o277)  # open(..., 0o600) alone would make it 0400, mkdtemp's folder 0500
    try:
        log = write_crash_log(RuntimeError("boom"))
    finally:
        os.umask(old)
    assert log.parent.parent == real  # the real path is reported, not the link's
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700
    assert "RuntimeError" in log.read_text(encoding="utf-8")


# Where the loader may write otherwise: the one helper (and the output check's probe, a mkstemp file
# removed at once); the history (its own writers, same rule); the sandbox (a server, its own SQLite
# database); the CI summary file GitHub hands over for appending.
_ALLOWED = ("files/safe_write.py", "files/outputs.py", "history/", "sandbox/", "report/github.py")
_PATH_WRITES = {"write_text", "write_bytes", "touch", "symlink_to", "hardlink_to", "rename", "copy", "copyfile",
                "copy2", "copytree", "move"}
_WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def _is_write(node: ast.Call) -> bool:
    """Whether the call opens or makes a file for writing by its name (not a handle's write)."""
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in _PATH_WRITES:
        return True
    if isinstance(func, ast.Attribute) and func.attr == "replace" and len(node.args) == 1 and not node.keywords:
        return True  # Path.replace(target) or os.replace's one-argument twin; str.replace takes two
    if isinstance(func, ast.Attribute) and func.attr == "save":
        return not (node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "handle")
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name != "open":
        return False
    flags = {n.attr for a in node.args for n in ast.walk(a) if isinstance(n, ast.Attribute)}
    modes = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    modes += [k.value.value for k in node.keywords
              if k.arg == "mode" and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)]
    return bool(flags & _WRITE_FLAGS) or any(set(m) - set("rbt") for m in modes)


def _writes(tree: ast.AST) -> list[int]:
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_write(n)]


def test_no_module_writes_a_file_but_through_the_one_helper() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(_ALLOWED):
            continue
        for line in _writes(ast.parse(path.read_text(encoding="utf-8"))):
            offenders.append(f"{relative}:{line}")
    assert offenders == []
