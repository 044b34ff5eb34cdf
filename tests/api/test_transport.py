"""The aiohttp transport under httpx's interface, against real sockets: answers come through whole,
and each failure becomes the httpx error that says whether the request can have been sent."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import httpx
import pytest

from loader.api.transport import AiohttpTransport, environment_names_a_proxy

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
LIMITS = httpx.Limits(max_connections=4, max_keepalive_connections=4)


async def _read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lengths = [int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
    length = lengths[0] if lengths else 0
    return head + await reader.readexactly(length)


async def _send(serve: Serve, method: str, *, read_timeout: float = 5.0, body: bytes = b"") -> httpx.Response:
    handlers: list[asyncio.Task[None]] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.append(asyncio.current_task())  # type: ignore[arg-type]
        await serve(reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx.AsyncClient(
            transport=AiohttpTransport(trust_env=False, limits=LIMITS), timeout=httpx.Timeout(read_timeout)
        ) as http:
            return await http.request(method, f"http://127.0.0.1:{port}/institution/x%20y?a=1", content=body)
    finally:
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        server.close()
        await server.wait_closed()


def test_an_answer_comes_through_whole() -> None:
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(await _read_request(reader))
        writer.write(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nX-Two: a\r\nX-Two: b\r\n"
                     b"Content-Length: 11\r\n\r\n{\"ok\":true}")
        await writer.drain()
        writer.close()

    answer = asyncio.run(_send(serve, "POST", body=b'{"code":"A"}'))
    assert (answer.status_code, answer.reason_phrase, answer.json()) == (201, "Created", {"ok": True})
    assert answer.headers.get_list("x-two") == ["a", "b"]
    request = seen[0]
    assert request.startswith(b"POST /institution/x%20y?a=1 HTTP/1.1\r\n")  # the path as httpx encoded it
    assert request.endswith(b'{"code":"A"}')


def test_a_connection_closed_after_the_request_was_sent_is_not_a_connect_error() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _read_request(reader)
        writer.close()  # the request arrived; the answer is lost

    with pytest.raises(httpx.TransportError) as raised:
        asyncio.run(_send(serve, "POST", body=b"{}"))
    assert isinstance(raised.value, httpx.RemoteProtocolError | httpx.ReadError)
    assert not isinstance(raised.value, httpx.ConnectError | httpx.ConnectTimeout)


def test_a_service_that_never_answers_is_a_read_timeout() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _read_request(reader)
            await asyncio.sleep(5)
        finally:
            writer.close()

    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(_send(serve, "POST", read_timeout=0.3, body=b"{}"))


def test_a_refused_connection_is_a_connect_error() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def go() -> None:
        async with httpx.AsyncClient(transport=AiohttpTransport(trust_env=False, limits=LIMITS)) as http:
            await http.post(f"http://127.0.0.1:{port}/x", content=b"{}")

    with pytest.raises(httpx.ConnectError):
        asyncio.run(go())


def test_a_proxy_in_the_environment_keeps_httpx_s_own_transport() -> None:
    assert environment_names_a_proxy({"HTTPS_PROXY": "http://proxy:3128"})
    assert environment_names_a_proxy({"all_proxy": "socks5://proxy"})
    assert not environment_names_a_proxy({"NO_PROXY": "*", "HTTPS_PROXY": ""})


def _trickle(pause: float, chunks: int) -> Serve:
    """A server answering a chunk of the body every `pause` seconds."""
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await _read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % chunks)
            await writer.drain()
            for _ in range(chunks):
                await asyncio.sleep(pause)
                writer.write(b"x")
                await writer.drain()
        finally:
            writer.close()

    return serve


def test_an_answer_whose_bytes_keep_coming_is_read_past_the_read_timeout() -> None:
    answer = asyncio.run(_send(_trickle(0.1, 8), "GET", read_timeout=0.3))  # 0.8 s in all, no gap of 0.3 s
    assert answer.content == b"x" * 8


def test_a_pause_longer_than_the_read_timeout_after_some_bytes_is_a_read_timeout() -> None:
    with pytest.raises(httpx.ReadTimeout):
        asyncio.run(_send(_trickle(0.5, 2), "GET", read_timeout=0.2))
