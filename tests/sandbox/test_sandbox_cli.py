"""`loader sandbox serve` in a child process: address and credentials printed, clean stop on signals."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from helpers.sandbox import TOKEN_PATH, Caller, fetch_token

from loader.commands import sandbox as sandbox_command
from loader.sandbox.server import FaultOptions, SandboxOptions, serve_in_subprocess

SEED = Path(__file__).resolve().parents[2] / "samples" / "sandbox-seed.json"


def _start(*args: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    child = subprocess.Popen(
        [sys.executable, "-m", "loader.sandbox", "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    lines = [child.stdout.readline() for _ in range(7)]
    assert lines[0].startswith("sandbox listening on http://127.0.0.1:"), lines
    return child, lines[0].split()[-1], lines


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_prints_its_address_and_credentials_and_stops_cleanly_on_a_signal(stop: signal.Signals) -> None:
    child, url, lines = _start("--seed", str(SEED), "--environment", "dev")
    try:
        text = "".join(lines)
        assert "sandbox-client / sandbox-secret  (institution-a)" in text
        assert "other-client / other-secret  (institution-b)" in text
        assert "staff-client / staff-secret  (institution-a)" in text
        assert "API browser" in lines[-1]
        assert "environment: dev" in text
        token = fetch_token(url, "sandbox-client", "sandbox-secret")
        answer = httpx.get(f"{url}/institution/catalogue/schools", headers={"Authorization": f"Bearer {token}"})
        assert answer.json()["environment"] == "dev"
        assert answer.json()["total"] == 4
        assert token not in "".join(lines)
    finally:
        child.send_signal(stop)
        stdout, stderr = child.communicate(timeout=20)
    assert "sandbox stopped" in stdout
    assert child.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_an_extra_client_from_the_command_line_can_get_a_token() -> None:
    child, url, _ = _start("--client", "third:s3cret:institution-b")
    try:
        assert fetch_token(url, "third", "s3cret")
    finally:
        child.terminate()
        child.communicate(timeout=20)


@pytest.mark.parametrize(
    "args",
    [["--client", "no-colons"], ["--error-rate", "2"], ["--token-ttl", "0"], ["--rate-limit", "-1"]],
)
def test_bad_serve_options_are_usage_errors(args: list[str]) -> None:
    assert sandbox_command.main(["serve", "--port", "0", *args]) == 64


def test_a_bad_seed_file_is_an_error_without_a_traceback(tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text('{"institution-a": {"schools": [{"code": "X"}]}}', encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "loader.sandbox", "serve", "--port", "0", "--seed", str(seed)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "field 'name' is required" in run.stderr
    assert "Traceback" not in run.stderr


def test_serve_in_subprocess_passes_every_option_to_the_child() -> None:
    options = SandboxOptions(
        seed={"institution-a": {"tags": [{"name": "from a dict seed"}]}},
        environment="test",
        token_ttl=90.0,
        faults=FaultOptions(latency_ms=1, jitter_ms=2, rate_limit=500.0, seed=9),
        clients=(("extra", "extra-secret", "institution-a"),),
    )
    with serve_in_subprocess(options) as sb, httpx.Client(base_url=sb.base_url) as http:
        form = {"grant_type": "client_credentials", "client_id": "extra", "client_secret": "extra-secret"}
        token = http.post(TOKEN_PATH, data=form).json()
        caller = Caller(http, token["access_token"])
        assert token["expires_in"] == 90
        page = caller.get("/institution/tags").json()
        assert page["environment"] == "test"
        assert [t["name"] for t in page["data"]] == ["from a dict seed"]
        assert http.get("/q/sandbox/faults").json() == options.faults.to_dict()
        assert sb.stats()["requests"]["GET /institution/tags"] == 1


def test_the_loader_command_line_dispatches_sandbox_serve() -> None:
    from loader.cli import main

    assert main(["sandbox", "serve", "--port", "0", "--jitter-ms", "-5"]) == 64
    assert main(["sandbox"]) == 64


def test_a_database_that_cannot_be_opened_is_an_error_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing_dir = tmp_path / "no" / "such" / "dir" / "sandbox.sqlite3"
    assert sandbox_command.main(["serve", "--port", "0", "--data", str(missing_dir)]) == 1
    assert "cannot open the sandbox database" in capsys.readouterr().err


def test_verbose_serve_logs_each_request_but_never_the_token() -> None:
    child, url, _ = _start("-v")
    try:
        token = fetch_token(url, "sandbox-client", "sandbox-secret")
        httpx.get(f"{url}/institution/tags", headers={"Authorization": f"Bearer {token}"})
    finally:
        child.terminate()
        stdout, stderr = child.communicate(timeout=20)
    assert '"GET /institution/tags HTTP/1.1" 200' in stdout  # uvicorn's access log goes to stdout
    assert token not in stdout + stderr
