"""The HTML report: one self-contained file, every value escaped, PII masked, sortable and filterable."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

from loader.plan.model import Plan
from loader.report.html import render_html, write_html


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "tr" and "data-action" in dict(attrs):
            self.rows += 1


def test_the_html_report_is_one_self_contained_file(plan: Plan, tmp_path: Path) -> None:
    write_html(plan, tmp_path / "plan.html")
    text = (tmp_path / "plan.html").read_text(encoding="utf-8")
    parsed = _Collect()
    parsed.feed(text)
    assert not re.search(r"https?://", text)  # nothing fetched: no CDN, no fonts, no base_url
    assert all("src" not in attrs and "href" not in attrs for _, attrs in parsed.tags)
    assert [t for t, _ in parsed.tags].count("script") == 1 and "<style>" in text
    assert "default-src 'none'" in text


def test_every_change_and_finding_is_a_row_with_its_action_for_filtering(plan: Plan) -> None:
    parsed = _Collect()
    parsed.feed(render_html(plan))
    expected = sum(len(r.changes) + len(r.findings) + bool(r.status_path) for r in plan.records()
                   if r.has_changes or r.findings)
    assert parsed.rows == expected
    actions = {attrs["data-action"] for tag, attrs in parsed.tags if tag == "tr" and "data-action" in attrs}
    assert actions == {"create", "update", "warning", "error"}
    assert "localeCompare" in render_html(plan) and 'id="filter"' in render_html(plan)


def test_values_are_escaped_and_pii_is_masked(plan: Plan) -> None:
    text = render_html(plan)
    assert "<b>Engineering</b>" not in text and "&lt;b&gt;Engineering&lt;/b&gt;" in text
    assert "secret" not in text and "old@example.com" not in text and "‹hidden›" in text
