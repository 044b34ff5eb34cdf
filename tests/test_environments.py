"""open_environment: declared environments resolve their variables; `sandbox` runs the embedded service."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from loader.api.client import ApiClient
from loader.config import Config, load_config
from loader.environments import open_environment
from loader.errors import ConfigError, UsageError

SEED = {"institution-a": {"schools": [{"code": "SEEDED", "name": "Seeded school"}]}}


def _codes_and_create(config: Config, new_code: str | None) -> list[str]:
    async def go() -> list[str]:
        with open_environment(config, None) as env:
            async with ApiClient(env, config.profile) as client:
                if new_code:
                    await client.create("school", {"code": new_code, "name": "Made in a test"})
                return [r["code"] for r in await client.fetch_collection("school")]

    return asyncio.run(go())


def test_the_builtin_sandbox_is_seeded_on_first_use_and_keeps_its_data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples").mkdir()
    (tmp_path / "samples" / "sandbox-seed.json").write_text(json.dumps(SEED), encoding="utf-8")
    config = load_config(None)

    assert _codes_and_create(config, "ADDED") == ["SEEDED", "ADDED"]
    assert (tmp_path / ".loader" / "sandbox.sqlite3").is_file()
    # A second run finds the same data, and the seed is not applied twice.
    assert _codes_and_create(config, None) == ["SEEDED", "ADDED"]


def test_the_builtin_sandbox_reports_itself_and_is_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with open_environment(load_config(None), "sandbox") as env:
        assert env.is_builtin_sandbox
        assert env.expect_environment == "sandbox"
        assert env.base_url.startswith("http://127.0.0.1:")
        assert "sandbox-secret" not in repr(env)


def _config(tmp_path: Path, extra: str = "") -> Config:
    text = textwrap.dedent(
        """\
        default_environment: test
        environments:
          test:
            base_url: https://api.test.example.edu.au
            auth_url: https://id.example.edu.au
            realm: advance
            expect_environment: test
            client_id: {env: LOADER_TEST_CLIENT_ID}
            client_secret: {env: LOADER_TEST_CLIENT_SECRET}
        """
    )
    path = tmp_path / "loader.yaml"
    path.write_text(text + extra, encoding="utf-8")
    return load_config(path)


def test_a_declared_environment_reads_its_variables_when_opened(tmp_path, monkeypatch):
    config = _config(tmp_path)
    monkeypatch.setenv("LOADER_TEST_CLIENT_ID", "client-from-env")
    monkeypatch.setenv("LOADER_TEST_CLIENT_SECRET", "secret-from-env")
    with open_environment(config, None) as env:
        assert (env.name, env.client_id, env.client_secret.reveal()) == ("test", "client-from-env", "secret-from-env")
        assert not env.is_builtin_sandbox


def test_a_missing_variable_stops_before_anything_is_started(tmp_path, monkeypatch):
    config = _config(tmp_path)
    monkeypatch.setenv("LOADER_TEST_CLIENT_ID", "client-from-env")
    with pytest.raises(ConfigError) as caught, open_environment(config, "test"):
        pass
    assert "LOADER_TEST_CLIENT_SECRET" in str(caught.value)


def test_an_environment_named_sandbox_in_loader_yaml_replaces_the_builtin(tmp_path, monkeypatch):
    extra = textwrap.indent(
        textwrap.dedent(
            """\
            sandbox:
              base_url: http://127.0.0.1:9999
              auth_url: http://127.0.0.1:9999
              realm: sandbox
              client_id: mine
              client_secret: {env: LOADER_MY_SANDBOX_SECRET}
            """
        ),
        "  ",
    )
    config = _config(tmp_path, extra)
    monkeypatch.setenv("LOADER_MY_SANDBOX_SECRET", "x" * 8)
    with open_environment(config, "sandbox") as env:
        details: dict[str, Any] = {"base_url": env.base_url, "builtin": env.is_builtin_sandbox}
    assert details == {"base_url": "http://127.0.0.1:9999", "builtin": False}


def test_a_broken_sandbox_database_is_a_config_error_saying_what_to_delete(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".loader").mkdir()
    (tmp_path / ".loader" / "sandbox.sqlite3").write_bytes(b"this is not an SQLite database, not at all")
    with pytest.raises(ConfigError) as caught, open_environment(load_config(None), None):
        pass
    assert "did not start" in str(caught.value)
    assert caught.value.hint == f"delete {tmp_path / '.loader' / 'sandbox.sqlite3'} to start from the seed again"


def test_an_empty_environment_name_is_a_usage_error_never_the_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    with pytest.raises(UsageError, match="--env is empty"), open_environment(config, ""):
        pass
    assert not (tmp_path / ".loader").exists()
