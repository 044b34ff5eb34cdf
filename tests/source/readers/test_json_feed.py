"""The JSON reader over files and over a paged feed on a loopback server."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from helpers.faulty import closed_port
from hypothesis import given
from hypothesis import strategies as st

from loader.api.feeds import ClientCredentials, FeedAccess, walk_pages
from loader.config import Secret
from loader.errors import SheetError
from loader.source.readers.json_feed import (
    JsonSource,
    Paging,
    _field_reader,
    _ObjectFound,
    _RowMaker,
    read,
    record_paths,
)
from loader.source.readers.record_rows import FieldPaths, RowsBuilder, WalkPages

DATA = Path(__file__).with_name("data")
PAGES = {n: (DATA / f"ooapi-courses-page{n}.json").read_bytes() for n in (1, 2)}
TOKEN = "feed-token-abcdefghijklmnopqrstuvwxyz012345"
SECRET = "Recognisable-Client-Secret-42"
FIELDS = [FieldPaths("code", ("primaryCode.code",)), FieldPaths("load", ("studyLoad.value",)),
          FieldPaths("name", ("$.name[?@.language == 'en-GB'].value", "name[0].value")),
          FieldPaths("mode", ("modeOfDelivery",), collect=True)]
ENGLISH_FIRST = [FieldPaths("code", ("primaryCode.code",)),
                 FieldPaths("name", ("$.name[?@.language == 'en-GB'].value", "name[0].value"))]


class _Feed(BaseHTTPRequestHandler):
    """OOAPI-shaped pages, and the other ways feeds page, fail and authenticate."""

    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
        granted = parse_qs(body).get("client_secret") == [SECRET]
        self._send(200 if granted else 401, json.dumps(
            {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 300} if granted
            else {"error": "invalid_client"}).encode())

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.server.seen.append(self.path)
        if url.path.startswith("/secured") and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(401, b'{"error": "no token"}')
        if url.path in ("/courses", "/secured/courses"):
            return self._send(200, PAGES[int(query.get("pageNumber", "1"))])
        if url.path == "/linked":
            page = int(query.get("page", "1"))
            items = json.loads(PAGES[page])["items"]
            links = {"next": "/linked?page=2" if page == 1 else None}
            return self._send(200, json.dumps({"total": int(query.get("total", 3)), "items": items,
                                               "links": links}).encode())
        if url.path == "/header":
            page = int(query.get("page", "1"))
            link = {"Link": f'<http://127.0.0.1:{self.server.server_port}/header?page=2>; rel="next"'} \
                if page == 1 else {}
            return self._send(200, json.dumps(json.loads(PAGES[page])["items"]).encode(), link)
        if url.path == "/busy":
            self.server.busy += 1
            if self.server.busy == 1:
                return self._send(429, b"{}", {"Retry-After": "0.1"})
            return self._send(200, PAGES[2])
        if url.path == "/latin1":
            return self._send(200, '{"items": [{"primaryCode": {"code": "Café"}}]}'.encode("latin-1"))
        if url.path == "/loop":
            return self._send(200, json.dumps({"items": [], "links": {"next": "/loop"}}).encode())
        return self._send(404, b"{}")

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    seen: list[str]
    busy: int


@pytest.fixture
def feed() -> Iterator[_Server]:
    server = _Server(("127.0.0.1", 0), _Feed)
    server.seen, server.busy = [], 0
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def over(access: FeedAccess | None = None) -> WalkPages:
    """How the readers fetch a URL: `walk_pages` with the source's access."""
    return partial(walk_pages, access=access)


def url(server: _Server, path: str) -> str:
    return f"http://127.0.0.1:{server.server_port}{path}"


def values(data: object) -> list[tuple[object, ...]]:
    return [row.values for row in data.rows[1:]]  # type: ignore[attr-defined]


def test_a_file_reads_the_records_at_the_records_path(tmp_path: Path) -> None:
    data = read(JsonSource("catalogue", str(DATA / "ooapi-courses-page1.json"), tmp_path, records="$.items[*]"),
                FIELDS)
    assert data.rows[0].values == ("code", "load", "name", "mode")
    assert values(data) == [("INFOMQNM", 7.5, "Quantum Mechanics", "online"), ("INFOMQNM", 7.5, "Quantum Mechanics",
                                                                                 "lecture"),
                            ("0851", 5, "Statistiek", "lecture")]
    assert data.locations == ("$.items[0]", "$.items[0]", "$.items[1]")
    assert data.location(4) == "$.items[1]"


