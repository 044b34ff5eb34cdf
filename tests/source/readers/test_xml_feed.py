"""The XML reader over XCRI-CAP- and ELMO-shaped files, a loopback URL, and hostile XML."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from helpers.feeds import serving

from loader.api.feeds import walk_pages
from loader.errors import SheetError
from loader.source.readers.record_rows import FieldPaths, RecordRows
from loader.source.readers.xml_feed import XmlSource, document_namespaces, read, record_paths

DATA = Path(__file__).with_name("data")
XCRI = {"x": "http://xcri.org/profiles/1.2/catalog", "dc": "http://purl.org/dc/elements/1.1/",
        "mlo": "http://purl.org/net/mlo", "xsi": "http://www.w3.org/2001/XMLSchema-instance", "cdp": "http://xcri.co.uk"}
ELMO = {"e": "https://github.com/emrex-eu/elmo-schemas/tree/v1"}
COURSE_FIELDS = [
    FieldPaths("code", ("dc:identifier[@xsi:type='cdp:internalID']",)),
    FieldPaths("name", ("dc:title",)),
    FieldPaths("start", ("x:presentation[1]/mlo:start/@dtf",)),
    FieldPaths("provider", ("../dc:title",)),
    FieldPaths("ukprn", ("../dc:identifier[@xsi:type='cdp:ukprn']",)),
    FieldPaths("modes", ("x:presentation/x:studyMode/@identifier",), collect=True),
]
RESULT_FIELDS = [
    FieldPaths("course", ("e:identifier[@type='local']",)),
    FieldPaths("title", ("e:title[@xml:lang='en']", "e:title[1]")),
    FieldPaths("date", ("e:specifies/e:learningOpportunityInstance/e:date",)),
    FieldPaths("result", ("e:specifies/e:learningOpportunityInstance/e:resultLabel",)),
    FieldPaths("programme", ("../../e:identifier[@type='local']",)),
    FieldPaths("issuer", ("../../../e:issuer/e:identifier[@type='schac']",)),
    FieldPaths("learner", ("../../../../e:learner/e:identifier[@type='esi']",)),
]


def rows(data: RecordRows) -> list[tuple[object, ...]]:
    return [row.values for row in data.rows[1:]]


def test_xcri_cap_courses_read_with_predicates_ancestors_and_collected_values(tmp_path: Path) -> None:
    data = read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//x:course", XCRI), COURSE_FIELDS)
    assert data.rows[0].values == ("code", "name", "start", "provider", "ukprn", "modes")
    assert rows(data) == [
        ("PG-DATA-01", "MSc Data Science", "2027-09-20", "University of Example", "10000001", "FT"),
        ("PG-DATA-01", "MSc Data Science", "2027-09-20", "University of Example", "10000001", "PT"),
        ("PG-HIST-02", "MA History", "2027-09-27", "University of Example", "10000001", "FT"),
    ]
    assert data.locations == ("/x:catalog/x:provider/x:course[1]",) * 2 + ("/x:catalog/x:provider/x:course[2]",)


def test_an_absolute_records_path_and_a_position_predicate(tmp_path: Path) -> None:
    data = read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "/x:catalog/x:provider/x:course[2]", XCRI),
                COURSE_FIELDS[:2])
    assert rows(data) == [("PG-HIST-02", "MA History")]


def test_several_values_are_an_error_at_the_record_unless_the_field_collects(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="the path 'starts' finds 2 values in this record") as error:
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//x:course", XCRI),
             [FieldPaths("starts", ("x:presentation/mlo:start/@dtf",))])
    assert str(error.value.where).endswith("xcri-cap.xml › /x:catalog/x:provider/x:course[1]")


def test_elmo_results_reach_their_programme_issuer_and_learner_and_the_first_title_found_wins(
        tmp_path: Path) -> None:
    data = read(XmlSource("elmo", str(DATA / "elmo.xml"), tmp_path, "//e:hasPart/e:learningOpportunitySpecification",
                          ELMO), RESULT_FIELDS)
    learner = "urn:schac:personalUniqueCode:int:esi:example.nl:s1234567"
    assert rows(data) == [
        ("NS-101", "Mechanics", "2020-01-20", "4", "BSC-PHYS", "example.nl", learner),
        ("NS-101", "Mechanics", "2020-06-30", "8", "BSC-PHYS", "example.nl", learner),
        ("NS-204", "Thermodynamica", "2021-01-25", "7", "BSC-PHYS", "example.nl", learner),
    ]
    assert data.unfound == ()


def test_a_folder_reads_one_file_a_learner_in_name_order(tmp_path: Path) -> None:
    (tmp_path / "learners").mkdir()
    for name in ("b.xml", "a.xml"):
        (tmp_path / "learners" / name).write_bytes((DATA / "elmo.xml").read_bytes())
    data = read(XmlSource("elmo", "learners", tmp_path, "//e:hasPart/e:learningOpportunitySpecification", ELMO),
                RESULT_FIELDS[:1])
    assert len(data.rows) == 7 and data.locations[0].startswith("learners/a.xml › /e:elmo/e:report")


def test_a_records_path_naming_an_element_the_document_lacks_is_an_error_saying_what_it_holds(
        tmp_path: Path) -> None:
    with pytest.raises(SheetError, match=r"records: path '//x:module' finds nothing: the document has no 'x:module'"
                       r".*\(it holds x:catalog, .*x:course"):
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//x:module", XCRI), COURSE_FIELDS)
    with pytest.raises(SheetError, match=r"has no 'x:catalogue' .*\(it holds x:catalog\) "
                       r"\(did you mean 'x:catalog'\?\)"):
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "/x:catalogue/x:provider/x:course", XCRI),
             COURSE_FIELDS)


@pytest.mark.parametrize(("document", "records"), [
    ("<catalog/>", "//course"), ("<catalog><provider/></catalog>", "/catalog/provider/course"),
    ("<catalog><course type='ug'/></catalog>", "//course[@type='pg']")])
def test_an_empty_document_an_empty_holder_or_a_predicate_selecting_none_reads_no_record(
        tmp_path: Path, document: str, records: str) -> None:
    """Whether no record is an error is the plan's to tell, against the history (`allow_empty:`)."""
    (tmp_path / "empty.xml").write_text(document)
    empty = read(XmlSource("feed", "empty.xml", tmp_path, records, XCRI), COURSE_FIELDS)
    assert empty.rows[1:] == () and empty.locations == ()


