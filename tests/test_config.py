"""loader.yaml: validation with file:line:col, secrets only from the environment, the https rule."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loader.config import SECRET_HINT, Secret, check_url, is_loopback_host, load_config, loader_schema
from loader.errors import ConfigError, ProfileError

VALID = """\
default_environment: test
concurrency: 4
environments:
  test:
    base_url: https://api.test.example.edu.au/institution-api/
    auth_url: https://id.example.edu.au
    realm: advance
    expect_environment: test
    client_id: {env: LOADER_TEST_CLIENT_ID}
    client_secret: {env: LOADER_TEST_CLIENT_SECRET}
  local:
    base_url: http://127.0.0.1:8080
    auth_url: http://localhost:8080
    realm: sandbox
    client_id: sandbox-client
    client_secret: {env: LOADER_LOCAL_SECRET}
    timeout: 5
    retry: {attempts: 3, wait_max: 2}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "loader.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_without_a_file_only_the_builtin_sandbox_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.path is None
    assert config.default_environment == "sandbox"
    assert config.spec(None) is None
    assert config.is_builtin_sandbox("sandbox")
    assert config.concurrency == 8
    assert "school" in config.profile.entities


def test_a_loader_yaml_in_the_working_directory_is_found(tmp_path, monkeypatch):
    write(tmp_path, VALID)
    monkeypatch.chdir(tmp_path)
    config = load_config(None)
    assert config.path == tmp_path / "loader.yaml"
    assert config.default_environment == "test"
    assert config.environment_names() == ["local", "sandbox", "test"]


def test_a_valid_file_gives_environments_whose_secrets_come_from_the_environment(tmp_path, monkeypatch):
    config = load_config(write(tmp_path, VALID))
    monkeypatch.setenv("LOADER_TEST_CLIENT_ID", "client-7")
    monkeypatch.setenv("LOADER_TEST_CLIENT_SECRET", "s3cret-value")
    spec = config.spec("test")
    assert spec is not None
    env = spec.resolve()
    assert env.base_url == "https://api.test.example.edu.au/institution-api"
    assert env.client_id == "client-7"
    assert env.client_secret.reveal() == "s3cret-value"
    assert env.expect_environment == "test"
    assert not env.is_builtin_sandbox
    assert config.concurrency == 4
    assert "s3cret-value" not in repr(env) and "s3cret-value" not in str(env)
    local = config.spec("local")
    assert local is not None
    assert local.timeout == 5.0 and local.retry.attempts == 3 and local.retry.wait_max == 2


def test_a_literal_secret_is_refused_with_what_to_do_and_where(tmp_path):
    text = VALID.replace("client_secret: {env: LOADER_LOCAL_SECRET}", "client_secret: hunter2-literal")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    error = caught.value
    assert error.hint == SECRET_HINT
    assert str(error.where) == f"{tmp_path / 'loader.yaml'}:16:20"
    assert "hunter2-literal" not in str(error)


def test_a_missing_variable_is_named_when_the_environment_is_used(tmp_path):
    config = load_config(write(tmp_path, VALID))  # loading alone needs no variable
    local = config.spec("local")
    assert local is not None
    with pytest.raises(ConfigError, match="LOADER_LOCAL_SECRET"):
        local.resolve()


def test_schema_errors_point_at_the_line_and_column(tmp_path):
    text = VALID.replace("    realm: advance\n", "    realm: advance\n    colour: blue\n").replace(
        "concurrency: 4", "concurrency: many"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    message = str(caught.value)
    assert f"{tmp_path / 'loader.yaml'}:2:14: concurrency: the value is not of type 'integer'" in message
    assert f"{tmp_path / 'loader.yaml'}:8:5: environments.test.colour: unknown setting 'colour'" in message


def test_yaml_syntax_errors_name_the_place(tmp_path):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, "environments:\n  test: [unclosed\n"))
    assert str(caught.value.where).startswith(f"{tmp_path / 'loader.yaml'}:")


def test_plain_http_is_refused_for_a_remote_host(tmp_path):
    text = VALID.replace("https://id.example.edu.au", "http://id.example.edu.au")
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text))
    assert "must use https://" in str(caught.value)
    assert str(caught.value.where) == f"{tmp_path / 'loader.yaml'}:6:15"


