"""loader.yaml's `history:` and `service_user_ids:`, and the history a command opens from them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from loader.config import HISTORY_KEY_HINT, HistorySettings, load_config
from loader.errors import ConfigError
from loader.history.errors import HistoryKeyError
from loader.history.keys import SANDBOX_KEY, fingerprint
from loader.history.opening import history_place, open_history
from loader.redaction import redact

ENVIRONMENT = """\
environments:
  test:
    base_url: https://api.test.example.edu.au/institution-api
    auth_url: https://id.example.edu.au
    realm: advance
    client_id: loader
    client_secret: {env: LOADER_TEST_CLIENT_SECRET}
    service_user_ids: [u-loader, u-old-loader]
"""


def config_with(tmp_path: Path, history: str = "") -> Path:
    path = tmp_path / "loader.yaml"
    path.write_text(textwrap.dedent(history) + ENVIRONMENT, encoding="utf-8")
    return path


def test_the_history_is_on_by_default_one_folder_per_environment(tmp_path: Path) -> None:
    config = load_config(config_with(tmp_path))
    assert config.history == HistorySettings("history", None)
    place = history_place(config, "test")
    assert place == (tmp_path / "history" / "test", None, None)


def test_history_false_turns_it_off(tmp_path: Path) -> None:
    config = load_config(config_with(tmp_path, "history: false\n"))
    assert config.history is None
    assert open_history(config, "test", ()) is None
    assert open_history(config, "sandbox", ()) is None


def test_path_and_key_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(config_with(tmp_path, "history: {path: memory, key: {env: MY_HISTORY_KEY}}\n"))
    assert config.history == HistorySettings("memory", "MY_HISTORY_KEY")
    with pytest.raises(ConfigError, match="MY_HISTORY_KEY is not set"):
        open_history(config, "test", ())
    monkeypatch.setenv("MY_HISTORY_KEY", "a-long-random-history-key-4711")
    history = open_history(config, "test", ["applicants"])
    assert history is not None and history.folder == tmp_path / "memory" / "test"
    assert history.digester.is_personal("applicants") and history.digester.data_key is not None
    assert "a-long-random-history-key-4711" not in redact("the key is a-long-random-history-key-4711")


@pytest.mark.parametrize("setting", ["history: {key: plain-text-key-1234}\n", "history: {key: 12345678}\n"])
def test_a_literal_key_in_the_file_is_refused_without_echoing_it(tmp_path: Path, setting: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(config_with(tmp_path, setting))
    assert "history: key is written in the file" in str(raised.value)
    assert raised.value.hint == HISTORY_KEY_HINT
    assert "plain-text-key-1234" not in str(raised.value) and "12345678" not in str(raised.value)
    assert "loader.yaml:1:" in str(raised.value)


@pytest.mark.parametrize("setting", ["history: true\n", "history: {path: ''}\n", "history: {colour: red}\n",
                                     "history: {key: {name: K}}\n"])
def test_other_bad_history_settings_are_refused(tmp_path: Path, setting: str) -> None:
    with pytest.raises(ConfigError, match="history"):
        load_config(config_with(tmp_path, setting))


def test_service_user_ids_per_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(config_with(tmp_path))
    spec = config.spec("test")
    assert spec is not None and spec.service_user_ids == ("u-loader", "u-old-loader")
    monkeypatch.setenv("LOADER_TEST_CLIENT_SECRET", "secret-value-1")
    assert spec.resolve().service_user_ids == ("u-loader", "u-old-loader")
    bad = config_with(tmp_path).read_text().replace("[u-loader, u-old-loader]", "[u-loader, u-loader]")
    (tmp_path / "loader.yaml").write_text(bad)
    with pytest.raises(ConfigError, match="service_user_ids"):
        load_config(tmp_path / "loader.yaml")


def test_the_builtin_sandbox_keeps_its_history_in_dot_loader_under_its_fixed_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    history = open_history(config, None, ["applicants"])
    assert history is not None and history.folder == tmp_path / ".loader" / "history"
    writer = history.begin_apply("sandbox", plan_digest=None, by="test")
    writer.record("create", "applicants", ("A-1",), "id-1")
    head = history.finish_apply(writer)
    assert head.key_fingerprint == fingerprint(SANDBOX_KEY, head.lineage)
    again = open_history(config, "sandbox", ["applicants"])
    assert again is not None and again.line("applicants", ("A-1",)) is not None


def test_a_wrong_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(config_with(tmp_path, "history: {key: {env: MY_HISTORY_KEY}}\n"))
    monkeypatch.setenv("MY_HISTORY_KEY", "the-first-history-key")
    history = open_history(config, "test", ["applicants"])
    assert history is not None
    writer = history.begin_apply("test", plan_digest=None, by="test")
    writer.record("create", "applicants", ("A-1",), "id-1")
    history.finish_apply(writer)
    monkeypatch.setenv("MY_HISTORY_KEY", "another-history-key")
    with pytest.raises(HistoryKeyError, match="does not match") as raised:
        open_history(config, "test", ["applicants"])
    assert "MY_HISTORY_KEY" in (raised.value.hint or "")


def test_an_unknown_environment_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown environment 'prod'"):
        open_history(load_config(config_with(tmp_path)), "prod", ())


def test_an_entity_kept_keyed_stays_keyed_whichever_mappings_are_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    history = open_history(config, "sandbox", ["applicant", "credential"])
    assert history is not None
    writer = history.begin_apply("sandbox", plan_digest=None, by="test")
    writer.record("create", "credential", ("A-1", "TERTIARY", "Diploma"), "id-7")
    writer.record("create", "course", ("C-1",), "id-8")
    history.finish_apply(writer)
    again = open_history(config, "sandbox", ["applicant"])  # the mappings given mark only applicants
    assert again is not None and again.digester.personal == {"applicant", "credential"}
    assert again.line("credential", ("A-1", "TERTIARY", "Diploma")) is not None
    assert again.missing_ids("credential", ["id-7"]) == (1, 0)
    assert not again.digester.is_personal("course") and again.line("course", ("C-1",)) is not None
