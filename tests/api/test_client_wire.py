"""What the client puts on the wire: the same head and body for every write, a 401 renewed once,
cookies kept and sent back, compressed answers decoded."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from helpers.api import TOKEN_ROUTE, environment_for, requests_to

from loader.api.client import ApiClient
from loader.api.errors import Unauthorized
from loader.config import Environment, Secret


def test_a_401_to_a_fresh_token_renews_it_once_then_the_second_401_is_final(start_sandbox, profile):
    identity = start_sandbox()
    api = start_sandbox()  # tokens are per server: the API refuses every token of the identity server

    async def go() -> dict[str, int]:
        env = environment_for(api, auth_url=identity.auth_url)
        async with ApiClient(env, profile) as client:
            for _ in range(2):  # the second read finds the renewed token fresh
                with pytest.raises(Unauthorized):
                    await client.fetch_collection("tag")
            return client.request_counts

    counts = asyncio.run(go())
    assert counts["token"] == 3  # the first token, then one renewal per refused read
    assert counts["GET"] == 4  # each read sent, refused, sent once more with a new token
    assert requests_to(identity.stats(), TOKEN_ROUTE) == 3


class _Recorder:
    """A loopback HTTP/1.1 server that keeps each request's head and body and answers a record."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.extra: list[bytes] = []  # header lines of the next record answer, then gone
        self.gzip = False

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
            if not head:
                break
            line, *fields = head.decode("latin-1").split("\r\n")[:-2]
            headers = {name.lower(): value.strip() for name, value in (f.split(":", 1) for f in fields)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append((line, headers, body))
            if "/token" in line:
                answer = {"access_token": "t0ken-abc", "token_type": "Bearer", "expires_in": 300}
            else:
                answer = {"data": {"id": "00000000-0000-4000-8000-000000000001", "code": "A", "name": "é"}}
            payload = json.dumps(answer).encode()
            extra = b""
            if "/token" not in line:
                extra, self.extra = b"".join(h + b"\r\n" for h in self.extra), []
                if self.gzip:
                    payload, extra = gzip.compress(payload), extra + b"Content-Encoding: gzip\r\n"
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra + b"Content-Length: "
                         + str(len(payload)).encode() + b"\r\n\r\n" + payload)
            await writer.drain()
        writer.close()


@asynccontextmanager
async def _recorder() -> AsyncIterator[tuple[_Recorder, str]]:
    recorder = _Recorder()
    server = await asyncio.start_server(recorder.handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield recorder, f"http://127.0.0.1:{port}"


def test_a_write_sent_with_a_fresh_token_has_the_head_and_body_of_the_first(profile):
    async def go() -> list[tuple[str, dict[str, str], bytes]]:
        async with _recorder() as (recorder, url):
            env = Environment(name="rec", base_url=url + "/institution", auth_url=url, realm="r",
                              client_id="c", client_secret=Secret("s3cret-value"), timeout=5.0,
                              expect_environment=None)
            async with ApiClient(env, profile) as client:
                payload: dict[str, Any] = {"code": "A", "name": "é", "custom_attributes": {"n": 1.5}}
                first = await client.create("school", payload)  # no token yet: through httpx's auth flow
                second = await client.create("school", payload)  # with the token already held
                assert first == second and second["name"] == "é"
                assert client.request_counts["POST"] == 2
        return recorder.requests

    token, first, second = asyncio.run(go())
    assert "/token" in token[0]
    assert second[0] == first[0]  # the request line
    assert second[2] == first[2]  # the body, byte for byte
    assert second[1] == first[1]  # every header, with its value
    assert second[1]["authorization"] == "Bearer t0ken-abc"


def _environment(url: str) -> Environment:
    return Environment(name="rec", base_url=url + "/institution", auth_url=url, realm="r", client_id="c",
                       client_secret=Secret("s3cret-value"), timeout=5.0, expect_environment=None)


def test_a_cookie_an_answer_sets_is_kept_and_sent_back(profile):
    async def go() -> list[tuple[str, dict[str, str], bytes]]:
        async with _recorder() as (recorder, url):
            async with ApiClient(_environment(url), profile) as client:
                await client.get("school", "A")  # the token, then the read
                recorder.extra = [b"Set-Cookie: route=b2; Path=/"]
                await client.get("school", "A")  # the cookie is kept
                await client.get("school", "A")  # and sent back
        return recorder.requests

    *_, set_by, sent_back = asyncio.run(go())
    assert "cookie" not in set_by[1]
    assert sent_back[1]["cookie"] == "route=b2"


def test_a_compressed_answer_is_decoded(profile):
    async def go() -> dict[str, Any]:
        async with _recorder() as (recorder, url):
            async with ApiClient(_environment(url), profile) as client:
                await client.get("school", "A")
                recorder.gzip = True
                found = await client.get("school", "A")
        assert found is not None
        return found

    assert asyncio.run(go())["name"] == "é"
