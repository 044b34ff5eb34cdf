"""Renderers of plans and results: terminal, Markdown, JSON, HTML, results workbook."""

from __future__ import annotations

from pathlib import Path

from loader.plan.model import Plan


def write_review_files(plan: Plan, *, report: Path | None, html: Path | None) -> list[Path]:
    """The Markdown report (every part) and the HTML page asked for; returns the paths written."""
    from loader.report.html import write_html
    from loader.report.markdown import write_markdown

    written: list[Path] = []
    if report:
        written += write_markdown(plan, report)
    if html:
        write_html(plan, html)
        written.append(html)
    return written