def test_several_values_are_an_error_at_the_record_unless_the_field_collects(tmp_path: Path) -> None:
    fields = [FieldPaths("mode", ("modeOfDelivery",))]
    with pytest.raises(SheetError, match="the path 'mode' finds 2 values in this record") as error:
        read(JsonSource("catalogue", str(DATA / "ooapi-courses-page1.json"), tmp_path, records="$.items[*]"), fields)
    assert str(error.value.where).endswith("ooapi-courses-page1.json › $.items[0]")


def test_the_first_path_that_finds_a_value_wins(tmp_path: Path) -> None:
    data = read(JsonSource("c", "data/ooapi-courses-page1.json", Path(__file__).parent, records="$.items[*]"),
                ENGLISH_FIRST)
    assert values(data) == [("INFOMQNM", "Quantum Mechanics"), ("0851", "Statistiek")]
    assert data.file == "data/ooapi-courses-page1.json"


def test_json_lines_in_a_folder_read_one_record_a_line_in_file_order(tmp_path: Path) -> None:
    (tmp_path / "feed").mkdir()
    (tmp_path / "feed" / "b.jsonl").write_text('{"primaryCode": {"code": "B1"}}\n\n{"primaryCode": {"code": "B2"}}\n')
    (tmp_path / "feed" / "a.jsonl").write_text('{"primaryCode": {"code": "A1"}, "name": [{"value": "x"}]}\n')
    (tmp_path / "feed" / "notes.txt").write_text("not a feed")
    data = read(JsonSource("c", "feed", tmp_path), ENGLISH_FIRST)
    assert values(data) == [("A1", "x"), ("B1", None), ("B2", None)]
    assert data.locations == ("feed/a.jsonl › line 1 › $", "feed/b.jsonl › line 1 › $", "feed/b.jsonl › line 3 › $")
    assert read(JsonSource("c", "feed/b*.jsonl", tmp_path), ENGLISH_FIRST).locations[0] == "line 1 › $"


def test_a_records_path_naming_what_the_document_lacks_is_an_error_saying_what_it_holds(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match=r"records: path '\$\.course\[\*\]' finds nothing: the document has no "
                       r"'course' .*\(it holds pageSize, pageNumber, .*items\)"):
        read(JsonSource("c", str(DATA / "ooapi-courses-page1.json"), tmp_path, records="$.course[*]"), FIELDS)
    (tmp_path / "nested.json").write_text('{"data": {"total": 0, "itemz": [{"primaryCode": {"code": "A"}}]}}')
    with pytest.raises(SheetError, match=r"has no 'items' .*\(it holds total, itemz\) \(did you mean 'itemz'\?\)"):
        read(JsonSource("c", "nested.json", tmp_path, records="$.data.items[*]"), FIELDS)
    with pytest.raises(SheetError, match="has no 'course'"):
        read(JsonSource("c", "nested.json", tmp_path, records="$..course"), FIELDS)


def test_the_names_a_document_holds_are_cut_short_in_the_message_but_all_looked_through(tmp_path: Path) -> None:
    keys: dict[str, object] = {f"key{n:02d}": n for n in range(20)} | {"courses": []}
    (tmp_path / "wide.json").write_text(json.dumps(keys))
    with pytest.raises(SheetError, match=r"\(it holds key00, .*key11, \.\.\.\) \(did you mean 'courses'\?\)"):
        read(JsonSource("c", "wide.json", tmp_path, records="$.course[*]"), FIELDS)


@pytest.mark.parametrize(("document", "records"), [
    ('{"items": []}', "$.items[*]"), ("{}", "$.items[*]"), ("[]", "$[*]"),
    ('{"items": [{"code": "A", "kind": "x"}]}', "$.items[?@.kind == 'y']"),
    ('{"items": [{"offerings": []}]}', "$.items[*].offerings[*]")])
def test_a_records_path_to_an_empty_list_or_selecting_none_reads_no_record(
        tmp_path: Path, document: str, records: str) -> None:
    """Whether no record is an error is the plan's to tell, against the history (`allow_empty:`)."""
    (tmp_path / "empty.json").write_text(document)
    empty = read(JsonSource("c", "empty.json", tmp_path, records=records), FIELDS)
    assert empty.rows[1:] == () and empty.unfound == ("code", "load", "name", "mode")


