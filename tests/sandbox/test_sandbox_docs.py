"""/q/openapi.json describes every route; Swagger UI is served offline; schemathesis finds no 5xx."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from helpers.sandbox import Caller
from starlette.routing import Route

from loader.sandbox.server import RunningSandbox, SandboxOptions, open_app, serve_in_thread

SEED = Path(__file__).resolve().parents[2] / "samples" / "sandbox-seed.json"


def test_openapi_describes_every_route_the_server_has(http: httpx.Client) -> None:
    description = http.get("/q/openapi.json").json()
    assert description["openapi"].startswith("3.1")
    described = {(method.upper(), path) for path, item in description["paths"].items() for method in item}
    app = open_app(SandboxOptions())
    served = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route) and not route.path.startswith("/q/swagger-ui")
        for method in (route.methods or set()) - {"HEAD"}
    }
    assert served == described


def test_openapi_request_schemas_refuse_unknown_fields_like_the_server(http: httpx.Client) -> None:
    schemas = http.get("/q/openapi.json").json()["components"]["schemas"]
    assert schemas["CredentialCreate"]["additionalProperties"] is False
    assert schemas["CredentialCreate"]["required"] == ["applicant_id", "type"]
    assert "status" not in schemas["ArrangementCreate"]["properties"]
    assert "exemption" not in schemas["ArrangementUpdate"]["properties"]


def test_swagger_ui_page_and_its_assets_are_served_locally(http: httpx.Client) -> None:
    page = http.get("/q/swagger-ui/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "://" not in re.sub(r"<!--.*?-->", "", page.text, flags=re.S)  # no address outside this server
    for asset in re.findall(r'(?:src|href)="\./([^"]+)"', page.text):
        answer = http.get(f"/q/swagger-ui/{asset}")
        assert answer.status_code == 200, asset
        assert len(answer.content) > 100
    initializer = http.get("/q/swagger-ui/swagger-initializer.js").text
    assert "/q/openapi.json" in initializer
    assert "validatorUrl: null" in initializer  # else the page calls validator.swagger.io
    assert "SwaggerUIBundle" in http.get("/q/swagger-ui/swagger-ui-bundle.js").text
    assert http.get("/q/swagger-ui", follow_redirects=False).status_code == 307
    assert http.get("/q/swagger-ui/../server.py").status_code == 404


@pytest.fixture(scope="module")
def sandbox() -> Iterator[RunningSandbox]:
    with serve_in_thread(SandboxOptions(seed=SEED)) as running:
        yield running


@pytest.mark.slow
def test_schemathesis_finds_no_server_error(sandbox: RunningSandbox, api: Caller, tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "schemathesis.cli", "run", f"{sandbox.base_url}/q/openapi.json",
        "--checks", "not_a_server_error", "--header", f"Authorization: Bearer {api.token}",
        "--max-examples", "25", "--seed", "1", "--workers", "1", "--exclude-operation-id", "set_faults",
        "--generation-database", "none", "--no-color",
    ]  # fmt: skip
    run = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert re.search(r"\d+ generated, \d+ passed", run.stdout)
