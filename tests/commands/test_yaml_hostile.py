"""Hostile YAML ends in one `loader: error:` line naming the file, for every kind of YAML the loader
reads: a mapping file (`loader validate`), the project's `loader.yaml` (`loader plan`) and a test
file under `mappings/tests/` (`loader test`).

Each class runs through the command line in its own process, with a time limit and an address-space
limit, so a hang, an expanded alias bomb or a RecursionError fails the test instead of the machine.
`loader init --pack` copies packs from the package's own data and reads no YAML from the user.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

MEMORY_LIMIT = 1536 * 1024 * 1024


def _alias_bomb(path: Path) -> None:
    """Nine lists, each nine aliases of the one before: 9**9 values once expanded."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * 9) + "]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _deep(path: Path) -> None:
    path.write_text("a: " + "[" * 10_000 + "]" * 10_000 + "\n", encoding="utf-8")


def _fifo(path: Path) -> None:
    os.mkfifo(path)  # nobody writes to it: opening it for reading would wait forever


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")  # endless bytes: reading it to its end would exhaust memory


def _huge(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # 100 MB of NUL bytes, sparse on disk


HOSTILE: dict[str, Callable[[Path], None]] = {
    "alias bomb": _alias_bomb,
    "nested 10,000 deep": _deep,
    "FIFO": _fifo,
    "symlink to /dev/zero": _dev_zero,
    "100 MB": _huge,
}

# The kind of YAML file: where it lies in the project, the command that reads it, and how that
# command's output begins the error about it. A file `loader` cannot read at all is `loader: error:`
# (for mapping files, on the lines under it, one per file); `loader validate` reports what is wrong in
# a mapping file's text as a finding at its place; `loader test` reports each test file on its line.
KINDS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "mapping file": ("mappings/bad.yaml", ("validate", "mappings/bad.yaml"), ("loader: error:", "error:")),
    "loader.yaml": ("loader.yaml", ("plan", "mappings/schools.yaml"), ("loader: error:",)),
    "test file": ("mappings/tests/bad.test.yaml", ("test",), ("ERROR ",)),
}
MAPPING = "version: 1\nsource: schools.csv\nentities: {s: {entity: school, key: [c], fields: {c: {column: Code}}}}\n"


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("hostile", list(HOSTILE))
def test_hostile_yaml_is_one_error_naming_the_file(tmp_path: Path, kind: str, hostile: str) -> None:
    relative, argv, error_start = KINDS[kind]
    (tmp_path / "mappings" / "tests").mkdir(parents=True)
    (tmp_path / "mappings" / "schools.csv").write_text("Code\nS1\n", encoding="utf-8")
    (tmp_path / "mappings" / "schools.yaml").write_text(MAPPING, encoding="utf-8")
    HOSTILE[hostile](tmp_path / relative)
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "loader", *argv], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=30, check=False, preexec_fn=_limit_memory, stdin=subprocess.DEVNULL,
    )
    text = done.stdout + done.stderr
    assert done.returncode in (1, 64), text
    assert "Traceback" not in text and "internal error" not in text, text
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(error_start)]
    assert len(starts) == 1, text
    error = [lines[starts[0]]] + [line for line in lines[starts[0] + 1:] if line.startswith("  ")]
    assert f"{relative}:" in "\n".join(error), text
