"""No known secret or token reaches an output, whatever carries it: a service or proxy echoing the
request into its error, an identity provider repeating the form it was sent, a log line.

The redaction happens at the output boundaries (the CLI's error printer, the crash log, the
logging handler, the filter `configure_logging` puts on the loggers) from one registry of every
secret read and token issued (loader.redaction).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import stamina
from helpers.apply import PROFILE, client_for, loader_yaml_for, make_plan, record
from helpers.faulty import TOKEN, faulty_server

from loader import cli
from loader.apply.executor import CONFLICT_HIDDEN, apply_plan
from loader.config import Secret
from loader.plan.model import FieldChange
from loader.redaction import REDACTED_LOGGERS, RedactionFilter, configure_logging, known_secrets, redact
from loader.sandbox.server import SandboxOptions, serve_in_thread

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
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
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


def test_a_conflict_naming_another_person_is_masked_when_the_record_holds_pii() -> None:
    seed = {"institution-a": {"applicants": [{"external_id": "A1", "first_name": "Jane", "last_name": "Citizen"}]}}
    changes = (FieldChange("external_id", None, "'A1'", False), FieldChange("first_name", None, "(hidden)", True))
    person = record("applicants", "applicant", "A1", {"external_id": "A1", "first_name": "John"}, changes=changes)
    school = record("schools", "school", "S1", {"code": "S1", "name": "One"})
    with serve_in_thread(SandboxOptions(seed=seed)) as sandbox:
        # A school whose code an applicant cannot hold: no PII, so its 409 stays as the service said.
        plan = make_plan(("applicants", "applicant", [person]), ("schools", "school", [school]))

        async def go() -> list[str]:
            async with client_for(sandbox) as client:
                await client.create("school", {"code": "S1", "name": "Other"})
                results = await apply_plan(plan, client, PROFILE)
            return [r.message or "" for r in results.records]

        messages = asyncio.run(go())
    assert CONFLICT_HIDDEN in messages and not any("Jane" in m or "Citizen" in m for m in messages)
    assert any("already used by" in m for m in messages if m != CONFLICT_HIDDEN)


@pytest.fixture
def no_redaction_filter() -> Iterator[None]:
    """The loggers without the filter `configure_logging` adds (another test may have run the CLI),
    and without it again after."""

    def remove() -> None:
        for name in REDACTED_LOGGERS:
            logger = logging.getLogger(name)
            for found in [f for f in logger.filters if isinstance(f, RedactionFilter)]:
                logger.removeFilter(found)

    remove()
    yield
    remove()


def test_verbose_output_against_the_sandbox_never_shows_the_token_or_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture, no_redaction_filter: None,
) -> None:
    """`loader -v` and `-vv`, every logger's records included (caplog listens at the root), then a
    library's record carrying the token: the command line put the redaction in place."""
    monkeypatch.chdir(tmp_path)
    before = set(known_secrets())
    with serve_in_thread(SandboxOptions()) as sandbox:
        monkeypatch.setenv("REDACTION_TEST_SECRET", sandbox.client_secret)
        (tmp_path / "loader.yaml").write_text(loader_yaml_for(sandbox, "REDACTION_TEST_SECRET"), encoding="utf-8")
        caplog.set_level(logging.DEBUG)
        assert cli.main(["whoami", "-v"]) == 0
        assert cli.main(["pull", "school", "--out", "live.xlsx", "-vv"]) == 0
    issued = set(known_secrets()) - before - {sandbox.client_secret}
    assert issued  # the tokens the commands were given
    token = max(issued, key=len)
    logging.getLogger("httpx").warning("echoed: Authorization %s and %s", token, sandbox.client_secret)
    captured = capsys.readouterr()
    shown = captured.out + captured.err + caplog.text
    assert " 200 " in shown  # the request lines were logged
    assert "echoed: Authorization ***" in caplog.text
    for secret in (*issued, sandbox.client_secret):
        assert secret not in shown


def test_configure_logging_hides_secrets_for_a_library_user_once_however_often_called(
    caplog: pytest.LogCaptureFixture, no_redaction_filter: None
) -> None:
    Secret("library-user-secret")
    configure_logging()
    configure_logging()
    assert all(
        sum(isinstance(f, RedactionFilter) for f in logging.getLogger(name).filters) == 1 for name in REDACTED_LOGGERS
    )
    with caplog.at_level(logging.INFO):
        for name in REDACTED_LOGGERS:
            logging.getLogger(name).warning("sent %s", "library-user-secret")
    assert caplog.messages == ["sent ***"] * len(REDACTED_LOGGERS)
