"""Every mapping example in docs/ (a fenced `yaml` block with `version: 1` and `entities:`) passes
`loader validate`, offline, as a file of a project's `mappings/` folder beside the repository's
`samples/`: an example naming a sample file (`../samples/...`) reads the real one, and a file the
page shows ("`courses.json`:" above a fenced block) is written beside the mapping."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from loader.cli import main
from loader.errors import EXIT_OK

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.MULTILINE | re.DOTALL)
# A file the page shows: "`courses.json`:", a blank line, then the file in a fence of its own.
SHOWN_FILE = re.compile(r"^`([\w.-]+)`:\n\n```\w*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def mapping_examples() -> list[tuple[str, str, dict[str, str]]]:
    """(page:line, text, the files its page shows by name) of every mapping example under docs/."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        files = {m.group(1): m.group(2) for m in SHOWN_FILE.finditer(text)}
        for match in FENCE.finditer(text):
            body = match.group(1)
            if re.search(r"^version: 1$", body, re.MULTILINE) and re.search(r"^entities:", body, re.MULTILINE):
                line = text.count("\n", 0, match.start()) + 1
                found.append((f"{page.relative_to(ROOT).as_posix()}:{line}", body, files))
    return found


EXAMPLES = mapping_examples()


def test_the_docs_have_mapping_examples_and_the_reference_leads_with_one() -> None:
    assert len(EXAMPLES) >= 5
    assert any(where.startswith("docs/mappings.md:") for where, _, _ in EXAMPLES)
    assert any("courses.json" in files for _, _, files in EXAMPLES)


@pytest.mark.parametrize(("where", "text", "files"), EXAMPLES, ids=[where for where, _, _ in EXAMPLES])
def test_a_docs_mapping_example_validates(where: str, text: str, files: dict[str, str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    (tmp_path / "mappings").mkdir()
    for name, content in files.items():  # the files the page shows, beside the mapping that reads them
        (tmp_path / "mappings" / name).write_text(content, encoding="utf-8")
    mapping = tmp_path / "mappings" / "example.yaml"
    mapping.write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code = main(["validate", "--no-color", str(mapping)])
    assert code == EXIT_OK, f"{where}:\n{capsys.readouterr().out}"