def test_paths_the_reader_cannot_read_are_errors_saying_why(tmp_path: Path) -> None:
    with pytest.raises(SheetError, match="uses the prefix 'q', which namespaces: does not declare"):
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//q:course", XCRI), COURSE_FIELDS)
    with pytest.raises(SheetError, match="can name elements, positions and attributes only"):
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//x:course[dc:title='x']", XCRI), COURSE_FIELDS)
    with pytest.raises(SheetError, match=r"an attribute \(@\) can only be the last step"):
        read(XmlSource("feed", str(DATA / "xcri-cap.xml"), tmp_path, "//x:course", XCRI),
             [FieldPaths("x", ("@a/dc:title",))])


BOMB = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<catalog><course><title>&lol3;</title></course></catalog>"""
XXE = """<?xml version="1.0"?>
<!DOCTYPE catalog [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<catalog><course><title>&secret;</title></course></catalog>"""


@pytest.mark.parametrize("text", [BOMB, XXE], ids=["bomb", "external-entity"])
def test_a_document_type_with_entities_is_refused(tmp_path: Path, text: str) -> None:
    (tmp_path / "hostile.xml").write_text(text)
    with pytest.raises(SheetError, match="declares a document type") as error:
        read(XmlSource("feed", "hostile.xml", tmp_path, "//course"), [FieldPaths("t", ("title",))])
    assert "root:" not in str(error.value) and error.value.where == "hostile.xml"


def test_invalid_and_wrongly_encoded_xml_are_errors_at_their_line(tmp_path: Path) -> None:
    (tmp_path / "broken.xml").write_text("<catalog>\n<course><title>x</course></catalog>")
    (tmp_path / "latin.xml").write_bytes("<catalog>\n<course><title>Café</title></course></catalog>".encode("latin-1"))
    (tmp_path / "declared.xml").write_bytes('<?xml version="1.0" encoding="ISO-8859-1"?>\n'
                                            '<catalog><course><title>Café</title></course></catalog>'.encode("latin-1"))
    with pytest.raises(SheetError, match="not well-formed XML: line 2, column"):
        read(XmlSource("feed", "broken.xml", tmp_path, "//course"), [FieldPaths("t", ("title",))])
    with pytest.raises(SheetError, match="not well-formed XML: line 2") as error:
        read(XmlSource("feed", "latin.xml", tmp_path, "//course"), [FieldPaths("t", ("title",))])
    assert "UTF-8 without one" in str(error.value)
    assert rows(read(XmlSource("feed", "declared.xml", tmp_path, "//course"), [FieldPaths("t", ("title",))])) == [
        ("Café",)]


def test_nesting_deeper_than_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOADER_MAX_XML_DEPTH", "5")
    (tmp_path / "deep.xml").write_text("<a>" * 8 + "</a>" * 8)
    with pytest.raises(SheetError, match="nested more than 5 levels deep"):
        read(XmlSource("feed", "deep.xml", tmp_path, "//a"), [FieldPaths("t", ("title",))])


def test_records_read_are_let_go_of_while_streaming(tmp_path: Path) -> None:
    import tracemalloc

    courses = "".join(f"<course><code>C{i}</code><title>{'t' * 4000}</title></course>" for i in range(5_000))
    (tmp_path / "big.xml").write_text(f"<catalog><provider><name>P</name>{courses}</provider></catalog>")
    tracemalloc.start()
    data = read(XmlSource("feed", "big.xml", tmp_path, "//course"), [FieldPaths("code", ("code",)),
                                                                      FieldPaths("provider", ("../name",))])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(data.rows) == 5_001 and data.rows[-1].values == ("C4999", "P")
    # The 5,000 titles kept as elements would take 20 MB; the rows hold only the codes, and a
    # megabyte is read at a time.
    assert peak < 8 * 1024 * 1024


class _Catalogue(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = (DATA / "xcri-cap.xml").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def catalogue() -> Iterator[str]:
    with serving(_Catalogue) as port:
        yield f"http://127.0.0.1:{port}/xcri.xml"


def test_a_url_is_read_as_a_file_is(tmp_path: Path, catalogue: str) -> None:
    data = read(XmlSource("feed", catalogue, tmp_path, "//x:course", XCRI, walk=partial(walk_pages)), COURSE_FIELDS[:2])
    assert rows(data) == [("PG-DATA-01", "MSc Data Science"), ("PG-HIST-02", "MA History")]
    assert data.file == f"feed (xml, {catalogue})"
    with pytest.raises(SheetError, match="a URL source is not read offline"):
        read(XmlSource("feed", catalogue, tmp_path, "//x:course", XCRI), COURSE_FIELDS[:2])


def test_record_paths_lists_elements_and_attributes_with_positions_where_siblings_repeat(tmp_path: Path) -> None:
    (tmp_path / "feed.xml").write_text(
        '<catalog xmlns="urn:c" xmlns:dc="urn:dc"><course><dc:title>A</dc:title><dc:id>1</dc:id>'
        '<dc:id kind="x">2</dc:id><p><start dtf="2027"> </start></p></course>'
        '<course><dc:title>B</dc:title><p><start>Feb</start></p><p><start>Jul</start></p>'
        '<d><div xmlns="http://www.w3.org/1999/xhtml"><p>rich</p></div></d></course></catalog>', encoding="utf-8")
    namespaces = document_namespaces(tmp_path / "feed.xml", "feed.xml")
    assert namespaces == {"dc": "urn:dc", "x": "urn:c"}
    paths = record_paths(XmlSource("feed", "feed.xml", tmp_path, "//x:course", namespaces))
    assert paths == ("dc:title", "dc:id[1]", "dc:id[2]", "dc:id[2]/@kind", "x:p[1]/x:start/@dtf", "x:p[1]/x:start",
                     "x:p[2]/x:start", "x:d")
    assert record_paths(XmlSource("feed", "feed.xml", tmp_path, "//x:course", namespaces), records=1)[-1] == \
        "x:p/x:start/@dtf"