def test_a_records_path_found_in_one_document_of_a_folder_is_no_error_where_another_lacks_it(
        tmp_path: Path) -> None:
    (tmp_path / "feed").mkdir()
    (tmp_path / "feed" / "a.json").write_text('{"other": 1}')
    (tmp_path / "feed" / "b.json").write_text('{"items": []}')
    assert read(JsonSource("c", "feed", tmp_path, records="$.items[*]"), FIELDS).rows[1:] == ()


def test_bad_files_are_errors_naming_them(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"items": [1,}')
    (tmp_path / "latin.json").write_bytes('{"code": "Café"}'.encode("latin-1"))
    (tmp_path / "object.json").write_text('{"code": {"nested": 1}}')
    with pytest.raises(SheetError, match="not valid JSON"):
        read(JsonSource("c", "bad.json", tmp_path), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="not UTF-8 text: byte 0xE9 at line 1"):
        read(JsonSource("c", "latin.json", tmp_path), ENGLISH_FIRST)
    (tmp_path / "latin.jsonl").write_bytes(b'{"code": "A"}\n' + '{"code": "Café"}'.encode("latin-1"))
    with pytest.raises(SheetError, match="not UTF-8 text: byte 0xE9 at line 2, column 14"):
        read(JsonSource("c", "latin.jsonl", tmp_path), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="finds an object, not a value"):
        read(JsonSource("c", "object.json", tmp_path), [FieldPaths("code", ("code",))])
    with pytest.raises(SheetError, match=r"no file or folder at missing\.json"):
        read(JsonSource("c", "missing.json", tmp_path), ENGLISH_FIRST)


def test_ooapi_pages_are_read_by_page_number_while_has_next_page(tmp_path: Path, feed: _Server) -> None:
    data = read(JsonSource("catalogue", url(feed, "/courses"), tmp_path, walk=over(), records="$.items[*]",
                           paging=Paging(page_param="pageNumber", more_path="$.hasNextPage")), ENGLISH_FIRST)
    assert values(data) == [("INFOMQNM", "Quantum Mechanics"), ("0851", "Statistiek"),
                            ("HIST2002", "History of Science")]
    assert feed.seen == ["/courses?pageNumber=1", "/courses?pageNumber=2"]
    assert data.locations[2] == "page 2 › $.items[0]"
    assert data.file == f"catalogue (json, {url(feed, '/courses')})"


def test_next_links_in_the_body_are_followed_and_the_total_is_checked(tmp_path: Path, feed: _Server) -> None:
    source = JsonSource("c", url(feed, "/linked"), tmp_path, walk=over(), records="$.items[*]",
                        paging=Paging(next_path="$.links.next"), total="$.total")
    assert len(read(source, ENGLISH_FIRST).rows) == 4
    changed = JsonSource("c", url(feed, "/linked?total=4"), tmp_path, walk=over(), records="$.items[*]",
                         paging=Paging(next_path="$.links.next"), total="$.total")
    with pytest.raises(SheetError, match="the feed says it holds 4 records"):
        read(changed, ENGLISH_FIRST)


def test_a_link_header_names_the_next_page(tmp_path: Path, feed: _Server) -> None:
    data = read(JsonSource("c", url(feed, "/header"), tmp_path, walk=over(), paging=Paging(next_header="Link")),
                ENGLISH_FIRST)
    assert [row.values[0] for row in data.rows[1:]] == ["INFOMQNM", "0851", "HIST2002"]


def test_client_credentials_get_a_token_sent_with_every_page(tmp_path: Path, feed: _Server) -> None:
    access = FeedAccess(credentials=ClientCredentials(url(feed, "/token"), "loader", Secret(SECRET)))
    data = read(JsonSource("c", url(feed, "/secured/courses"), tmp_path, records="$.items[*]", walk=over(access),
                           paging=Paging(page_param="pageNumber", more_path="$.hasNextPage")), ENGLISH_FIRST)
    assert len(data.rows) == 4
    wrong = FeedAccess(credentials=ClientCredentials(url(feed, "/token"), "loader", Secret("wrong-secret-1")))
    with pytest.raises(Exception, match="refused the client") as error:
        read(JsonSource("c", url(feed, "/secured/courses"), tmp_path, walk=over(wrong)), ENGLISH_FIRST)
    assert SECRET not in str(error.value)


def test_headers_from_the_environment_are_sent(tmp_path: Path, feed: _Server) -> None:
    access = FeedAccess(headers={"Authorization": Secret(f"Bearer {TOKEN}")})
    assert len(read(JsonSource("c", url(feed, "/secured/courses"), tmp_path, records="$.items[*]", walk=over(access)),
                    ENGLISH_FIRST).rows) == 3
    with pytest.raises(SheetError, match="answered 401") as error:
        read(JsonSource("c", url(feed, "/secured/courses"), tmp_path, walk=over()), ENGLISH_FIRST)
    assert "auth:" in str(error.value)


def test_a_429_is_retried_after_the_wait_it_asks_for(tmp_path: Path, feed: _Server) -> None:
    data = read(JsonSource("c", url(feed, "/busy"), tmp_path, walk=over(), records="$.items[*]"), ENGLISH_FIRST)
    assert len(data.rows) == 2 and feed.seen == ["/busy", "/busy"]


def test_feed_failures_are_errors_naming_the_source(tmp_path: Path, feed: _Server) -> None:
    quick = FeedAccess(attempts=2, wait_initial_s=0.01, timeout_s=2)
    with pytest.raises(SheetError, match=r"cannot read http://127\.0\.0\.1:\d+/courses: the connection was refused"):
        read(JsonSource("c", f"http://127.0.0.1:{closed_port()}/courses", tmp_path, walk=over(quick)), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="answered 404"):
        read(JsonSource("c", url(feed, "/nowhere?token=hidden"), tmp_path, walk=over()), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="not UTF-8 text") as error:
        read(JsonSource("c", url(feed, "/latin1"), tmp_path, walk=over()), ENGLISH_FIRST)
    assert "page 1" in str(error.value)
    with pytest.raises(SheetError, match="names a next page already read"):
        read(JsonSource("c", url(feed, "/loop"), tmp_path, walk=over(), records="$.items[*]",
                        paging=Paging(next_path="$.links.next")), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="must use https://"):
        read(JsonSource("c", "http://example.org/courses", tmp_path, walk=over()), ENGLISH_FIRST)
    with pytest.raises(SheetError, match="a URL source is not read offline"):
        read(JsonSource("c", url(feed, "/courses"), tmp_path), ENGLISH_FIRST)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=3),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from("ab"), inner,
                                                                                 max_size=2), max_leaves=8)