@settings(max_examples=40)
@given(st.ip_addresses(v=4))
def test_only_the_loopback_block_counts_as_loopback(address):
    assert is_loopback_host(str(address)) == str(address).startswith("127.")


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "http://127.9.8.7", "http://[::1]:80/x", "http://localhost"])
def test_loopback_addresses_may_use_plain_http(url):
    assert check_url(url + "/", "base_url", None) == url


@pytest.mark.parametrize("url", ["http://10.0.0.1", "http://localhost.example.com", "ftp://127.0.0.1", "https://"])
def test_other_addresses_must_use_https(url):
    with pytest.raises(ConfigError):
        check_url(url, "base_url", None)


@pytest.mark.parametrize("url", ["https://svc:hunter22@api.example.edu.au", "https://hunter22@api.example.edu.au"])
def test_a_url_holding_a_credential_is_refused_without_repeating_it(url):
    with pytest.raises(ConfigError) as caught:
        check_url(url, "base_url", None)
    assert "user name or password" in str(caught.value)
    assert "hunter22" not in str(caught.value)


def test_a_ca_bundle_must_name_a_file_relative_to_the_config(tmp_path):
    missing = VALID.replace("    realm: advance\n", "    realm: advance\n    ca_bundle: certs/ca.pem\n")
    with pytest.raises(ConfigError, match="ca_bundle"):
        load_config(write(tmp_path, missing))
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n", encoding="utf-8")
    spec = load_config(write(tmp_path, missing)).spec("test")
    assert spec is not None
    assert spec.ca_bundle == tmp_path / "certs" / "ca.pem"


def test_an_unknown_environment_lists_the_known_ones(tmp_path):
    config = load_config(write(tmp_path, VALID))
    with pytest.raises(ConfigError) as caught:
        config.spec("prod")
    assert caught.value.hint == "use one of: local, sandbox, test"


def test_a_default_environment_that_is_not_defined_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="'prod' is not defined"):
        load_config(write(tmp_path, VALID.replace("default_environment: test", "default_environment: prod")))


def test_a_profile_override_is_merged_and_validated(tmp_path):
    override = VALID + "profile:\n  service:\n    page_size: 50\n"
    assert load_config(write(tmp_path, override)).profile.service.page_size == 50
    with pytest.raises(ProfileError):
        load_config(write(tmp_path, VALID + "profile:\n  service:\n    page_size: none\n"))


def test_an_empty_file_is_the_builtin_sandbox_only(tmp_path):
    config = load_config(write(tmp_path, ""))
    assert config.default_environment == "sandbox" and not config.environments


def test_a_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_a_secret_never_shows_itself():
    secret = Secret("abc-123-xyz")
    assert "abc-123-xyz" not in repr(secret) + str(secret) + f"{secret}" + repr([secret])
    assert secret.reveal() == "abc-123-xyz"


def test_the_schema_is_a_valid_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(loader_schema())


def test_the_example_of_the_contract_loads(tmp_path):
    example = """\
default_environment: test
environments:
  test:
    base_url: https://api.test.example.edu.au/institution-api   # ends in the institution API prefix
    auth_url: https://id.example.edu.au
    realm: advance
    expect_environment: test          # the `environment` the API reports; apply refuses on mismatch
    client_id: {env: LOADER_TEST_CLIENT_ID}
    client_secret: {env: LOADER_TEST_CLIENT_SECRET}
"""
    spec = load_config(write(tmp_path, example)).spec(None)
    assert spec is not None
    assert (spec.name, spec.realm, spec.expect_environment) == ("test", "advance", "test")


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "schools.yaml", "--env", ""],
        ["apply", "schools.yaml", "--env", "", "--yes"],
        ["whoami", "--env", " "],
        ["validate", "schools.yaml", "--config", ""],
        ["plan", "schools.yaml", "--config", ""],
    ],
)
def test_an_empty_env_or_config_is_a_usage_error_not_the_default(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from loader.cli import main
    from loader.errors import EXIT_USAGE

    monkeypatch.chdir(tmp_path)  # no loader.yaml: the default would be the built-in sandbox
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    flag = "--env" if "--env" in argv else "--config"
    assert f"loader: error: {flag} is empty" in err, err
    assert not (tmp_path / ".loader").exists()  # the built-in sandbox was never started
