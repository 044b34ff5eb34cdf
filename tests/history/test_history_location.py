"""Where a history lives and which key it uses, from loader.yaml's plain values."""

from __future__ import annotations

from pathlib import Path

import pytest

from loader.errors import ConfigError
from loader.history.keys import SANDBOX_KEY, fingerprint, unwrap, wrap
from loader.history.location import history_folder, history_key

PROJECT = Path("/project")


def test_one_folder_per_environment_under_the_configured_path() -> None:
    assert history_folder({"path": "memory"}, project_dir=PROJECT, environment="test") == PROJECT / "memory" / "test"
    assert history_folder(None, project_dir=PROJECT, environment="prod") == PROJECT / "history" / "prod"


def test_history_false_turns_it_off() -> None:
    assert history_folder(False, project_dir=PROJECT, environment="test") is None
    assert history_folder(False, project_dir=PROJECT, environment="sandbox",
                          sandbox_data=PROJECT / ".loader" / "sandbox.sqlite3") is None


def test_the_builtin_sandbox_keeps_its_history_beside_its_data() -> None:
    data = PROJECT / ".loader" / "sandbox.sqlite3"
    folder = history_folder({"path": "history"}, project_dir=PROJECT, environment="sandbox", sandbox_data=data)
    assert folder == PROJECT / ".loader" / "history"
    assert history_key({"key": {"env": "K"}}, environ={}, builtin_sandbox=True) == (SANDBOX_KEY, None)


@pytest.mark.parametrize("setting", ["history", {"path": ""}, {"path": 3}])
def test_a_bad_setting_is_a_config_error(setting: object) -> None:
    with pytest.raises(ConfigError):
        history_folder(setting, project_dir=PROJECT, environment="test")


def test_the_key_comes_from_the_named_variable() -> None:
    assert history_key({"key": {"env": "HK"}}, environ={"HK": "secret text"}) == (b"secret text", "HK")
    assert history_key({"path": "history"}, environ={}) == (None, None)
    with pytest.raises(ConfigError, match="HK is not set"):
        history_key({"key": {"env": "HK"}}, environ={})
    with pytest.raises(ConfigError, match="must name"):
        history_key({"key": "HK"}, environ={})


def test_the_data_key_unwraps_only_with_its_key_and_the_fingerprint_tells_keys_apart() -> None:
    data = bytes(range(32))
    wrapped = wrap(data, b"key one", "lineage")
    assert unwrap(wrapped, b"key one", "lineage") == data
    assert unwrap(wrapped, b"key two", "lineage") != data
    assert data.hex() not in wrapped
    assert fingerprint(b"key one", "lineage") != fingerprint(b"key two", "lineage")
    assert fingerprint(b"key one", "lineage") != fingerprint(b"key one", "other lineage")