# Values at the edges of the cell rules, then any JSON.
_VALUES = st.sampled_from(["", " ", "x", 0, 10, 10.0, 2.5, True, None, [], ["x", "y"], [""], {"k": 1}]) | _JSON


@given(record=st.dictionaries(st.sampled_from("ab"), _VALUES, max_size=2) | _JSON)
def test_a_one_key_path_reads_as_the_general_walk_does(record: object) -> None:
    one_key = _field_reader(FieldPaths("f", ("a",)), "w")
    walked = _field_reader(FieldPaths("f", ("a", "a")), "w")  # two paths: the general reader, same meaning

    def outcome(reader: Callable[[object], Sequence[object]]) -> object:
        try:
            return reader(record)
        except _ObjectFound as found:
            return ("object", found.name)

    assert outcome(one_key) == outcome(walked)


@given(records=st.lists(st.dictionaries(st.sampled_from("abc"), _VALUES, max_size=3) | _JSON, max_size=4))
def test_records_looked_up_at_once_give_the_rows_read_field_by_field(records: list[object]) -> None:
    fields = [FieldPaths("a", ("a",)), FieldPaths("b", ("b",), collect=True)]

    def outcome(fast: bool) -> object:
        builder = RowsBuilder("w", fields)
        maker = _RowMaker(fields, None, builder, fast=fast)
        try:
            for number, record in enumerate(records):
                maker.take(record, f"{number} › ")
        except SheetError as error:
            return str(error)
        return builder.done()

    assert outcome(fast=True) == outcome(fast=False)


def test_record_paths_lists_the_value_paths_of_the_first_records_in_order(tmp_path: Path) -> None:
    source = JsonSource("c", str(DATA / "ooapi-courses-page1.json"), tmp_path, records="$.items[*]")
    paths = record_paths(source)
    assert paths[:5] == ("courseId", "primaryCode.codeType", "primaryCode.code", "name[0].language", "name[0].value")
    assert "modeOfDelivery[0]" in paths and "studyLoad.value" in paths
    (tmp_path / "odd.jsonl").write_text('{"a": {"b": null, "c.d": 1}, "e": []}\n{"f": [{"g": 2}], "a": {"b": 3}}\n')
    assert record_paths(JsonSource("c", "odd.jsonl", tmp_path)) == ("f[0].g", "a.b")
    assert record_paths(JsonSource("c", "odd.jsonl", tmp_path), records=1) == ()
