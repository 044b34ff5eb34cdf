"""Tampered or odd service answers end as one clear error (exit 1) naming the request and the record,
never as an internal error (exit 3).

Records are tampered where the sandbox keeps them (its SQLite file: lists are answered from the
stored text as it is); a token the sandbox would never issue comes from a transport-level fake.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.apply import environment_for
from helpers.project import SCHOOLS_SEED, schools_project

from loader.api.client import ApiClient
from loader.api.errors import MalformedAnswer, TokenError
from loader.cli import main
from loader.errors import EXIT_ERROR, exit_code_for
from loader.profile import load_profile
from loader.sandbox.server import SandboxOptions, serve_in_thread

SCI = "00000000-0000-4000-8000-000000000001"


def _tampered_sandbox_file(tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> str:
    """A sandbox database seeded with SCHOOLS_SEED, whose SCI record `change` has tampered with."""
    data = str(tmp_path / "sandbox.db")
    with serve_in_thread(SandboxOptions(data=data, seed=SCHOOLS_SEED)):
        pass
    with sqlite3.connect(data) as db:
        (body,) = db.execute("SELECT body FROM records WHERE id = ?", (SCI,)).fetchone()
        record = json.loads(body)
        change(record)
        db.execute("UPDATE records SET body = ? WHERE id = ?", (json.dumps(record), SCI))
    return data


def _set(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(record: dict[str, Any]) -> None:
        record[field] = value

    return change


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("custom_attributes", ["Faculty", "Science"], "`custom_attributes` is a list, not an object"),
        ("metadata", "created yesterday", "`metadata` is text, not an object"),
        ("metadata", {"updated": {"time": "yesterday"}}, "`metadata.updated.time` is text, not a number"),
        ("parent", "SCI", "`parent` is text, not an object"),
        ("children", {"id": "x"}, "`children` is an object, not a list"),
        ("id", ["x"], "`id` is a list, not text or a whole number"),
    ],
)
def test_a_record_of_an_odd_shape_in_a_list_is_one_error_naming_the_request_and_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], field: str, value: Any,
    said: str,
) -> None:
    data = _tampered_sandbox_file(tmp_path, _set(field, value))
    with serve_in_thread(SandboxOptions(data=data)) as sandbox:
        schools_project(tmp_path, sandbox, monkeypatch)
        code = main(["plan", "schools.yaml", "--env", "local"])
    err = capsys.readouterr().err
    assert code == EXIT_ERROR, err
    errors = [line for line in err.splitlines() if line.startswith("loader: error:")]
    assert len(errors) == 1, err
    assert "GET /" in errors[0] and "schools" in errors[0], errors[0]
    assert "record 1 of the list" in errors[0] and said in errors[0], errors[0]
    assert "internal error" not in err


def test_a_single_record_of_an_odd_shape_is_a_malformed_answer_naming_the_request(tmp_path: Path) -> None:
    data = _tampered_sandbox_file(tmp_path, _set("custom_attributes", "Faculty=Science"))
    profile = load_profile()

    async def read() -> None:
        with serve_in_thread(SandboxOptions(data=data)) as sandbox:
            async with ApiClient(environment_for(sandbox), profile) as client:
                await client.get("school", SCI)

    with pytest.raises(MalformedAnswer) as raised:
        asyncio.run(read())
    assert exit_code_for(raised.value) == EXIT_ERROR
    item_path = profile.entity("school").item_path
    assert item_path is not None
    assert raised.value.where == f"GET {item_path.replace('{id}', SCI)}"
    assert "`custom_attributes` is text, not an object" in raised.value.message


def _token_answer(token: str) -> httpx.MockTransport:
    """A service whose identity provider issues `token` and whose lists are empty (the fake is only
    for the token: the sandbox never issues one that cannot be sent)."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, json={"access_token": token, "token_type": "Bearer", "expires_in": 300})
        return httpx.Response(200, json={"environment": "sandbox", "data": [], "total": 0})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize("token", ["abc\r\nX-Injected: 1", "abc\ndef", "abc def", "abc\x00"])
def test_a_token_that_cannot_be_sent_in_a_header_is_one_error_never_sent(token: str, tmp_path: Path) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        env = environment_for(sandbox)

    async def read() -> None:
        async with ApiClient(env, load_profile(), transport=_token_answer(token)) as client:
            await client.first_page("school")

    with pytest.raises(TokenError) as raised:
        asyncio.run(read())
    error = raised.value
    assert exit_code_for(error) == EXIT_ERROR
    assert "cannot be sent in a header" in error.message and str(error.where).startswith("POST /")
    assert token not in str(error) and "abc" not in str(error)


def test_a_printable_token_is_still_accepted() -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        env = environment_for(sandbox)

    async def read() -> int:
        async with ApiClient(env, load_profile(), transport=_token_answer("eyJ.abc-_~+/=.x")) as client:
            return len((await client.first_page("school")).records)

    assert asyncio.run(read()) == 0


def _list_answer(envelope: bytes) -> httpx.MockTransport:
    """A service granting a usual token and answering every list with `envelope` (raw JSON text: NaN
    and Infinity, which the standard parser reads, cannot be sent by the sandbox)."""

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/token"):
            return httpx.Response(200, content=b'{"access_token": "t0k3n", "expires_in": Infinity}')
        return httpx.Response(200, content=envelope, headers={"Content-Type": "application/json"})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize("total", [b"NaN", b"Infinity", b"-1"])
def test_an_endless_or_negative_total_is_a_malformed_answer(total: bytes) -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        env = environment_for(sandbox)
    envelope = b'{"environment": "sandbox", "data": [{"id": "a"}], "total": ' + total + b"}"

    async def read() -> None:
        async with ApiClient(env, load_profile(), transport=_list_answer(envelope)) as client:
            await client.first_page("school")

    with pytest.raises(MalformedAnswer, match=r"`total` is .*, not a count of records") as raised:
        asyncio.run(read())
    assert exit_code_for(raised.value) == EXIT_ERROR and str(raised.value.where).startswith("GET /")


def test_an_endless_token_lifetime_is_taken_as_none_given() -> None:
    with serve_in_thread(SandboxOptions()) as sandbox:
        env = environment_for(sandbox)
    envelope = b'{"environment": "sandbox", "data": [{"id": "a"}], "total": 1}'

    async def read() -> float | None:
        async with ApiClient(env, load_profile(), transport=_list_answer(envelope)) as client:
            await client.first_page("school")
            return client.token_lifetime

    assert asyncio.run(read()) is None
