"""Bad inputs end in a message naming the place, never in "internal error" (exit 3) or a hang.

One YAML loader (loader.yaml_files) reads mapping files, loader.yaml and its `profile:`: deep
nesting, text that is not UTF-8, NUL characters, duplicate keys and files that are not regular
files (`/dev/zero`, a FIFO) are refused there, for every kind of file. plan.json and seeds too;
output paths into a missing folder are refused before any work.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loader.cli import main

MAPPING = """version: 1
source: schools.csv
entities:
  schools:
    entity: school
    key: [code]
    fields:
      code: {column: Code}
      name: {column: Name}
"""
DEEP_YAML = "a: " + "[" * 5000 + "]" * 5000 + "\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "schools.csv").write_text("Code,Name\nS1,School one\n", encoding="utf-8")
    (tmp_path / "schools.yaml").write_text(MAPPING, encoding="utf-8")
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "internal error" not in text and "Traceback" not in text, text
    return code, text


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO nobody writes to: opening it for reading would wait forever."""
    path = tmp_path / "pipe.yaml"
    os.mkfifo(path)
    yield path


# -- mapping files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP_YAML.encode(), "nested deeper than 50 levels"),
        (
            MAPPING.encode("latin-1") + b"# caf\xe9\n",
            "bad.yaml:10:6: not UTF-8 text: byte 0xE9 at line 10, column 6",
        ),
        (MAPPING.replace("schools.csv", '"schools\\0.csv"').encode(), "NUL character"),
        (b"version: 1\x00\n", "invalid YAML"),
    ],
    ids=["deep", "latin-1", "NUL in source", "NUL byte"],
)
def test_a_mapping_file_that_cannot_be_yaml_is_a_finding_at_its_place(
    project: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    (project / "bad.yaml").write_bytes(content)
    code, text = _run(capsys, "validate", "bad.yaml")
    assert code == 1 and expected in text and "bad.yaml:" in text


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "folder"])
def test_a_mapping_that_is_not_a_regular_file_is_refused_at_once(
    project: Path, capsys: pytest.CaptureFixture[str], fifo: Path, special: str
) -> None:
    path = {"/dev/zero": "/dev/zero", "fifo": str(fifo), "folder": str(project)}[special]
    result: list[tuple[int, str]] = []
    worker = threading.Thread(target=lambda: result.append(_run(capsys, "validate", path)), daemon=True)
    worker.start()
    worker.join(60)
    assert result, "validate hung"
    code, text = result[0]
    assert code == 1 and "not a regular file" in text


@pytest.mark.parametrize(
    ("field", "line", "expected"),
    [
        ("name: {value: [1, {a: b}]}", "9:21", "name: `value` holds a list, but this field takes one string value"),
        ("name: {column: Name, default: {a: b}}", "9:37", "name: `default` holds a map"),
    ],
)
def test_a_list_or_map_constant_for_a_text_field_is_an_error_at_its_place(
    project: Path, capsys: pytest.CaptureFixture[str], field: str, line: str, expected: str
) -> None:
    (project / "bad.yaml").write_text(MAPPING.replace("name: {column: Name}", field), encoding="utf-8")
    code, text = _run(capsys, "validate", "bad.yaml")
    assert code == 1 and f"bad.yaml:{line}: {expected}" in text, text


# -- loader.yaml --------------------------------------------------------------------------------


def test_a_setting_given_twice_in_loader_yaml_is_an_error_at_the_second(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "loader.yaml").write_text("concurrency: 4\nconcurrency: 16\n", encoding="utf-8")
    code, text = _run(capsys, "validate", "schools.yaml")
    assert code == 1 and "loader.yaml:2:1: duplicate key 'concurrency'" in text


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (DEEP_YAML.encode(), "nested deeper than 50 levels"),
        (b"concurrency: 4\n# Gr\xfc\xdfe\n", "loader.yaml:2:5: not UTF-8 text: byte 0xFC"),
        (b'environments:\n  x:\n    ca_bundle: "ca\\0.pem"\n', "loader.yaml:3:16: the value holds a NUL character"),
    ],
    ids=["deep", "latin-1", "NUL in ca_bundle"],
)
def test_a_loader_yaml_that_cannot_be_yaml_is_an_error_at_its_place(
    project: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: str
) -> None:
    (project / "loader.yaml").write_bytes(content)
    code, text = _run(capsys, "validate", "schools.yaml")
    assert code == 1 and expected in text


def test_a_config_that_is_not_a_regular_file_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _run(capsys, "validate", "--config", "/dev/zero", "schools.yaml")
    assert code == 1 and "not a regular file" in text


def test_a_profile_path_is_never_an_address(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in ("http://other-host/steal/{id}", "//other-host/steal/{id}", "https:/x/{id}", "x/{id}", "/\\\\h/{id}"):
        (project / "loader.yaml").write_text(
            f"profile:\n  entities:\n    school:\n      item_path: {path!r}\n", encoding="utf-8"
        )
        code, text = _run(capsys, "validate", "schools.yaml")
        assert code == 1 and "loader.yaml:4:18: profile.entities.school.item_path: must be a path on the" in text, text


def test_schema_and_url_errors_never_repeat_the_value(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pasted = "Zm9vYmFyLXNlY3JldC12YWx1ZQ"
    for setting in (f"base_url: {pasted}", f"realm: [{pasted}]", f"base_url: 'ftp://{pasted}'",
                    f"base_url: 'https://h/?key={pasted}'", f"timeout: '{pasted}'"):
        (project / "loader.yaml").write_text(
            "environments:\n  test:\n    base_url: https://h/x\n    auth_url: https://h\n    realm: r\n"
            f"    client_id: c\n    client_secret: {{env: S}}\n    {setting}\n",
            encoding="utf-8",
        )
        code, text = _run(capsys, "validate", "schools.yaml")
        assert code == 1 and "loader.yaml" in text, setting
        assert pasted not in text, text


# -- plan.json, seeds, outputs, the sandbox command -------------------------------------------


def test_a_deep_or_special_plan_file_is_a_plan_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "plan.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, text = _run(capsys, "apply", "--plan", "plan.json")
    assert code == 1 and "plan.json" in text and "nested too deeply" in text
    code, text = _run(capsys, "apply", "--plan", "/dev/zero")
    assert code == 1 and "not a regular file" in text


@pytest.mark.parametrize("option", ["--out", "--report", "--html"])
def test_plan_outputs_into_a_missing_folder_are_refused_before_any_work(
    project: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    code, text = _run(capsys, "plan", "schools.yaml", option, "no/such/folder/plan.out")
    assert code == 64 and f"{option} no/such/folder/plan.out: the folder no/such/folder does not exist" in text


def test_pull_into_a_missing_folder_is_refused_before_any_work(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = _run(capsys, "pull", "school", "--out", "no/such/folder/live.xlsx")
    assert code == 64 and "does not exist" in text
    code, text = _run(capsys, "pull", "school", "--out", "/proc/live.xlsx")
    assert code == 64 and "cannot write there" in text


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_sandbox_serve_on_an_impossible_port_is_a_usage_error(capsys: pytest.CaptureFixture[str], port: str) -> None:
    code, text = _run(capsys, "sandbox", "serve", "--port", port)
    assert code == 64 and "--port" in text


def test_sandbox_serve_with_a_seed_that_is_not_a_regular_file_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, text = _run(capsys, "sandbox", "serve", "--port", "0", "--seed", "/dev/zero")
    assert code == 64 and "--seed /dev/zero" in text and "not a regular file" in text
