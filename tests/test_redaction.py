"""No known secret or token reaches an output, whatever carries it: a service or proxy echoing the
request into its error, an identity provider repeating the form it was sent, a log line.

The redaction happens at the output boundaries (the CLI's error printer, the crash log, the
logging handler) from one registry of every secret read and token issued (loader.redaction).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import stamina
from helpers.faulty import TOKEN, faulty_server

from loader import cli
from loader.config import Secret
from loader.redaction import redact

SECRET = "Echoed+secret/value=42"  # characters that form encoding changes: the echo shows %2B, %2F, %3D


def _loader_yaml(url: str) -> str:
    return f"""default_environment: echo
environments:
  echo:
    base_url: {url}
    auth_url: {url}
    realm: sandbox
    client_id: sandbox-client
    client_secret: {{env: ECHO_SECRET}}
    timeout: 5
    retry: {{attempts: 1}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ECHO_SECRET", SECRET)
    stamina.set_testing(True, attempts=1)
    yield tmp_path
    stamina.set_testing(False)


@pytest.mark.parametrize("mode", ["echo", "echo-token"])
@pytest.mark.parametrize("argv", [["whoami", "-vv"], ["pull", "school", "--out", "live.xlsx", "-vv"]])
def test_an_echoed_request_never_shows_the_token_or_the_secret(
    project: Path, capsys: pytest.CaptureFixture[str], mode: str, argv: list[str]
) -> None:
    with faulty_server(mode) as server:
        (project / "loader.yaml").write_text(_loader_yaml(server.base_url), encoding="utf-8")
        assert cli.main(argv) == 1
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert "loader: error:" in shown
    for leaked in (TOKEN, SECRET, "Echoed%2Bsecret%2Fvalue%3D42"):
        assert leaked not in shown, shown
    assert ("cannot handle" if mode == "echo-token" else "upstream failed") in shown  # the rest is kept


def test_the_logging_handler_hides_registered_secrets(capsys: pytest.CaptureFixture[str]) -> None:
    Secret("logged-secret-value")
    handler = cli._start_logging(1)
    try:
        logging.getLogger("loader.test").warning("sent %s to the service", "logged-secret-value")
    finally:
        cli._stop_logging(handler)
    err = capsys.readouterr().err
    assert "sent *** to the service" in err and "logged-secret-value" not in err


def test_redact_hides_every_spelling_of_a_registered_secret() -> None:
    Secret('a "quoted"/secret+value')
    text = (
        'json: "a \\"quoted\\"/secret+value" form: a+%22quoted%22%2Fsecret%2Bvalue '
        "url: a%20%22quoted%22%2Fsecret%2Bvalue"
    )
    assert redact(text) == "json: \"***\" form: *** url: ***"
