"""`loader whoami`: what it prints, through the command line entry point."""

from __future__ import annotations

import pytest
from helpers.api import schools_seed

from loader.cli import main

CONFIG = """\
environments:
  local:
    base_url: {base_url}
    auth_url: {auth_url}
    realm: {realm}
    expect_environment: {expect}
    client_id: sandbox-client
    client_secret: {{env: LOADER_LOCAL_SECRET}}
"""


def _write_config(tmp_path, sb, expect="staging"):
    path = tmp_path / "loader.yaml"
    path.write_text(CONFIG.format(base_url=sb.base_url, auth_url=sb.auth_url, realm=sb.realm, expect=expect))
    return str(path)


def test_whoami_prints_environment_version_token_lifetime_and_addresses(start_sandbox, tmp_path, monkeypatch, capsys):
    sb = start_sandbox(environment="staging", token_ttl=900.0, seed=schools_seed(3))
    monkeypatch.setenv("LOADER_LOCAL_SECRET", sb.client_secret)
    assert main(["whoami", "--config", _write_config(tmp_path, sb), "--env", "local"]) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(":", 1) for line in out.splitlines())
    assert lines["environment"].strip() == "staging"
    assert lines["api version"].strip() == "5.1.0"
    assert lines["token lifetime"].strip() == "900 s"
    assert lines["school records"].strip() == "3"
    assert lines["base url"].strip() == sb.base_url
    assert "service user" in lines
    assert sb.stats()["requests"]["GET /institution/catalogue/schools"] == 1


def test_whoami_stops_on_an_environment_mismatch(start_sandbox, tmp_path, monkeypatch, capsys):
    sb = start_sandbox(environment="dev")
    monkeypatch.setenv("LOADER_LOCAL_SECRET", sb.client_secret)
    assert main(["whoami", "--config", _write_config(tmp_path, sb, expect="test"), "--env", "local"]) == 1
    err = capsys.readouterr().err
    assert "reports environment 'dev'" in err and "expects 'test'" in err


def test_whoami_with_a_wrong_secret_exits_1_with_the_invalid_client_hint(start_sandbox, tmp_path, monkeypatch, capsys):
    sb = start_sandbox()
    monkeypatch.setenv("LOADER_LOCAL_SECRET", "wrong-secret-value")
    assert main(["whoami", "--config", _write_config(tmp_path, sb, expect="sandbox"), "--env", "local"]) == 1
    err = capsys.readouterr().err
    assert "invalid_client" in err and "secret was rotated" in err
    assert "wrong-secret-value" not in err


@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_whoami_logs_requests_only_when_verbose(start_sandbox, tmp_path, monkeypatch, capsys, verbose):
    sb = start_sandbox()
    monkeypatch.setenv("LOADER_LOCAL_SECRET", sb.client_secret)
    assert main(["whoami", *verbose, "--config", _write_config(tmp_path, sb, expect="sandbox"), "--env", "local"]) == 0
    err = capsys.readouterr().err
    logged = "GET /institution/catalogue/schools 200" in err and "attempt 1" in err
    assert logged == bool(verbose)


def test_whoami_with_an_unknown_environment_lists_the_known_ones(tmp_path, capsys, start_sandbox):
    sb = start_sandbox()
    assert main(["whoami", "--config", _write_config(tmp_path, sb), "--env", "prod"]) == 1
    err = capsys.readouterr().err
    assert "unknown environment 'prod'" in err and "use one of: local, sandbox" in err
