"""No secret and no token in anything the loader prints, logs or writes, even at -v and -vv.

The sandbox runs with a known client secret. Tokens differ per request, so instead of comparing
against one value, every token-like string found in the output is tried as a Bearer token against
the sandbox: one the sandbox accepts is a leaked live token.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loader.cli import main
from loader.sandbox.server import RunningSandbox, SandboxOptions, serve_in_thread

SECRET = "S3cr3t-known-value"
CLIENT = "leak-client"
TOKEN_LIKE = re.compile(r"[A-Za-z0-9_\-.~+/]{20,200}")
SEED = {"institution-a": {"schools": [{"code": f"L{i:03d}", "name": f"Leak school {i}"} for i in range(150)]}}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with serve_in_thread(SandboxOptions(seed=SEED, clients=((CLIENT, SECRET, "institution-a"),))) as sb:
        yield sb


def _config(tmp_path: Path, sb: RunningSandbox, expect: str = "sandbox") -> Path:
    path = tmp_path / "loader.yaml"
    path.write_text(
        f"""default_environment: leak
environments:
  leak:
    base_url: {sb.base_url}
    auth_url: {sb.auth_url}
    realm: {sb.realm}
    expect_environment: {expect}
    client_id: {CLIENT}
    client_secret: {{env: LOADER_LEAK_SECRET}}
""",
        encoding="utf-8",
    )
    return path


def _live_tokens(text: str, sb: RunningSandbox) -> set[str]:
    """Strings in `text` that the sandbox accepts as a Bearer token."""
    candidates = set(TOKEN_LIKE.findall(text))
    with httpx.Client(base_url=sb.base_url, timeout=10) as client:
        return {
            c
            for c in candidates
            if client.get("/institution/tags", headers={"Authorization": f"Bearer {c}"}).status_code == 200
        }


def _written_text(root: Path) -> str:
    """Everything under `root`, with workbooks (zip) unpacked so their XML is searched too."""
    parts = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                parts += [archive.read(name).decode("utf-8", "replace") for name in archive.namelist()]
        else:
            parts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def _crash_logs_since(started: float) -> str:
    logs = Path(tempfile.gettempdir()).glob("loader-crash-*/traceback.log")
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in logs if p.stat().st_mtime >= started)


def test_the_leak_detector_recognises_a_live_token(sandbox):
    answer = httpx.post(
        f"{sandbox.auth_url}/realms/{sandbox.realm}/protocol/openid-connect/token",
        data={"grant_type": "client_credentials", "client_id": CLIENT, "client_secret": SECRET},
    )
    token = answer.json()["access_token"]
    assert _live_tokens(f"GET /x 200 Bearer {token} done", sandbox) == {token}
    assert _live_tokens("nothing-here-that-looks-live-0123456789", sandbox) == set()


def test_commands_at_verbose_levels_never_show_the_secret_or_a_token(sandbox, tmp_path, monkeypatch, capsys):
    started = time.time() - 1
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOADER_LEAK_SECRET", SECRET)
    config = _config(tmp_path, sandbox)
    (tmp_path / "other").mkdir()
    mismatched = _config(tmp_path / "other", sandbox, expect="production")

    codes = [
        main(["whoami", "-v", "--config", str(config)]),
        main(["whoami", "-vv", "--config", str(config), "--env", "leak"]),
        main(["pull", "school", "-vv", "--config", str(config), "--out", str(tmp_path / "schools.xlsx")]),
        main(["whoami", "-vv", "--config", str(mismatched)]),
    ]
    captured = capsys.readouterr()
    child = subprocess.run(
        [sys.executable, "-m", "loader", "whoami", "-vv", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "LOADER_LEAK_SECRET": SECRET},
        check=False,
    )

    assert codes == [0, 0, 0, 1]
    assert child.returncode == 0, child.stderr
    assert "GET /institution/catalogue/schools 200" in captured.err  # -v did log requests
    assert "environment" in captured.err and "production" in captured.err  # the mismatch was reported
    assert (tmp_path / "schools.xlsx").is_file()

    everything = "\n".join(
        [captured.out, captured.err, child.stdout, child.stderr, _written_text(tmp_path), _crash_logs_since(started)]
    )
    assert SECRET not in everything
    assert _live_tokens(everything, sandbox) == set()


def test_plan_and_apply_at_verbose_never_show_the_secret_or_a_token(tmp_path, monkeypatch, capsys):
    started = time.time() - 1
    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "samples", tmp_path / "samples")
    shutil.copytree(repo / "mappings", tmp_path / "mappings")
    seed = repo / "samples" / "sandbox-seed.json"
    with serve_in_thread(SandboxOptions(seed=seed, clients=((CLIENT, SECRET, "institution-a"),))) as sb:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("LOADER_LEAK_SECRET", SECRET)
        config = str(_config(tmp_path, sb))
        mappings = [str(p) for p in sorted((tmp_path / "mappings").glob("*.yaml"))]
        artifacts = ["--out", "plan.json", "--report", "plan.md", "--html", "plan.html"]
        codes = [
            main(["plan", *mappings, "-vv", "--config", config, *artifacts]),
            main(["apply", "--plan", "plan.json", "--yes", "-vv", "--config", config, "--results", "results.xlsx"]),
        ]
        captured = capsys.readouterr()

        assert codes == [0, 0], captured.err
        assert "POST /institution/" in captured.err  # writes were made and logged
        for artifact in ("plan.json", "plan.md", "plan.html", "results.xlsx"):
            assert (tmp_path / artifact).is_file()
        everything = "\n".join([captured.out, captured.err, _written_text(tmp_path), _crash_logs_since(started)])
        assert SECRET not in everything
        assert _live_tokens(everything, sb) == set()
