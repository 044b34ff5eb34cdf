"""Feeds on loopback for the `json:` and `xml:` kinds' tests: a server of any handler on a free
port, and the OOAPI v5 courses examples in two pages for a request that carries the token (the
paged URL feed read through the command line and the Python API)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

PAGES = Path(__file__).parents[1] / "source" / "readers" / "data"
TOKEN = "Bearer tok-7Hq2xZ9pLw"
URL_MAPPING = """\
version: 1
sources:
  catalogue:
    json: http://127.0.0.1:{port}/courses
    records: "$.items[*]"
    page: {{param: pageNumber, more: "$.hasNextPage"}}
    headers: {{Authorization: {{env: CATALOGUE_TOKEN}}}}
entities:
  subjects:
    {{entity: subject, source: catalogue, key: [code], fields: {{code: primaryCode.code, name: "name[0].value"}}}}
"""


class OoapiCourses(BaseHTTPRequestHandler):
    """Two OOAPI v5 pages of courses, for a request that carries the token."""

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        if self.headers.get("Authorization") != TOKEN:
            body, status = b'{"error": "no token"}', 401
        else:
            page = parse_qs(urlsplit(self.path).query).get("pageNumber", ["1"])[0]
            body, status = (PAGES / f"ooapi-courses-page{page}.json").read_bytes(), 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler] = OoapiCourses) -> Iterator[int]:
    """A server of `handler` running on a free loopback port (yielded), stopped at the end."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
