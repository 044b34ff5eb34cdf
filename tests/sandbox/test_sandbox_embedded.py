"""The built-in sandbox run from anywhere: it says which data file it uses and that it is empty,
loader.yaml can name its data and seed files, and a bare sandbox has tags to try credentials with."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from loader.api.client import ApiClient
from loader.config import Config, load_config
from loader.environments import open_environment
from loader.errors import ConfigError
from loader.sandbox.seed import DEFAULT_TAGS

SEED = {"institution-a": {"schools": [{"code": "FROM-YAML", "name": "Seeded through loader.yaml"}]}}


def _collection(config: Config, entity: str) -> list[dict[str, object]]:
    async def go() -> list[dict[str, object]]:
        with open_environment(config, None) as env:
            async with ApiClient(env, config.profile) as client:
                return await client.fetch_collection(entity)

    return asyncio.run(go())


def test_an_empty_builtin_sandbox_says_which_data_file_it_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no loader.yaml, no samples/: elsewhere than the project
    assert _collection(load_config(None), "school") == []
    err = capsys.readouterr().err
    data = tmp_path / ".loader" / "sandbox.sqlite3"
    assert f"the built-in sandbox uses {data}, which is empty" in err
    assert str(tmp_path / "samples" / "sandbox-seed.json") in err
    # Still empty on the next run (its default roles and tags are not records of the user's): said again.
    _collection(load_config(None), "school")
    assert "which is empty" in capsys.readouterr().err


def test_a_seeded_builtin_sandbox_says_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "sandbox-seed.json").write_text(json.dumps(SEED), encoding="utf-8")
    assert [s["code"] for s in _collection(load_config(None), "school")] == ["FROM-YAML"]
    assert "empty" not in capsys.readouterr().err


def test_loader_yaml_names_the_sandbox_data_and_seed_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "fixtures").mkdir(parents=True)
    (project / "fixtures" / "seed.json").write_text(json.dumps(SEED), encoding="utf-8")
    (project / "loader.yaml").write_text(
        "sandbox:\n  data: state/sandbox.db\n  seed: fixtures/seed.json\n", encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(project / "loader.yaml")
    assert [s["code"] for s in _collection(config, "school")] == ["FROM-YAML"]
    assert (project / "state" / "sandbox.db").is_file()
    assert not (elsewhere / ".loader").exists()
    assert "empty" not in capsys.readouterr().err


def test_a_named_seed_file_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "loader.yaml").write_text("sandbox: {seed: nope.json}\n", encoding="utf-8")
    config = load_config(tmp_path / "loader.yaml")
    with pytest.raises(ConfigError, match=r"nope\.json is not there"), open_environment(config, None):
        pass


def test_an_unknown_sandbox_setting_is_refused_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "loader.yaml").write_text("sandbox:\n  seeds: x.json\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path / "loader.yaml")
    assert "loader.yaml:2:3: sandbox.seeds: unknown setting 'seeds'" in caught.value.message


def test_a_bare_sandbox_has_tags_a_credential_can_carry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    tags = _collection(config, "tag")
    assert sorted(str(t["name"]) for t in tags) == sorted(t["name"] for t in DEFAULT_TAGS)

    async def credential_with_a_tag() -> dict[str, object]:
        with open_environment(config, None) as env:
            async with ApiClient(env, config.profile) as client:
                applicant = await client.create("applicant", {"external_id": "T-1"})
                return await client.create(
                    "credential", {"applicant_id": applicant["id"], "type": "TERTIARY", "tags": [tags[0]["id"]]}
                )

    assert asyncio.run(credential_with_a_tag())["tags"] == [tags[0]["id"]]
