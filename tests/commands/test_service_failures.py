"""Every command that talks to the service answers every way the service can fail with one clean
error and exit 1: never "internal error", never a traceback.

The matrix: plan, apply, apply --plan, pull and whoami against nothing listening, a connection
reset, an untrusted TLS certificate, a refused client secret, 401 and 403 on every call, 500 on
every call, an HTML page instead of JSON, a timeout, and malformed list answers. The sandbox's own
fault options cause what they can (500s, latency, refused secret); tiny loopback servers
(tests/helpers/faulty.py) the rest. Retries are bounded and fast (stamina's testing mode).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openpyxl
import pytest
import stamina
from helpers.faulty import closed_port, faulty_server

from loader.cli import main
from loader.sandbox.faults import FaultOptions
from loader.sandbox.server import SandboxOptions, serve_in_thread

SECRET_VARIABLE = "FAILURE_TEST_SECRET"
SEED = {"institution-a": {"schools": [{"code": "S1", "name": "School 1"}]}}
MAPPING = """version: 1
source: schools.xlsx
entities:
  schools:
    entity: school
    key: [code]
    fields:
      code: {column: Code}
      name: {column: Name}
"""


@dataclass(frozen=True)
class Target:
    """Where loader.yaml points and with which secret."""

    url: str
    secret: str = "sandbox-secret"
    timeout: float = 5.0


@contextmanager
def _nothing_listening() -> Iterator[Target]:
    yield Target(f"http://127.0.0.1:{closed_port()}")


@contextmanager
def _faulty(mode: str) -> Iterator[Target]:
    with faulty_server(mode) as server:
        yield Target(server.base_url)


@contextmanager
def _sandbox(secret: str = "sandbox-secret", timeout: float = 5.0, **faults: Any) -> Iterator[Target]:
    with serve_in_thread(SandboxOptions(seed=SEED, faults=FaultOptions(**faults))) as sandbox:
        yield Target(sandbox.base_url, secret, timeout)


FAILURES: dict[str, Callable[[], AbstractContextManager[Target]]] = {
    "nothing listening": _nothing_listening,
    "connection reset": lambda: _faulty("reset"),
    "untrusted TLS certificate": lambda: _faulty("tls"),
    "refused client secret": lambda: _sandbox(secret="not-the-secret"),
    "401 on every call": lambda: _faulty("401"),
    "403 on every call": lambda: _faulty("403"),
    "500 on every call": lambda: _sandbox(error_rate=1.0),
    "HTML instead of JSON": lambda: _faulty("not-json"),
    "timeout": lambda: _sandbox(timeout=0.1, latency_ms=500),
    "malformed list answers": lambda: _faulty("malformed-list"),
}

COMMANDS: dict[str, list[str]] = {
    "plan": ["plan", "schools.yaml"],
    "apply": ["apply", "schools.yaml", "--yes"],
    "apply --plan": ["apply", "--plan", "plan.json"],
    "pull": ["pull", "school", "--out", "live.xlsx"],
    "whoami": ["whoami"],
}


def _loader_yaml(target: Target) -> str:
    return f"""default_environment: svc
environments:
  svc:
    base_url: {target.url}
    auth_url: {target.url}
    realm: sandbox
    expect_environment: sandbox
    client_id: sandbox-client
    client_secret: {{env: {SECRET_VARIABLE}}}
    timeout: {target.timeout}
    retry: {{attempts: 2, wait_initial: 0.01, wait_max: 0.02, wait_jitter: 0, timeout: 10}}
"""


@pytest.fixture(autouse=True)
def _no_waiting_retries() -> Iterator[None]:
    stamina.set_testing(True, attempts=2)
    try:
        yield
    finally:
        stamina.set_testing(False)


@pytest.fixture(scope="module")
def made_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A mapping, its workbook and a plan.json made against a working service, once per module."""
    folder = tmp_path_factory.mktemp("made")
    (folder / "schools.yaml").write_text(MAPPING, encoding="utf-8")
    book = openpyxl.Workbook()
    book.active.append(["Code", "Name"])
    book.active.append(["S1", "School One"])
    book.active.append(["S2", "School Two"])
    book.save(folder / "schools.xlsx")
    with serve_in_thread(SandboxOptions(seed=SEED)) as sandbox, pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv(SECRET_VARIABLE, sandbox.client_secret)
        (folder / "loader.yaml").write_text(_loader_yaml(Target(sandbox.base_url)), encoding="utf-8")
        assert main(["plan", "schools.yaml", "--out", "plan.json"]) == 0
    yield folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made_project: Path) -> Path:
    """A copy of the made project (the plan's fingerprints name the files relative to it), as cwd."""
    for name in ("schools.yaml", "schools.xlsx", "plan.json"):
        shutil.copy2(made_project / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("failure", FAILURES)
def test_every_command_answers_every_service_failure_with_a_clean_error(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], failure: str, command: str
) -> None:
    with FAILURES[failure]() as target:
        (project / "loader.yaml").write_text(_loader_yaml(target), encoding="utf-8")
        monkeypatch.setenv(SECRET_VARIABLE, target.secret)
        capsys.readouterr()
        code = main(COMMANDS[command])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert err.startswith("loader: error: ") or "\nloader: error: " in err, err
    assert any(word in err for word in (target.url, "HTTP", "identity provider", "malformed")), err
    if failure == "untrusted TLS certificate":  # the token endpoint is met first: still a TLS problem
        assert "certificate" in err and "ca_bundle" in err and "did not answer" not in err, err


def test_validate_never_asks_the_service(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with _nothing_listening() as target:
        (project / "loader.yaml").write_text(_loader_yaml(target), encoding="utf-8")
        assert main(["validate", "schools.yaml"]) == 0
    assert "valid: 0 errors" in capsys.readouterr().out
