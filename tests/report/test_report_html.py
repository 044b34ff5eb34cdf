"""The HTML report as a file: self-contained, values only as escaped JSON, PII masked.

How it behaves (chart, filters, sorting, details, no requests) is tested in a real browser in
test_report_browser.py.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from helpers.report import review_plan

from loader.plan.model import Plan
from loader.report.html import render_html, write_html


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.data: dict[str, str] = {}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = dict(attrs).get("id") if tag == "script" else None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.data[self._in] = self.data.get(self._in, "") + data


def _parsed(text: str) -> _Collect:
    parsed = _Collect()
    parsed.feed(text)
    return parsed


def test_the_html_report_is_one_self_contained_file(plan: Plan, tmp_path: Path) -> None:
    write_html(plan, tmp_path / "plan.html")
    text = (tmp_path / "plan.html").read_text(encoding="utf-8")
    parsed = _parsed(text)
    assert not re.search(r"https?://", text)  # nothing fetched: no CDN, no fonts, no base_url
    assert all("src" not in attrs and "href" not in attrs for _, attrs in parsed.tags)
    scripts = [attrs for tag, attrs in parsed.tags if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "plan-data"},
                       {"type": "application/json", "id": "not-managed-data"}, {}]
    assert "<style>" in text and "default-src 'none'" in text and "<svg" in text


def test_records_travel_as_json_the_page_cannot_mistake_for_markup() -> None:
    text = render_html(review_plan())
    parsed = _parsed(text)
    raw = parsed.data["plan-data"]
    assert "<" not in raw and ">" not in raw and "&" not in raw and "\r" not in raw
    data = json.loads(raw)
    schools = data["blocks"][0]
    evil = next(r for r in schools["records"] if r["k"] == "EVIL")
    assert "<script>alert(1)</script>" in evil["f"][1][2] and "\\r\\n" in evil["f"][1][2]
    assert "\x1b" not in raw and "u001b[31mred" in raw  # escape codes shown, never sent
    # existing records first, then blocked, creates, unchanged; not managed here apart, lazily
    assert [r["a"] for r in schools["records"]] == ["update", "blocked", "create", "create", "create", "unchanged"]
    assert json.loads(parsed.data["not-managed-data"])[0] == [["GONE", "s-4"]]
    assert "<" not in parsed.data["not-managed-data"]
    assert "<script>alert" not in text.split('id="plan-data"')[0]


def test_values_are_escaped_and_pii_is_masked(plan: Plan) -> None:
    text = render_html(plan)
    assert "<b>Engineering</b>" not in text and "\\u003cb\\u003eEngineering\\u003c/b\\u003e" in text
    assert "secret" not in text and "old@example.com" not in text and "‹hidden›" in text
