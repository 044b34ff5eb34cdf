"""Tiny loopback servers that fail the way real networks and services fail, for the failure tests.

The sandbox's own fault options cover 500s, latency and refused credentials; these cover the rest:
a server that resets every connection, one that answers HTML instead of JSON, one that answers
every call 401 or 403, one whose list answers are malformed, one that echoes the request (as a
proxy's error page does), and a TLS server whose certificate nobody trusts. Each grants a token
(unless it fails everything), so the failure is met where it is meant to be.
"""

from __future__ import annotations

import json
import socket
import ssl
import struct
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

CERT = Path(__file__).with_name("selfsigned.pem")  # a self-signed certificate and its key, for 127.0.0.1
TOKEN = "faulty-token-0123456789abcdefghijklmnop"
MODES = ("reset", "not-json", "401", "403", "malformed-list", "echo", "echo-token", "tls")


@dataclass(frozen=True)
class FaultyServer:
    base_url: str
    mode: str


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _reset(self) -> None:
        # SO_LINGER 0: close() sends a TCP RST, as a dying proxy or a middlebox does.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True

    def _handle(self) -> None:
        mode = self.server.mode
        body = self._body()
        if mode == "reset":
            self._reset()
            return
        if "/protocol/openid-connect/token" in self.path and mode == "echo-token":
            # An identity provider (or a proxy before it) repeating the form it was sent, secret included.
            form = dict(pair.split("=", 1) for pair in body.decode("latin-1").split("&") if "=" in pair)
            description = f"cannot handle {form} ({form.get('client_secret')})"
            refusal = {"error": "invalid_request", "error_description": description}
            self._send(400, json.dumps(refusal).encode())
            return
        if "/protocol/openid-connect/token" in self.path:
            token = {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 300}
            self._send(200, json.dumps(token).encode())
            return
        if mode == "not-json":
            self._send(200, b"<html><body>Welcome to the portal</body></html>", "text/html")
        elif mode in ("401", "403"):
            message = {"code": int(mode), "message": "Unauthorized" if mode == "401" else "Forbidden"}
            self._send(int(mode), json.dumps(message).encode())
        elif mode == "malformed-list":
            answer = {"data": [{"id": ["x"], "code": {"a": 1}, "name": [1, 2]}, "text", 7], "total": "many",
                      "page_total": 3, "page_token": None, "environment": "sandbox"}
            self._send(200, json.dumps(answer).encode())
        elif mode == "echo":
            # A proxy's error page echoing the whole request: headers (the bearer token) and body.
            credential = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            echoed = f"{self.requestline}\n{self.headers}\n{body.decode('latin-1')} (credential {credential})"
            self._send(502, json.dumps({"code": 502, "message": f"upstream failed for: {echoed}"}).encode())
        else:  # tls: never reached, the handshake fails first
            self._send(200, b"{}")

    do_GET = do_POST = do_PATCH = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    mode = "reset"

    def handle_error(self, request: object, client_address: object) -> None:
        # A client that hangs up (the loader stopping its other requests once one has failed) is
        # not this server's failure; anything else is printed as socketserver does.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@contextmanager
def faulty_server(mode: str) -> Iterator[FaultyServer]:
    """A server on 127.0.0.1 failing as `mode` says (one of MODES), stopped on leaving."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    server = _Server(("127.0.0.1", 0), _Handler)
    server.mode = mode
    scheme = "http"
    if mode == "tls":
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(CERT)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        scheme = "https"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield FaultyServer(f"{scheme}://127.0.0.1:{server.server_address[1]}", mode)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
